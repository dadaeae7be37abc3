// The JSONObject and JSON scalars of the GraphQL face (graphql-scalars', same names and descriptions) held
// to the JSON nesting bound every face shares (src/domain/json-limits.ts): an input nested deeper than
// MAX_JSON_DEPTH is refused with errcode M_BAD_JSON. Output (event content is already pruned to the bound,
// wrapped in a few levels of envelope) is refused only past SERIALIZE_DEPTH, which graphql-ws's recursive
// JSON.stringify survives with room to spare: data stored before the bound cannot crash a socket.
import { GraphQLError, GraphQLScalarType, type ValueNode } from "graphql";
import { GraphQLJSON as JsonBase, GraphQLJSONObject as Base } from "graphql-scalars";
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../../domain/json-limits.ts";

const SERIALIZE_DEPTH = 1000;

function bounded<T>(value: T, limit = MAX_JSON_DEPTH): T {
  if (exceedsJsonDepth(value, limit)) {
    throw new GraphQLError(`JSON nests objects and arrays more than ${limit} levels deep`, { extensions: { errcode: "M_BAD_JSON" } });
  }
  return value;
}

export const GraphQLJSONObject = new GraphQLScalarType({
  ...Base.toConfig(),
  serialize: (value: unknown) => bounded(Base.serialize(value), SERIALIZE_DEPTH),
  parseValue: (value: unknown) => Base.parseValue(bounded(value)),
  parseLiteral: (ast: ValueNode, variables?: Record<string, unknown> | null) => bounded(Base.parseLiteral(ast, variables)),
});

/** The JSON scalar (graphql-scalars' JSON: any JSON value), held to the same nesting bound. */
export const GraphQLJSON = new GraphQLScalarType({
  ...JsonBase.toConfig(),
  serialize: (value: unknown) => bounded(JsonBase.serialize(value), SERIALIZE_DEPTH),
  parseValue: (value: unknown) => JsonBase.parseValue(bounded(value)),
  parseLiteral: (ast: ValueNode, variables?: Record<string, unknown> | null) => bounded(JsonBase.parseLiteral(ast, variables)),
});
