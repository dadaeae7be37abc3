// Outbound requests to the delegated authorization server (MSC3861): one undici pool whose connections
// obey ip_range_blacklist / ip_range_whitelist (the server is configured, but its name is resolved at
// connect time like any other), bounded answers and timeouts. Failures are AuthServerUnreachable, which
// the callers turn into a clean 503, never a 500.
import type { Agent } from "undici";
import { undici } from "../net/undici.ts";
import { outboundAgent } from "../net/outbound-agent.ts";
import { OutboundIpPolicy } from "../net/ip-ranges.ts";
import { readCappedText } from "../net/capped-body.ts";
import type { Config } from "../../config/config.ts";

const TIMEOUT_MS = 10_000;
/** Synapse reads at most 1 MiB of an introspection answer. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The authorization server could not be reached, or gave no usable answer. */
export class AuthServerUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AuthServerUnreachable";
  }
}

export interface AuthServerAnswer {
  status: number;
  json: unknown;
}

export class AuthServerHttp {
  private agent: Agent | undefined;
  constructor(private readonly config: Pick<Config, "ip_range_blacklist" | "ip_range_whitelist">) {}

  private dispatcher(): Agent {
    return (this.agent ??= outboundAgent(
      new OutboundIpPolicy({ blacklist: this.config.ip_range_blacklist, whitelist: this.config.ip_range_whitelist }),
      { headersTimeoutMs: TIMEOUT_MS, bodyTimeoutMs: TIMEOUT_MS },
    ));
  }

  /** One request; the status and the parsed JSON body (undefined when it is not JSON). */
  async request(url: string, init: { method: "GET" | "POST"; headers?: Record<string, string>; body?: string }): Promise<AuthServerAnswer> {
    let status: number;
    let text: string | undefined;
    try {
      const res = await undici().request(url, {
        method: init.method,
        headers: { "user-agent": "Weft", accept: "application/json", ...init.headers },
        body: init.body,
        dispatcher: this.dispatcher(),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      status = res.statusCode;
      text = await readCappedText(res.body, MAX_ANSWER_BYTES);
    } catch (err) {
      throw new AuthServerUnreachable(`${init.method} ${url} failed: ${(err as Error).message}`);
    }
    if (text === undefined) throw new AuthServerUnreachable(`${url} answered more than ${MAX_ANSWER_BYTES} bytes`);
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status, json };
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
