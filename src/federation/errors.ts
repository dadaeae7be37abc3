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
/** Most extra fields of a remote error kept. */
const MAX_FIELDS = 8;

export class FederationError extends MatrixError {
  readonly kind: FederationErrorKind;
  readonly destination: string;
  /** The remote HTTP status (kind "remote"). */
  readonly remoteStatus?: number;
  /** The remote errcode, when it sent a well-formed one. */
  readonly remoteErrcode?: string;
  /** The remote error message, truncated. */
  readonly remoteError?: string;
  /** The remote error body's other scalar fields (`room_version`, say): at most a few, strings truncated. */
  readonly remoteFields?: Record<string, string | number | boolean>;
  /** Whether the remote answer's body was a JSON object. */
  readonly remoteJson: boolean;

  constructor(kind: FederationErrorKind, destination: string, message: string, remote: { status?: number; body?: unknown } = {}) {
    super("M_UNKNOWN", `Federation request to ${destination} failed: ${message}`, 502);
    this.name = "FederationError";
    this.kind = kind;
    this.destination = destination;
    this.remoteStatus = remote.status;
    const body = remote.body as { errcode?: unknown; error?: unknown } | undefined;
    this.remoteJson = body !== undefined && typeof body === "object" && body !== null;
    if (body && typeof body === "object") {
      if (typeof body.errcode === "string" && ERRCODE.test(body.errcode)) this.remoteErrcode = body.errcode;
      if (typeof body.error === "string") this.remoteError = body.error.slice(0, 1000);
      const fields: [string, string | number | boolean][] = [];
      for (const [k, v] of Object.entries(body)) {
        if (k === "errcode" || k === "error" || fields.length >= MAX_FIELDS || k.length > 255) continue;
        if (typeof v === "string") fields.push([k, v.slice(0, 1000)]);
        else if (typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) fields.push([k, v]);
      }
      if (fields.length > 0) this.remoteFields = Object.fromEntries(fields);
    }
  }

  /**
   * Whether the remote server does not serve the endpoint: 404 or 405 with M_UNRECOGNIZED or without a JSON
   * body (older servers), or 400 M_UNRECOGNIZED (older Synapses) — as Synapse tells it.
   */
  isUnknownEndpoint(): boolean {
    if (this.kind !== "remote") return false;
    if (this.remoteStatus === 404 || this.remoteStatus === 405) return !this.remoteJson || this.remoteErrcode === "M_UNRECOGNIZED";
    return this.remoteStatus === 400 && this.remoteErrcode === "M_UNRECOGNIZED";
  }

  /** Whether the remote server answered `status` (and, if given, `errcode`). */
  is(status: number, errcode?: string): boolean {
    return this.kind === "remote" && this.remoteStatus === status && (errcode === undefined || this.remoteErrcode === errcode);
  }
}
