import { MatrixError } from "../domain/errors.js";
/** Maps anything thrown to a MatrixError; unexpected errors become 500 M_UNKNOWN (and are logged). */
export function toMatrixError(err) {
    if (err instanceof MatrixError)
        return { error: err, unexpected: false };
    const e = err;
    switch (e?.code) {
        case "FST_ERR_CTP_BODY_TOO_LARGE":
            return { error: new MatrixError("M_TOO_LARGE", "Request body too large", 413), unexpected: false };
        case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
        case "FST_ERR_CTP_EMPTY_JSON_BODY":
        case "FST_ERR_CTP_INVALID_JSON_BODY":
            return { error: new MatrixError("M_NOT_JSON", "Content not JSON.", 400), unexpected: false };
        case "FST_ERR_BAD_URL":
        case "FST_ERR_ASYNC_CONSTRAINT":
            return { error: new MatrixError("M_UNRECOGNIZED", "Unrecognized request: the URL is not valid", 400), unexpected: false };
        case "FST_ERR_MAX_PARAM_LENGTH":
            return { error: new MatrixError("M_TOO_LARGE", "URI too long: a path parameter is longer than any identifier", 414), unexpected: false };
        case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
            return { error: new MatrixError("M_NOT_JSON", "Content must be JSON (Content-Type: application/json)", 415), unexpected: false };
    }
    if (typeof e?.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500)
        return { error: new MatrixError("M_UNKNOWN", e.message, e.statusCode), unexpected: false };
    return { error: new MatrixError("M_UNKNOWN", "Internal server error", 500), unexpected: true };
}
