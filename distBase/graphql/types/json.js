// The JSONObject scalar of the GraphQL face (graphql-scalars' JSONObject, same name and description) held
// to the JSON nesting bound every face shares (src/domain/json-limits.ts): an input nested deeper than
// MAX_JSON_DEPTH is refused with errcode M_BAD_JSON. Output (event content is already pruned to the bound,
// wrapped in a few levels of envelope) is refused only past SERIALIZE_DEPTH, which graphql-ws's recursive
// JSON.stringify survives with room to spare: data stored before the bound cannot crash a socket.
import { GraphQLError, GraphQLScalarType } from "graphql";
import { GraphQLJSONObject as Base } from "graphql-scalars";
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../../domain/json-limits.js";
const SERIALIZE_DEPTH = 1000;
function bounded(value, limit = MAX_JSON_DEPTH) {
    if (exceedsJsonDepth(value, limit)) {
        throw new GraphQLError(`JSON nests objects and arrays more than ${limit} levels deep`, { extensions: { errcode: "M_BAD_JSON" } });
    }
    return value;
}
export const GraphQLJSONObject = new GraphQLScalarType({
    ...Base.toConfig(),
    serialize: (value) => bounded(Base.serialize(value), SERIALIZE_DEPTH),
    parseValue: (value) => Base.parseValue(bounded(value)),
    parseLiteral: (ast, variables) => bounded(Base.parseLiteral(ast, variables)),
});
