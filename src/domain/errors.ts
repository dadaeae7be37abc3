// The one error type of the domain: a Matrix error code, its message, the HTTP status the spec gives it,
// and any extra fields the spec puts beside errcode/error (e.g. soft_logout, retry_after_ms).
// Spec: Client-Server API, "Standard error response". Each face maps MatrixError once.

export type ErrCode =
  | "M_FORBIDDEN"
  | "M_UNKNOWN_TOKEN"
  | "M_MISSING_TOKEN"
  | "M_USER_LOCKED"
  | "M_USER_SUSPENDED"
  | "M_BAD_JSON"
  | "M_NOT_JSON"
  | "M_NOT_FOUND"
  | "M_LIMIT_EXCEEDED"
  | "M_UNRECOGNIZED"
  | "M_UNKNOWN"
  | "M_UNAUTHORIZED"
  | "M_USER_DEACTIVATED"
  | "M_EXPIRED_ACCOUNT"
  | "M_USER_IN_USE"
  | "M_INVALID_USERNAME"
  | "M_ROOM_IN_USE"
  | "M_INVALID_ROOM_STATE"
  | "M_THREEPID_IN_USE"
  | "M_THREEPID_NOT_FOUND"
  | "M_THREEPID_AUTH_FAILED"
  | "M_THREEPID_DENIED"
  | "M_SERVER_NOT_TRUSTED"
  | "M_UNSUPPORTED_ROOM_VERSION"
  | "M_INCOMPATIBLE_ROOM_VERSION"
  | "M_BAD_STATE"
  | "M_GUEST_ACCESS_FORBIDDEN"
  | "M_CAPTCHA_NEEDED"
  | "M_CAPTCHA_INVALID"
  | "M_MISSING_PARAM"
  | "M_INVALID_PARAM"
  | "M_TOO_LARGE"
  | "M_EXCLUSIVE"
  | "M_RESOURCE_LIMIT_EXCEEDED"
  /** Spec v1.18 (MSC4335): a limit of the user's account (a quota); the body carries `info_uri`. */
  | "M_USER_LIMIT_EXCEEDED"
  | "M_CANNOT_LEAVE_SERVER_NOTICE_ROOM"
  | "M_THREEPID_MEDIUM_NOT_SUPPORTED"
  | "M_WEAK_PASSWORD"
  | "M_PASSWORD_TOO_SHORT"
  | "M_PASSWORD_NO_DIGIT"
  | "M_PASSWORD_NO_UPPERCASE"
  | "M_PASSWORD_NO_LOWERCASE"
  | "M_PASSWORD_NO_SYMBOL"
  | "M_PASSWORD_IN_DICTIONARY"
  | "M_BAD_ALIAS"
  | "M_WRONG_ROOM_KEYS_VERSION"
  | "M_UNABLE_TO_AUTHORISE_JOIN"
  | "M_UNABLE_TO_GRANT_JOIN"
  | "M_DUPLICATE_ANNOTATION"
  | "M_NOT_YET_UPLOADED"
  | "M_CANNOT_OVERWRITE_MEDIA"
  | "M_UNKNOWN_POS"
  | "M_INVALID_SIGNATURE"
  | "M_UNKNOWN_DEVICE"
  | "M_APPSERVICE_LOGIN_UNSUPPORTED"
  | "M_URL_NOT_SET"
  /** Spec v1.16 (MSC4133): a profile change would make the profile larger than 64 KiB. */
  | "M_PROFILE_TOO_LARGE"
  /** Spec v1.16 (MSC4133): a profile key longer than 255 bytes. */
  | "M_KEY_TOO_LARGE"
  | "M_BAD_STATUS"
  | "M_CONNECTION_FAILED"
  | "M_CONNECTION_TIMEOUT"
  /** MSC3895 (Synapse): a request a room joined with partial state cannot answer truthfully yet. */
  | "ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE"
  /** MSC4140 (Synapse): a delayed event's delay over max_event_delay_duration. */
  | "ORG.MATRIX.MSC4140_DELAY_TOO_LARGE"
  /** MSC4155 (Synapse): the invitee's invite filter blocks the inviter. */
  | "M_INVITE_BLOCKED"
  /** MSC4306 (Synapse): an automatic thread subscription's cause event is not in the thread. */
  | "IO.ELEMENT.MSC4306.M_NOT_IN_THREAD"
  /** MSC4306 (Synapse): an automatic thread subscription obsoleted by a later unsubscription. */
  | "IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION"
  /** OAuth 2.0 errors (RFC 6749 §4.1.2.1, §5.2; RFC 7591 §3.2.2), answered as `{error, error_description}` by the OAuth endpoints. */
  | OAuthErrorCode;

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "access_denied"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "authorization_pending"
  | "slow_down"
  | "expired_token"
  /** RFC 6750 §3.1: the token lacks the scope (OpenID Connect's userinfo without `openid`). */
  | "insufficient_scope";

