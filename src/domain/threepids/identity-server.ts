// The client of identity servers a user names (spec: Identity Service API v2): bind and unbind, hashed
// lookup, and storing a third-party invite. Identity servers are untrusted input: https only, addresses
// checked against ip_range_blacklist / ip_range_whitelist, bounded answers, every field validated.
import type { Agent } from "undici";
import { undici } from "../net/undici.ts";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { OutboundIpPolicy } from "../net/ip-ranges.ts";
import { outboundAgent } from "../net/outbound-agent.ts";
import { signRequest } from "../federation/request-auth.ts";
import { isPlainObject } from "../events/types.ts";

/** An identity server is named like a server: host[:port], no scheme (as Synapse takes `id_server`). */
const ID_SERVER = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]{1,255})(?::\d{1,5})?$/;
const MAX_ANSWER_BYTES = 64 * 1024;
const TIMEOUT_MS = 30_000;

export function checkIdServer(idServer: string): string {
  if (!ID_SERVER.test(idServer)) throw new MatrixError("M_INVALID_PARAM", "id_server must be a server name such as example.org or example.org:8090", 400);
  return idServer;
}

/** The one dispatcher for identity servers (built on first use, closed at shutdown). */
export class IdentityServerAgent {
  private agent: Agent | undefined;
  constructor(private readonly s: () => Services) {}
  get(): Agent {
    if (!this.agent) {
      const { config } = this.s();
      const policy = new OutboundIpPolicy({ blacklist: config.ip_range_blacklist, whitelist: config.ip_range_whitelist });
      const insecure = config.use_insecure_ssl_client_just_for_testing_do_not_use;
      this.agent = outboundAgent(policy, { headersTimeoutMs: TIMEOUT_MS, bodyTimeoutMs: TIMEOUT_MS, ...(insecure ? { rejectUnauthorized: false } : {}) });
    }
    return this.agent;
  }
  async close(): Promise<void> {
    await this.agent?.close();
  }
}

export class IdentityServerError extends Error {
  constructor(readonly idServer: string, readonly status: number, readonly body: unknown, message: string) {
    super(message);
  }
}

export interface IsRequest {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  /** The user's identity-server access token (id_access_token). */
  accessToken?: string;
  /** Sign the request as this homeserver (X-Matrix), as /3pid/unbind wants. */
  signed?: boolean;
}

/** Was the connection refused by the outbound address policy (outbound-agent.ts)? */
function blocked(err: unknown): boolean {
  for (let e = err as { name?: string; code?: string; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++)
    if (e.name === "BlockedAddressError" || e.code === "EBLOCKED") return true;
  return false;
}

/** One request to an identity server; the parsed JSON object of a 2xx answer, else IdentityServerError. */
export async function isRequest(s: Services, idServer: string, req: IsRequest): Promise<Record<string, unknown>> {
  const url = `https://${idServer}/_matrix/identity/v2${req.path}`;
  const headers: Record<string, string> = { "user-agent": "Weft", accept: "application/json" };
  const content = req.body === undefined ? undefined : JSON.stringify(req.body);
  if (content !== undefined) headers["content-type"] = "application/json";
  if (req.accessToken) headers.authorization = `Bearer ${req.accessToken}`;
  if (req.signed) {
    const key = s.signingKeys[0];
    if (!key) throw new MatrixError("M_UNKNOWN", "This server has no signing key", 500);
    headers.authorization = signRequest({ method: req.method, uri: `/_matrix/identity/v2${req.path}`, origin: s.config.server_name, destination: idServer, content: req.body as Record<string, unknown> | undefined }, key);
  }
  let status: number;
  let text: string;
  try {
    const res = await undici().request(url, { method: req.method, headers, body: content, dispatcher: s.identityServers.get(), signal: AbortSignal.timeout(TIMEOUT_MS) });
    status = res.statusCode;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_ANSWER_BYTES) {
        res.body.destroy();
        throw new Error("answer too large");
      }
      chunks.push(chunk as Buffer);
    }
    text = Buffer.concat(chunks).toString("utf8");
  } catch (err) {
    if (blocked(err)) throw new MatrixError("M_SERVER_NOT_TRUSTED", `This server may not contact ${idServer} (ip_range_blacklist)`, 400);
    throw new IdentityServerError(idServer, 0, undefined, `The identity server ${idServer} could not be reached: ${(err as Error).message}`);
  }
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    throw new IdentityServerError(idServer, status, undefined, `The identity server ${idServer} did not answer JSON`);
  }
  if (status < 200 || status >= 300) throw new IdentityServerError(idServer, status, body, `The identity server ${idServer} answered ${status}`);
  if (!isPlainObject(body)) throw new IdentityServerError(idServer, status, body, `The identity server ${idServer} did not answer a JSON object`);
  return body;
}

/** Maps an identity server's refusal to the client's error: its own errcode when it gave one. */
export function toClientError(err: unknown): MatrixError {
  if (err instanceof MatrixError) return err;
  if (err instanceof IdentityServerError) {
    const b = err.body;
    if (isPlainObject(b) && typeof b.errcode === "string" && /^M_[A-Z_]+$/.test(b.errcode) && err.status >= 400 && err.status < 500)
      return new MatrixError(b.errcode as never, typeof b.error === "string" ? b.error.slice(0, 500) : err.message, 400);
    return new MatrixError("M_UNKNOWN", err.message, 502);
  }
  throw err;
}

