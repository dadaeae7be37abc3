// The GraphQL face's error mapping: a MatrixError becomes a GraphQLError whose extensions carry the Matrix
// `errcode` and the error's extra fields (soft_logout, retry_after_ms, UIA flows ...); anything else becomes
// M_UNKNOWN "Internal server error" (logged, never shown). Applied to every resolver as a global middleware.
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import type { MiddlewareFn } from "type-graphql";
import { MatrixError } from "../domain/errors.ts";
import type { GraphqlContext } from "./context.ts";
import { graphqlErrorCode, matrixErrorExtensions } from "./error-extensions.ts";

export { matrixErrorExtensions };

/** Maps anything a resolver threw to a GraphQLError that is safe to send. */
export function toGraphqlError(err: unknown, log?: { error(obj: object, msg: string): void }): GraphQLError {
  if (err instanceof MatrixError) return new GraphQLError(err.message, { extensions: matrixErrorExtensions(err) });
  if (err instanceof GraphQLError) return err;
  log?.error({ err }, "unhandled error in a GraphQL resolver");
  return new GraphQLError("Internal server error", { extensions: { errcode: "M_UNKNOWN", code: "INTERNAL_SERVER_ERROR" } });
}

/** type-graphql global middleware: every resolver's failure goes through `toGraphqlError`. */
export const MapErrors: MiddlewareFn<GraphqlContext> = async ({ context }, next) => {
  try {
    return await next();
  } catch (err) {
    throw toGraphqlError(err, context?.s?.log);
  }
};

/**
 * Final shaping of a formatted error, shared by both transports. Errors with an errcode get the `code` of
 * that errcode (error-extensions.ts) in place of the generic one Apollo adds (INTERNAL_SERVER_ERROR would
 * be wrong for M_FORBIDDEN), and lose any stack trace. An
 * execution error without one (graphql-js itself failed, e.g. serializing a value) is masked as M_UNKNOWN.
 * Request errors (parse, validation, variable coercion: no `path`) keep their message and Apollo's `code`,
 * and gain the errcode of a malformed request (REQUEST_ERRCODES), so every error carries both.
 */
/** The errcode of a request error by Apollo's code: a malformed query or variables is M_BAD_JSON. */
const REQUEST_ERRCODES: Record<string, string> = {
  GRAPHQL_PARSE_FAILED: "M_BAD_JSON",
  GRAPHQL_VALIDATION_FAILED: "M_BAD_JSON",
  BAD_USER_INPUT: "M_BAD_JSON",
  BAD_REQUEST: "M_BAD_JSON",
  OPERATION_RESOLUTION_FAILURE: "M_BAD_JSON",
  PERSISTED_QUERY_NOT_FOUND: "M_UNRECOGNIZED",
  PERSISTED_QUERY_NOT_SUPPORTED: "M_UNRECOGNIZED",
};

export function errorFormatter(log?: { error(obj: object, msg: string): void }) {
  return (formatted: GraphQLFormattedError): GraphQLFormattedError => {
    const { stacktrace: _stack, ...ext } = formatted.extensions ?? {};
    if (typeof ext.errcode === "string") {
      // A request error keeps Apollo's code (GRAPHQL_VALIDATION_FAILED, PERSISTED_QUERY_NOT_FOUND ...).
      if (typeof ext.code !== "string" || ext.code === "INTERNAL_SERVER_ERROR" || formatted.path) ext.code = graphqlErrorCode(ext.errcode);
      return { ...formatted, extensions: ext };
    }
    if (formatted.path) {
      log?.error({ error: formatted }, "unmapped GraphQL execution error");
      return { message: "Internal server error", locations: formatted.locations, path: formatted.path, extensions: { errcode: "M_UNKNOWN", code: "INTERNAL_SERVER_ERROR" } };
    }
    const errcode = (typeof ext.code === "string" && REQUEST_ERRCODES[ext.code]) || "M_UNKNOWN";
    return { ...formatted, extensions: { ...ext, errcode } };
  };
}
