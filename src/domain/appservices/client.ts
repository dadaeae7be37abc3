// Requests from the homeserver to application services (spec: Application Service API): transactions,
// user and alias queries, third-party lookups and the ping, each with `Authorization: Bearer <hs_token>`
// (and the deprecated `access_token` query parameter with use_appservice_legacy_authorization), through
// undici with a time limit. As in Synapse, service URLs are the admin's choice and are not held to
// ip_range_blacklist (bridges usually run beside the homeserver). Answers are untrusted: their size is
// capped and their JSON checked by the caller.
import type { Agent } from "undici";
import { undici } from "../net/undici.ts";
import { readCappedText } from "../net/capped-body.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";

/** The answer to a request that reached the service. */
export interface ServiceAnswer {
  status: number;
  /** The body parsed as JSON; undefined when it was empty or not JSON. */
  json: unknown;
  text: string;
}

/** A request that got no answer: the connection failed, or the time limit ran out. */
export class ServiceUnreachable extends Error {
  constructor(readonly timedOut: boolean, message: string) {
    super(message);
    this.name = "ServiceUnreachable";
  }
}

const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
export const APP_SERVICE_PREFIX = "/_matrix/app/v1";

export interface CallOptions {
  method: "GET" | "PUT" | "POST";
  /** Path after the service's URL, e.g. /_matrix/app/v1/users/%40a%3Ab (already encoded). */
  path: string;
  /** Query parameters (a list repeats the parameter). */
  query?: Record<string, string | string[]>;
  body?: unknown;
  /** Aborts the request (shutdown). */
  signal?: AbortSignal;
}

export class AppServiceClient {
  private dispatcher: Agent | undefined;

  constructor(private readonly opts: { timeoutMs: number; legacyAuthorization: boolean }) {}

  private agent(): Agent {
    return (this.dispatcher ??= new (undici().Agent)({
      connect: { timeout: this.opts.timeoutMs },
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
    }));
  }

  /** Sends one request to `as` (which must have a URL); throws ServiceUnreachable when no answer came. */
  async call(as: AppServiceRegistration, o: CallOptions): Promise<ServiceAnswer> {
    if (as.url === null) throw new ServiceUnreachable(false, `application service ${as.id} has no URL`);
    const url = new URL(as.url + o.path);
    for (const [k, v] of Object.entries(o.query ?? {})) for (const one of [v].flat()) url.searchParams.append(k, one);
    if (this.opts.legacyAuthorization) url.searchParams.set("access_token", as.hs_token);
    const limit = AbortSignal.timeout(this.opts.timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, limit]) : limit;
    try {
      const res = await undici().request(url, {
        method: o.method,
        dispatcher: this.agent(),
        signal,
        headers: {
          authorization: `Bearer ${as.hs_token}`,
          "user-agent": "Weft",
          ...(o.body !== undefined ? { "content-type": "application/json" } : {}),
        },
        body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
      });
      const text = await readCappedText(res.body, MAX_RESPONSE_BYTES);
      if (text === undefined) return { status: res.statusCode, json: undefined, text: "" };
      let json: unknown;
      try {
        json = text === "" ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, json, text };
    } catch (err) {
      const undiciErrors = undici().errors;
      const timedOut =
        limit.aborted ||
        err instanceof undiciErrors.HeadersTimeoutError ||
        err instanceof undiciErrors.BodyTimeoutError ||
        err instanceof undiciErrors.ConnectTimeoutError;
      throw new ServiceUnreachable(timedOut, timedOut ? `request to ${as.id} timed out` : `${(err as Error).name}: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined; // a later call (the senders' lease taken again) makes a new one
    await dispatcher?.close().catch(() => {});
  }
}

/** Whether an answer is a success with a JSON object body (what user and alias queries expect). */
export function isOkObject(a: ServiceAnswer): boolean {
  return a.status >= 200 && a.status < 300 && typeof a.json === "object" && a.json !== null && !Array.isArray(a.json);
}
