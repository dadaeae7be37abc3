// The error of an outbound federation request. It is a MatrixError (the one error type) whose own face is a
// neutral 502 M_UNKNOWN — a remote server's errcode and status are carried beside it for the caller to
// weigh, never passed on to our clients as if they were ours (a remote 401 must not log our user out).
import { MatrixError } from "../domain/errors.js";
const ERRCODE = /^[A-Z][A-Z0-9_.]{0,127}$/;
export class FederationError extends MatrixError {
    kind;
    destination;
    /** The remote HTTP status (kind "remote"). */
    remoteStatus;
    /** The remote errcode, when it sent a well-formed one. */
    remoteErrcode;
    /** The remote error message, truncated. */
    remoteError;
    constructor(kind, destination, message, remote = {}) {
        super("M_UNKNOWN", `Federation request to ${destination} failed: ${message}`, 502);
        this.name = "FederationError";
        this.kind = kind;
        this.destination = destination;
        this.remoteStatus = remote.status;
        const body = remote.body;
        if (body && typeof body === "object") {
            if (typeof body.errcode === "string" && ERRCODE.test(body.errcode))
                this.remoteErrcode = body.errcode;
            if (typeof body.error === "string")
                this.remoteError = body.error.slice(0, 1000);
        }
    }
    /** Whether the remote server answered `status` (and, if given, `errcode`). */
    is(status, errcode) {
        return this.kind === "remote" && this.remoteStatus === status && (errcode === undefined || this.remoteErrcode === errcode);
    }
}
