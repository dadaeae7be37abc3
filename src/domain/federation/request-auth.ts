// Federation request authentication, both directions: the `Authorization: X-Matrix ...` header (its
// grammar: RFC 9110 auth-params, quoted or bare values, with X-Proto as a second scheme name), signing an
// outbound request, and verifying an inbound one against the origin's keys (over its body as received when
// the body holds numbers canonical JSON cannot carry: received-json.ts). Errors as Synapse words them.
// Spec: Server-Server API, "Request Authentication"; Appendices, "Signing JSON".
import { MatrixError } from "../errors.ts";
import { isValidServerName } from "../ids.ts";
import type { KeyObject } from "node:crypto";
import { signJson, verifyBytes, verifyJsonSignature, type JsonSigner } from "../signing.ts";
import { canonicalJsonAsReceived, parseKeepingNumbers } from "../received-json.ts";
import type { KeyRing } from "../keys/key-ring.ts";

export const AUTH_SCHEMES = ["X-Matrix", "X-Proto"] as const;

export interface FederationAuthParams {
  scheme: (typeof AUTH_SCHEMES)[number];
  origin: string;
  /** Absent in requests from servers older than spec v1.3. */
  destination?: string;
  key: string;
  sig: string;
}

/** What a request signature covers (spec "Request Authentication", step 1). */
export interface RequestToSign {
  method: string;
  /** Path and query exactly as sent, starting with `/_matrix/...`. */
  uri: string;
  origin: string;
  destination: string;
  /** The JSON body, when the request has one. */
  content?: unknown;
}

const TCHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;

const malformed = () => new MatrixError("M_UNAUTHORIZED", "Malformed Authorization header", 400);

/**
 * Parses one Authorization header value. Returns undefined when its scheme is not X-Matrix/X-Proto (a
 * Bearer token, say); throws 400 M_UNAUTHORIZED "Malformed Authorization header" when it is one of ours
 * but breaks the grammar, repeats a parameter, lacks origin/key/sig or names an invalid origin.
 */
