// The outbound federation client: every request to another server goes through here, discovered
// (discovery.ts), signed with our key (X-Matrix), sent over the safe transport (IP ranges, timeouts, size
// caps), and its answer parsed; a remote error becomes a FederationError carrying the remote errcode and
// status. Spec: Server-Server API "Request Authentication", "Resolving server names", "API standards".
import type { Logger } from "pino";
import type { SigningKey } from "../domain/signing-key.ts";
import type { IpRanges } from "../domain/net/ip-ranges.ts";
import { signRequest } from "../domain/federation/request-auth.ts";
import { tryParseServerName } from "../domain/ids.ts";
import { FederationError } from "./errors.ts";
import { ServerDiscovery, type ResolvedServer } from "./discovery.ts";
import { SafeTransport, systemDns, type ConnectTarget, type Dns, type RawResponse, type StreamedResponse } from "./transport.ts";
import { WELL_KNOWN_MAX_SIZE, WellKnownResolver, type WellKnownFetchResult } from "./well-known.ts";

export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined;
export type Query = Record<string, QueryValue>;

export interface RequestOptions {
  query?: Query;
  /** Largest answer accepted (default 50 MiB). */
  maxBytes?: number;
  /** Time allowed for the whole request (default 60 s); for a streamed answer, until its headers arrive. */
  timeoutMs?: number;
  /** Aborts the request (shutdown). */
  signal?: AbortSignal;
}

export interface FederationClientOptions {
  serverName: string;
  /** Requests are signed with the first key. */
  signingKeys: readonly SigningKey[];
  ipRanges: IpRanges;
  /** federation_verify_certificates. */
  verifyCertificates: boolean;
  /** federation_certificate_verification_whitelist: globs of server names not checked. */
  certificateWhitelist?: readonly string[];
  log: Logger;
  dns?: Dns;
  now?: () => number;
  userAgent?: string;
  connectTimeoutMs?: number;
  /** The port .well-known lookups use (443; tests point it elsewhere). */
  wellKnownPort?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 50 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_REDIRECTS = 5;

/** Encodes each interpolated value as one path segment: fedPath`/_matrix/federation/v1/event/${id}`. */
export function fedPath(strings: TemplateStringsArray, ...values: (string | number)[]): string {
  return strings.reduce((out, s, i) => out + s + (i < values.length ? encodeURIComponent(String(values[i])) : ""), "");
}

/** The query string (without `?`), each name and value percent-encoded; arrays repeat the name. */
export function encodeQuery(query: Query | undefined): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(v))}`);
  }
  return parts.join("&");
}

function globToRegex(glob: string): RegExp {
  const body = glob.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${body}$`, "i");
}

export class FederationClient {
  readonly discovery: ServerDiscovery;
  readonly wellKnown: WellKnownResolver;
  private readonly transport: SafeTransport;
  private readonly unverified: RegExp[];
  private readonly userAgent: string;

  constructor(private readonly o: FederationClientOptions) {
    const dns = o.dns ?? systemDns;
    this.transport = new SafeTransport({ ipRanges: o.ipRanges, dns, now: o.now, connectTimeoutMs: o.connectTimeoutMs });
    this.wellKnown = new WellKnownResolver({ fetch: (host) => this.fetchWellKnown(host), now: o.now });
    this.discovery = new ServerDiscovery({ dns, wellKnown: this.wellKnown, now: o.now });
    this.unverified = (o.certificateWhitelist ?? []).map(globToRegex);
    this.userAgent = o.userAgent ?? "Weft";
  }

  /** GET, signed; resolves the parsed JSON answer. */
  getJson<T = unknown>(destination: string, path: string, query?: Query, opts: RequestOptions = {}): Promise<T> {
    return this.requestJson<T>("GET", destination, path, undefined, { ...opts, query: query ?? opts.query });
  }

  /** PUT with a JSON body, signed. */
  putJson<T = unknown>(destination: string, path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.requestJson<T>("PUT", destination, path, body, opts);
  }

  /** POST with a JSON body, signed. */
  postJson<T = unknown>(destination: string, path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.requestJson<T>("POST", destination, path, body, opts);
  }

  /**
   * Sends a signed request and parses the answer: 2xx → the JSON value; any other status → FederationError
   * ("remote") with the remote status and errcode; no answer → FederationError of the failure's kind.
   */
  async requestJson<T>(method: "GET" | "PUT" | "POST" | "DELETE", destination: string, path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    const res = await this.send(destination, { ...this.signed(method, destination, path, body, opts.query), maxBytes: opts.maxBytes, timeoutMs: opts.timeoutMs, signal: opts.signal });
    return parseAnswer<T>(destination, res);
  }

