// Custom scalars of the GraphQL face. `Timestamp`: a point in time as integer milliseconds since the Unix
// epoch, the unit of every Matrix timestamp (origin_server_ts, last_seen_ts). Durations stay Float ms.
import { GraphQLError, GraphQLScalarType, Kind } from "graphql";
function asTimestamp(v) {
    if (typeof v === "number" && Number.isSafeInteger(v))
        return v;
    throw new GraphQLError(`Timestamp must be an integer number of milliseconds, got ${JSON.stringify(v)}`);
}
export const Timestamp = new GraphQLScalarType({
    name: "Timestamp",
    description: "A point in time: integer milliseconds since the Unix epoch (as Matrix timestamps are).",
    serialize: asTimestamp,
    parseValue: asTimestamp,
    parseLiteral(ast) {
        if (ast.kind !== Kind.INT)
            throw new GraphQLError("Timestamp must be an integer literal");
        return asTimestamp(Number(ast.value));
    },
});
