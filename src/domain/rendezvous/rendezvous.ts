// MSC4108's rendezvous API ("Insecure rendezvous session" / "API"), as Synapse 1.163 serves it: POST
// /_matrix/client/unstable/org.matrix.msc4108/rendezvous creates a session (201 {url}) whose URL is
// {public_baseurl}_synapse/client/rendezvous/{id}; GET reads the payload (304 when If-None-Match names the
// current tag), PUT replaces it when If-Match does (202; 412 otherwise), DELETE ends it (204). No
// authentication: trust is built by the secure channel above it. Every answer about a session carries the
// MSC's common headers (ETag, Expires, Last-Modified, Cache-Control: no-store, Pragma: no-cache).
// Sessions live in memory (session-store.ts). Unlike Synapse, whose ETag is the payload's SHA-256, every
// write gets a new tag (the MSC's "ETags": unique to the session and its last modification), so a reader
// polling with If-None-Match sees a write that repeats the payload.
import { MatrixError, notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import { ifMatchPasses, ifNoneMatchPasses } from "./entity-tags.ts";
import { RENDEZVOUS_MAX_PAYLOAD_BYTES, type RendezvousSession } from "./session-store.ts";

/** The request headers a write is checked against (lower-case names, as sent). */
export interface PayloadRequest {
  contentLength: string | undefined;
  contentType: string | undefined;
  body: Buffer;
}

/** An answer of the protocol: status, headers, and a payload (bytes) or a JSON body. */
export interface RendezvousAnswer {
  status: number;
  headers: Record<string, string>;
  body?: Buffer | Record<string, unknown>;
}

/** The session path under public_baseurl (Synapse's `_synapse/client/rendezvous`). */
export const SESSION_PATH = "_synapse/client/rendezvous";

const httpDate = (ms: number) => new Date(ms).toUTCString();

/** The MSC's common response headers (Cache-Control as Synapse sends it: no-store, no-transform). */
function commonHeaders(session: RendezvousSession): Record<string, string> {
  return {
    etag: session.etag,
    expires: httpDate(session.expiresAt),
    "last-modified": httpDate(session.lastModified),
    "cache-control": "no-store, no-transform",
    pragma: "no-cache",
  };
}

const missingHeader = (name: string) => new MatrixError("M_MISSING_PARAM", `Missing required header: ${name}`, 400);

/**
 * The payload of a POST or PUT, checked in Synapse's order: Content-Length given (400 M_MISSING_PARAM)
 * and at most 4 KiB (413 M_TOO_LARGE), Content-Type given (400 M_MISSING_PARAM) and `text/plain` without
 * parameters, in any case (400 M_INVALID_PARAM). Returns the content type to store.
 */
function checkPayload(req: PayloadRequest): string {
  if (req.contentLength === undefined) throw missingHeader("content-length");
  if (Number(req.contentLength) > RENDEZVOUS_MAX_PAYLOAD_BYTES || req.body.length > RENDEZVOUS_MAX_PAYLOAD_BYTES)
    throw new MatrixError("M_TOO_LARGE", "Payload too large", 413);
  if (req.contentType === undefined) throw missingHeader("content-type");
  const type = req.contentType.trim().toLowerCase();
  if (type !== "text/plain") throw new MatrixError("M_INVALID_PARAM", "Content-Type must be text/plain", 400);
  return type;
}

/** POST: a new session holding the payload; 201 {url} with its headers. */
export function createRendezvous(s: Services, req: PayloadRequest): RendezvousAnswer {
  const contentType = checkPayload(req);
  const session = s.rendezvous.create(req.body, contentType);
  return { status: 201, headers: commonHeaders(session), body: { url: `${s.config.public_baseurl}${SESSION_PATH}/${session.id}` } };
}

/** GET: the current payload, or 304 (no body) when If-None-Match names its tag. */
export function readRendezvous(s: Services, id: string, ifNoneMatch: string | undefined): RendezvousAnswer {
  const session = s.rendezvous.get(id);
  if (!session) throw notFound();
  if (ifNoneMatch !== undefined && !ifNoneMatchPasses(ifNoneMatch, session.etag)) return { status: 304, headers: commonHeaders(session) };
  return { status: 200, headers: { ...commonHeaders(session), "content-type": session.contentType }, body: session.data };
}

/**
 * PUT: replaces the payload when If-Match names the current tag (202, the new tag in the headers). A
 * missing If-Match is 400 M_MISSING_PARAM (the MSC's and Synapse's answer, not HTTP's 428), checked with
 * the payload before the session is looked up, as Synapse. A stale tag is 412 with the current headers
 * and Synapse's errcode: M_UNKNOWN, the MSC's M_CONCURRENT_WRITE in `org.matrix.msc4108.errcode`.
 */
export function replaceRendezvous(s: Services, id: string, req: PayloadRequest & { ifMatch: string | undefined }): RendezvousAnswer {
  const contentType = checkPayload(req);
  if (req.ifMatch === undefined) throw missingHeader("if-match");
  const session = s.rendezvous.get(id);
  if (!session) throw notFound();
  if (!ifMatchPasses(req.ifMatch, session.etag)) {
    const error = new MatrixError("M_UNKNOWN", "ETag does not match", 412, { "org.matrix.msc4108.errcode": "M_CONCURRENT_WRITE" });
    return { status: 412, headers: { ...commonHeaders(session), "content-type": "application/json" }, body: error.toJSON() };
  }
  s.rendezvous.write(session, req.body, contentType);
  // Synapse sends a Content-Type with the empty body: some proxies (Cloudflare) drop an ETag without one.
  return { status: 202, headers: { ...commonHeaders(session), "content-type": "text/plain" }, body: Buffer.alloc(0) };
}

/** DELETE: ends the session (204); 404 when it is unknown, ended or expired. */
export function endRendezvous(s: Services, id: string): RendezvousAnswer {
  if (!s.rendezvous.delete(id)) throw notFound();
  return { status: 204, headers: {} };
}

/** POST with experimental_features.msc4108_delegation_endpoint: 307 to the rendezvous server configured. */
export function delegatedRendezvous(endpoint: string): RendezvousAnswer {
  return { status: 307, headers: { location: endpoint } };
}