export function parseFederationAuthHeader(header: string): FederationAuthParams | undefined {
  const m = /^([A-Za-z0-9-]+)(?: +|$)/.exec(header);
  const scheme = AUTH_SCHEMES.find((s) => s.toLowerCase() === m?.[1]?.toLowerCase());
  if (!m || !scheme) return undefined;
  const params = new Map<string, string>();
  let i = m[0].length;
  const n = header.length;
  const skipWs = () => { while (i < n && (header[i] === " " || header[i] === "\t")) i++; };
  while (true) {
    skipWs();
    const nameStart = i;
    while (i < n && TCHAR.test(header[i]!)) i++;
    const name = header.slice(nameStart, i).toLowerCase();
    if (name === "") throw malformed();
    skipWs();
    if (header[i] !== "=") throw malformed();
    i++;
    skipWs();
    let value = "";
    if (header[i] === '"') {
      i++;
      let closed = false;
      while (i < n) {
        const c = header[i++]!;
        if (c === "\\") {
          if (i >= n) break;
          value += header[i++];
        } else if (c === '"') {
          closed = true;
          break;
        } else value += c;
      }
      if (!closed) throw malformed();
    } else {
      // A bare value: a token, leniently with the colons (and base64's `/`) older servers send unquoted.
      const start = i;
      while (i < n && !/[\s,"\\]/.test(header[i]!)) i++;
      value = header.slice(start, i);
      if (value === "") throw malformed();
    }
    if (params.has(name)) throw malformed();
    params.set(name, value);
    skipWs();
    if (i >= n) break;
    if (header[i] !== ",") throw malformed();
    i++;
  }
  const origin = params.get("origin");
  const key = params.get("key");
  const sig = params.get("sig");
  if (!origin || !key || !sig || !isValidServerName(origin)) throw malformed();
  const destination = params.get("destination");
  return destination === undefined ? { scheme, origin, key, sig } : { scheme, origin, destination, key, sig };
}

/** Quotes a parameter value (escaping `"` and `\`, which our own values never contain). */
const quote = (v: string) => `"${v.replace(/["\\]/g, (c) => "\\" + c)}"`;

/** The `Authorization` header value of a request signed with `key` (always X-Matrix, as the spec says to send). */
export function signRequest(req: RequestToSign, key: JsonSigner): string {
  const json: Record<string, unknown> = { method: req.method, uri: req.uri, origin: req.origin, destination: req.destination };
  if (req.content !== undefined) json.content = req.content;
  const signed = signJson(json, req.origin, key);
  const sig = signed.signatures[req.origin]![key.keyId]!;
  return `X-Matrix origin=${quote(req.origin)},destination=${quote(req.destination)},key=${quote(key.keyId)},sig=${quote(sig)}`;
}

export interface InboundRequest {
  method: string;
  /** The request target as received: path and query string. */
  uri: string;
  /** Every Authorization header value received. */
  authorization: readonly string[];
  /** The parsed JSON body (PUT/POST), undefined for requests without one. */
  content?: unknown;
  /**
   * The body's text as received: a signature that does not verify over the parsed body is checked again
   * over it, its numbers as sent (received-json.ts) — a sender signs the float or big integer it sent.
   */
  contentText?: () => string | undefined;
}

export interface RequestAuthDeps {
  serverName: string;
  keyRing: KeyRing;
  now: number;
}

/** Whether `signature` (unpadded base64) verifies over `bytes` with `key`; false without bytes. */
function verifyReceived(bytes: Buffer | null, signature: string, key: KeyObject): boolean {
  return bytes !== null && verifyBytes(bytes, signature, key);
}

/**
 * Authenticates a federation request and returns the origin server's name. 401 M_UNAUTHORIZED when no
 * X-Matrix header is present, its destination is not this server, no key of the origin can be found, or
 * a signature does not verify; 400 M_UNAUTHORIZED for a malformed header. Every signature made with a
 * key we know must verify, and at least one must.
 */
export async function authenticateRequest(deps: RequestAuthDeps, req: InboundRequest): Promise<string> {
  let origin: string | undefined;
  const sigs = new Map<string, string>();
  for (const header of req.authorization) {
    const auth = parseFederationAuthHeader(header);
    if (!auth) continue;
    if (origin !== undefined && auth.origin !== origin) throw malformed();
    origin = auth.origin;
    sigs.set(auth.key, auth.sig);
    if (auth.destination !== undefined && auth.destination !== deps.serverName)
      throw new MatrixError("M_UNAUTHORIZED", `Destination mismatch in auth header, received: '${auth.destination}'`, 401);
  }
  if (origin === undefined) throw new MatrixError("M_UNAUTHORIZED", "Missing Authorization headers", 401);

  // What the origin signed, as we see it: the destination is always us.
  const json: Record<string, unknown> = { method: req.method, uri: req.uri, origin, destination: deps.serverName };
  if (req.content !== undefined) json.content = req.content;
  json.signatures = { [origin]: Object.fromEntries(sigs) };

  // The bytes signed, with the body's numbers as received: made only if a signature fails over the parsed body.
  let asReceived: Buffer | null | undefined;
  const bytesAsReceived = (): Buffer | null => {
    if (asReceived !== undefined) return asReceived;
    const text = req.content !== undefined ? req.contentText?.() : undefined;
    asReceived = null;
    if (text === undefined) return null;
    try {
      const { signatures: _s, ...signed } = json;
      asReceived = Buffer.from(canonicalJsonAsReceived({ ...signed, content: parseKeepingNumbers(text) }), "utf8");
    } catch {
      // Not JSON after all: nothing else to check.
    }
    return asReceived;
  };
  let verified = false;
  for (const keyId of sigs.keys()) {
    const key = await deps.keyRing.verifyKey(origin, keyId, deps.now);
    if (!key) continue;
    if (!verifyJsonSignature(json, origin, keyId, key) && !verifyReceived(bytesAsReceived(), sigs.get(keyId)!, key))
      throw new MatrixError("M_UNAUTHORIZED", `Invalid signature for server ${origin} with key ${keyId}: Unable to verify signature for ${origin}`, 401);
    verified = true;
  }
  if (!verified)
    throw new MatrixError("M_UNAUTHORIZED", `Failed to find any key to satisfy: ${origin} ${[...sigs.keys()].join(", ")}`, 401);
  return origin;
}
