// The extensions a MatrixError carries in a GraphQL error: `errcode` plus the spec's extra fields of the
// REST body, and `code`, a stable GraphQL-style class of the error (Apollo's names where Apollo has one:
// UNAUTHENTICATED, FORBIDDEN, BAD_USER_INPUT, INTERNAL_SERVER_ERROR) mapped from the errcode by one table
// that names every errcode of src/domain/errors.ts (the type makes a missing one a compile error).
// Clients switch on `code` for the kind of failure and read `errcode` for the Matrix detail.
// Apart from errors.ts so the light part of the face (server.ts) shapes errors without graphql-js.
import type { ErrCode, MatrixError } from "../domain/errors.ts";

/** The classes `extensions.code` takes for a Matrix error. */
export type GraphqlErrorCode =
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "BAD_USER_INPUT"
  | "NOT_FOUND"
  | "CONFLICT"
  | "RATE_LIMITED"
  | "TOO_LARGE"
  | "NOT_SUPPORTED"
  | "UNAVAILABLE"
  | "INTERNAL_SERVER_ERROR";

/** extensions.code per errcode: every errcode the domain may raise. */
export const GRAPHQL_ERROR_CODES: Readonly<Record<ErrCode, GraphqlErrorCode>> = {
  M_FORBIDDEN: "FORBIDDEN",
  M_UNKNOWN_TOKEN: "UNAUTHENTICATED",
  M_MISSING_TOKEN: "UNAUTHENTICATED",
  M_USER_LOCKED: "UNAUTHENTICATED",
  M_USER_SUSPENDED: "FORBIDDEN",
  M_BAD_JSON: "BAD_USER_INPUT",
  M_NOT_JSON: "BAD_USER_INPUT",
  M_NOT_FOUND: "NOT_FOUND",
  M_LIMIT_EXCEEDED: "RATE_LIMITED",
  M_UNRECOGNIZED: "NOT_SUPPORTED",
  M_UNKNOWN: "INTERNAL_SERVER_ERROR",
  M_UNAUTHORIZED: "UNAUTHENTICATED",
  M_USER_DEACTIVATED: "FORBIDDEN",
  M_EXPIRED_ACCOUNT: "FORBIDDEN",
  M_USER_IN_USE: "CONFLICT",
  M_INVALID_USERNAME: "BAD_USER_INPUT",
  M_ROOM_IN_USE: "CONFLICT",
  M_INVALID_ROOM_STATE: "BAD_USER_INPUT",
  M_THREEPID_IN_USE: "CONFLICT",
  M_THREEPID_NOT_FOUND: "NOT_FOUND",
  M_THREEPID_AUTH_FAILED: "FORBIDDEN",
  M_THREEPID_DENIED: "FORBIDDEN",
  M_SERVER_NOT_TRUSTED: "FORBIDDEN",
  M_UNSUPPORTED_ROOM_VERSION: "NOT_SUPPORTED",
  M_INCOMPATIBLE_ROOM_VERSION: "NOT_SUPPORTED",
  M_BAD_STATE: "CONFLICT",
  M_GUEST_ACCESS_FORBIDDEN: "FORBIDDEN",
  M_CAPTCHA_NEEDED: "FORBIDDEN",
  M_CAPTCHA_INVALID: "BAD_USER_INPUT",
  M_MISSING_PARAM: "BAD_USER_INPUT",
  M_INVALID_PARAM: "BAD_USER_INPUT",
  M_TOO_LARGE: "TOO_LARGE",
  M_EXCLUSIVE: "CONFLICT",
  M_RESOURCE_LIMIT_EXCEEDED: "RATE_LIMITED",
  M_USER_LIMIT_EXCEEDED: "RATE_LIMITED",
  M_CANNOT_LEAVE_SERVER_NOTICE_ROOM: "FORBIDDEN",
  M_THREEPID_MEDIUM_NOT_SUPPORTED: "NOT_SUPPORTED",
  M_WEAK_PASSWORD: "BAD_USER_INPUT",
  M_PASSWORD_TOO_SHORT: "BAD_USER_INPUT",
  M_PASSWORD_NO_DIGIT: "BAD_USER_INPUT",
  M_PASSWORD_NO_UPPERCASE: "BAD_USER_INPUT",
  M_PASSWORD_NO_LOWERCASE: "BAD_USER_INPUT",
  M_PASSWORD_NO_SYMBOL: "BAD_USER_INPUT",
  M_PASSWORD_IN_DICTIONARY: "BAD_USER_INPUT",
  M_BAD_ALIAS: "BAD_USER_INPUT",
  M_WRONG_ROOM_KEYS_VERSION: "CONFLICT",
  M_UNABLE_TO_AUTHORISE_JOIN: "UNAVAILABLE",
  M_UNABLE_TO_GRANT_JOIN: "UNAVAILABLE",
  M_DUPLICATE_ANNOTATION: "CONFLICT",
  M_NOT_YET_UPLOADED: "UNAVAILABLE",
  M_CANNOT_OVERWRITE_MEDIA: "CONFLICT",
  M_UNKNOWN_POS: "BAD_USER_INPUT",
  M_INVALID_SIGNATURE: "UNAUTHENTICATED",
  M_UNKNOWN_DEVICE: "NOT_FOUND",
  M_APPSERVICE_LOGIN_UNSUPPORTED: "NOT_SUPPORTED",
  M_URL_NOT_SET: "BAD_USER_INPUT",
  M_PROFILE_TOO_LARGE: "TOO_LARGE",
  M_KEY_TOO_LARGE: "TOO_LARGE",
  M_BAD_STATUS: "UNAVAILABLE",
  M_CONNECTION_FAILED: "UNAVAILABLE",
  M_CONNECTION_TIMEOUT: "UNAVAILABLE",
  "ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE": "UNAVAILABLE",
  "ORG.MATRIX.MSC4140_DELAY_TOO_LARGE": "BAD_USER_INPUT",
  M_INVITE_BLOCKED: "FORBIDDEN",
  "IO.ELEMENT.MSC4306.M_NOT_IN_THREAD": "BAD_USER_INPUT",
  "IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION": "CONFLICT",
  invalid_request: "BAD_USER_INPUT",
  invalid_client: "UNAUTHENTICATED",
  invalid_grant: "FORBIDDEN",
  unauthorized_client: "FORBIDDEN",
  unsupported_grant_type: "NOT_SUPPORTED",
  unsupported_response_type: "NOT_SUPPORTED",
  invalid_scope: "BAD_USER_INPUT",
  access_denied: "FORBIDDEN",
  invalid_redirect_uri: "BAD_USER_INPUT",
  invalid_client_metadata: "BAD_USER_INPUT",
  authorization_pending: "UNAVAILABLE",
  slow_down: "RATE_LIMITED",
  expired_token: "UNAUTHENTICATED",
  insufficient_scope: "FORBIDDEN",
};

/** The `code` of an errcode; one the table lacks (a remote server's own) is INTERNAL_SERVER_ERROR. */
export function graphqlErrorCode(errcode: string): GraphqlErrorCode {
  return (GRAPHQL_ERROR_CODES as Record<string, GraphqlErrorCode>)[errcode] ?? "INTERNAL_SERVER_ERROR";
}

export function matrixErrorExtensions(err: MatrixError): Record<string, unknown> {
  const { error: _message, errcode, ...extra } = err.toJSON();
  const code = typeof errcode === "string" ? errcode : err.errcode;
  return { ...extra, errcode: code, code: graphqlErrorCode(code) };
}
