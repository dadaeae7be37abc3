// The one error type of the domain: a Matrix error code, its message, the HTTP status the spec gives it,
// and any extra fields the spec puts beside errcode/error (e.g. soft_logout, retry_after_ms).
// Spec: Client-Server API, "Standard error response". Each face maps MatrixError once.
/** Default HTTP status per errcode, where the spec gives one status for it. */
const DEFAULT_STATUS = {
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
};
export class MatrixError extends Error {
    errcode;
    httpStatus;
    /** Extra top-level fields of the error body (soft_logout, retry_after_ms, flows, ...). */
    extra;
    constructor(errcode, message, httpStatus, extra = {}) {
        super(message);
        this.name = "MatrixError";
        this.errcode = errcode;
        this.httpStatus = httpStatus ?? DEFAULT_STATUS[errcode] ?? 400;
        this.extra = extra;
    }
    /** The spec's error body: `{errcode, error, ...extra}`. */
    toJSON() {
        return { errcode: this.errcode, error: this.message, ...this.extra };
    }
}
// Short constructors for the errors every layer raises.
export const forbidden = (msg = "Forbidden") => new MatrixError("M_FORBIDDEN", msg);
export const notFound = (msg = "Not found") => new MatrixError("M_NOT_FOUND", msg);
export const badJson = (msg) => new MatrixError("M_BAD_JSON", msg);
export const missingParam = (name) => new MatrixError("M_MISSING_PARAM", `Missing parameter: ${name}`);
export const invalidParam = (msg) => new MatrixError("M_INVALID_PARAM", msg);
export const limitExceeded = (retryAfterMs) => new MatrixError("M_LIMIT_EXCEEDED", "Too many requests", 429, { retry_after_ms: Math.max(0, Math.ceil(retryAfterMs)) });