/** Default HTTP status per errcode, where the spec gives one status for it. */
const DEFAULT_STATUS: Partial<Record<ErrCode, number>> = {
  M_FORBIDDEN: 403,
  M_UNKNOWN_TOKEN: 401,
  M_MISSING_TOKEN: 401,
  M_USER_LOCKED: 401,
  M_USER_SUSPENDED: 403,
  M_BAD_JSON: 400,
  M_NOT_JSON: 400,
  M_NOT_FOUND: 404,
  M_LIMIT_EXCEEDED: 429,
  M_UNRECOGNIZED: 404,
  M_UNKNOWN: 400,
  M_UNAUTHORIZED: 401,
  M_USER_DEACTIVATED: 403,
  M_EXPIRED_ACCOUNT: 403,
  M_USER_IN_USE: 400,
  M_INVALID_USERNAME: 400,
  M_ROOM_IN_USE: 400,
  M_INVALID_ROOM_STATE: 400,
  M_UNSUPPORTED_ROOM_VERSION: 400,
  M_INCOMPATIBLE_ROOM_VERSION: 400,
  M_GUEST_ACCESS_FORBIDDEN: 403,
  M_MISSING_PARAM: 400,
  M_INVALID_PARAM: 400,
  M_TOO_LARGE: 413,
  M_USER_LIMIT_EXCEEDED: 403,
  M_EXCLUSIVE: 400,
  M_WEAK_PASSWORD: 400,
  M_PASSWORD_TOO_SHORT: 400,
  M_PASSWORD_NO_DIGIT: 400,
  M_PASSWORD_NO_UPPERCASE: 400,
  M_PASSWORD_NO_LOWERCASE: 400,
  M_PASSWORD_NO_SYMBOL: 400,
  M_PASSWORD_IN_DICTIONARY: 400,
  M_BAD_ALIAS: 400,
  M_WRONG_ROOM_KEYS_VERSION: 403,
  M_THREEPID_MEDIUM_NOT_SUPPORTED: 400,
  M_THREEPID_NOT_FOUND: 400,
  M_THREEPID_IN_USE: 400,
  M_NOT_YET_UPLOADED: 504,
  M_CANNOT_OVERWRITE_MEDIA: 409,
  M_INVALID_SIGNATURE: 401,
  M_INVITE_BLOCKED: 403,
  M_PROFILE_TOO_LARGE: 400,
  M_KEY_TOO_LARGE: 400,
  "IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION": 409,
};

export class MatrixError extends Error {
  readonly errcode: ErrCode;
  readonly httpStatus: number;
  /** Extra top-level fields of the error body (soft_logout, retry_after_ms, flows, ...). */
  readonly extra: Record<string, unknown>;

  constructor(errcode: ErrCode, message: string, httpStatus?: number, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = "MatrixError";
    this.errcode = errcode;
    this.httpStatus = httpStatus ?? DEFAULT_STATUS[errcode] ?? 400;
    this.extra = extra;
  }

  /** The spec's error body: `{errcode, error, ...extra}`. */
  toJSON(): Record<string, unknown> {
    return { errcode: this.errcode, error: this.message, ...this.extra };
  }
}

// Short constructors for the errors every layer raises.
export const forbidden = (msg = "Forbidden") => new MatrixError("M_FORBIDDEN", msg);
export const notFound = (msg = "Not found") => new MatrixError("M_NOT_FOUND", msg);
export const badJson = (msg: string) => new MatrixError("M_BAD_JSON", msg);
export const missingParam = (name: string) => new MatrixError("M_MISSING_PARAM", `Missing parameter: ${name}`);
export const invalidParam = (msg: string) => new MatrixError("M_INVALID_PARAM", msg);
export const limitExceeded = (retryAfterMs: number) =>
  new MatrixError("M_LIMIT_EXCEEDED", "Too many requests", 429, { retry_after_ms: Math.max(0, Math.ceil(retryAfterMs)) });