  /**
   * A signed GET whose answer is streamed, never held whole (media downloads): any status resolves, with
   * the body unread — the caller consumes or destroys it. `maxBytes` caps the body as it flows.
   */
  async getStream(destination: string, path: string, opts: RequestOptions = {}): Promise<StreamedResponse> {
    const targets = await this.targets(destination);
    return this.transport.sendStreaming(targets, {
      ...this.signed("GET", destination, path, undefined, opts.query),
      maxBytes: opts.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      destination,
      signal: opts.signal,
    });
  }

  /** Method, path with query, signed headers and JSON body of a request to `destination`. */
  private signed(method: "GET" | "PUT" | "POST" | "DELETE", destination: string, path: string, body: unknown, query: Query | undefined) {
    const qs = encodeQuery(query);
    const uri = qs ? `${path}?${qs}` : path;
    const content = method === "GET" || method === "DELETE" ? undefined : (body ?? {});
    const key = this.o.signingKeys[0];
    if (!key) throw new FederationError("unreachable", destination, "this server has no signing key");
    const headers: Record<string, string> = {
      authorization: signRequest({ method, uri, origin: this.o.serverName, destination, content }, key),
      "user-agent": this.userAgent,
    };
    let payload: string | undefined;
    if (content !== undefined) {
      payload = JSON.stringify(content);
      headers["content-type"] = "application/json";
    }
    return { method, path: uri, headers, body: payload };
  }

  /** Where requests to `destination` go (discovery), in preference order. */
  private async targets(destination: string): Promise<ConnectTarget[]> {
    let resolved: ResolvedServer;
    try {
      resolved = await this.discovery.resolve(destination);
    } catch (err) {
      throw new FederationError("unreachable", destination, (err as Error).message);
    }
    const verify = this.verifies(destination);
    return resolved.targets.map((t) => ({ ...t, hostHeader: resolved.hostHeader, tlsName: resolved.tlsName, verifyCertificate: verify }));
  }

  /** Resolves `destination` and sends one request to it (unsigned unless the caller signed it). */
  async send(destination: string, r: { method: string; path: string; headers?: Record<string, string>; body?: string; maxBytes?: number; timeoutMs?: number; signal?: AbortSignal }): Promise<RawResponse> {
    const targets = await this.targets(destination);
    return this.transport.send(targets, {
      method: r.method,
      path: r.path,
      headers: r.headers,
      body: r.body,
      maxBytes: r.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      timeoutMs: r.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      destination,
      signal: r.signal,
    });
  }

  private verifies(serverName: string): boolean {
    if (!this.o.verifyCertificates) return false;
    const host = tryParseServerName(serverName)?.host ?? serverName;
    return !this.unverified.some((re) => re.test(host) || re.test(serverName));
  }

  /** GET https://<host>/.well-known/matrix/server, following redirects (https only, at most 5). */
  private async fetchWellKnown(host: string): Promise<WellKnownFetchResult> {
    let url = new URL(`https://${host}:${this.o.wellKnownPort ?? 443}/.well-known/matrix/server`);
    for (let hop = 0; ; hop++) {
      const port = url.port ? Number(url.port) : 443;
      const target: ConnectTarget = {
        host: url.hostname.replace(/^\[|\]$/g, ""),
        port,
        hostHeader: url.host,
        tlsName: tryParseServerName(url.hostname)?.kind === "dns" ? url.hostname : undefined,
        verifyCertificate: this.verifies(host),
      };
      let res: RawResponse;
      try {
        res = await this.transport.send([target], { method: "GET", path: url.pathname + url.search, headers: { "user-agent": this.userAgent }, maxBytes: WELL_KNOWN_MAX_SIZE, timeoutMs: 30_000, destination: host });
      } catch (err) {
        if ((err as FederationError).kind === "too_large") throw Object.assign(new Error("too large"), { tooLarge: true });
        throw err;
      }
      const location = res.headers.location;
      if (res.status >= 300 && res.status < 400 && typeof location === "string" && hop < MAX_REDIRECTS) {
        const next = new URL(location, url);
        if (next.protocol !== "https:") return res; // not followed: an invalid answer
        url = next;
        continue;
      }
      return res;
    }
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

function parseAnswer<T>(destination: string, res: RawResponse): T {
  let json: unknown;
  let parsed = false;
  if (res.body.length > 0) {
    try {
      json = JSON.parse(res.body.toString("utf8"));
      parsed = true;
    } catch {
      // handled below
    }
  }
  if (res.status >= 200 && res.status < 300) {
    if (!parsed) throw new FederationError("invalid_response", destination, `status ${res.status} without a JSON body`);
    return json as T;
  }
  const detail = parsed && typeof json === "object" && json !== null ? json : undefined;
  const errcode = (detail as { errcode?: unknown } | undefined)?.errcode;
  throw new FederationError("remote", destination, `status ${res.status}${typeof errcode === "string" ? ` ${errcode.slice(0, 128)}` : ""}`, { status: res.status, body: detail });
}
