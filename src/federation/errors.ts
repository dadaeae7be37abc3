// The error of an outbound federation request. It is a MatrixError (the one error type) whose own face is a
// neutral 502 M_UNKNOWN — a remote server's errcode and status are carried beside it for the caller to
// weigh, never passed on to our clients as if they were ours (a remote 401 must not log our user out).
import { MatrixError } from "../domain/errors.ts";

export type FederationErrorKind =
  /** The remote server answered with an error status. */
  | "remote"
  /** DNS failed, the connection was refused or broke, TLS failed. */
  | "unreachable"
  /** Every address of the destination is in ip_range_blacklist (and not whitelisted). */
  | "blocked"
  /** No answer within the time allowed. */
  | "timeout"
  /** The answer was larger than allowed. */
  | "too_large"
  /** A 2xx answer that is not JSON (or not the JSON the caller needs). */
  | "invalid_response";

const ERRCODE = /^[A-Z][A-Z0-9_.]{0,127}$/;

export class FederationError extends MatrixError {
  readonly kind: FederationErrorKind;
  readonly destination: string;
  /** The remote HTTP status (kind "remote"). */
  readonly remoteStatus?: number;
  /** The remote errcode, when it sent a well-formed one. */
  readonly remoteErrcode?: string;
  /** The remote error message, truncated. */
  readonly remoteError?: string;

  constructor(kind: FederationErrorKind, destination: string, message: string, remote: { status?: number; body?: unknown } = {}) {
    super("M_UNKNOWN", `Federation request to ${destination} failed: ${message}`, 502);
    this.name = "FederationError";
    this.kind = kind;
    this.destination = destination;
    this.remoteStatus = remote.status;
    const body = remote.body as { errcode?: unknown; error?: unknown } | undefined;
    if (body && typeof body === "object") {
      if (typeof body.errcode === "string" && ERRCODE.test(body.errcode)) this.remoteErrcode = body.errcode;
      if (typeof body.error === "string") this.remoteError = body.error.slice(0, 1000);
    }
  }

  /** Whether the remote server answered `status` (and, if given, `errcode`). */
  is(status: number, errcode?: string): boolean {
    return this.kind === "remote" && this.remoteStatus === status && (errcode === undefined || this.remoteErrcode === errcode);
  }
}
