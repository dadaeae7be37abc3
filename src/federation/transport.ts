// HTTPS to other servers, safely: every address a target resolves to is checked against ip_range_blacklist /
// ip_range_whitelist, and the connection goes to the checked IP itself (no second DNS lookup a rebinding
// attacker could answer differently), with the SNI and certificate name discovery chose. One undici Pool
// per connection target, closed when idle; connect and total timeouts; answers read up to a byte cap.
// Spec: Server-Server API "TLS" and "Resolving server names".
import { lookup as dnsLookup, resolveSrv as dnsResolveSrv } from "node:dns/promises";
import { isIP } from "node:net";
import { Transform, type Readable } from "node:stream";
import type { Dispatcher, Pool } from "undici";
import { undici } from "../domain/net/undici.ts";
import { isBlockedAddress, type IpRanges } from "../domain/net/ip-ranges.ts";
import { FederationError } from "./errors.ts";

/** DNS as discovery and the transport use it (tests inject a fake). */
export interface Dns {
  /** SRV records of `name`; [] when there are none. */
  resolveSrv(name: string): Promise<{ name: string; port: number; priority: number; weight: number }[]>;
  /** Addresses of `host` (A/AAAA, CNAMEs followed, /etc/hosts honoured). */
  lookup(host: string): Promise<string[]>;
}

export const systemDns: Dns = {
  async resolveSrv(name) {
    try {
      return await dnsResolveSrv(name);
    } catch {
      return [];
    }
  },
  async lookup(host) {
    return (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);
  },
};

/** Where one request goes: a host (DNS name or IP literal, no brackets) and port, with its TLS name and Host header. */
export interface ConnectTarget {
  host: string;
  port: number;
  /** The Host header. */
  hostHeader: string;
  /** The name the certificate must be valid for, sent as SNI; undefined for an IP literal (checked against the IP). */
  tlsName?: string;
  verifyCertificate: boolean;
}

export interface TransportOptions {
  ipRanges: IpRanges;
  dns?: Dns;
  connectTimeoutMs?: number;
  /** How long an unused pool is kept. */
  idlePoolMs?: number;
  now?: () => number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface SendOptions {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  maxBytes: number;
  /** Time allowed for the whole request; for a streamed answer, until its headers arrive. */
  timeoutMs: number;
  /** For error messages: the server name the request is for. */
  destination: string;
  /** Aborts the request (shutdown). */
  signal?: AbortSignal;
}

/** An answer whose body is read by the caller, as it arrives (it must consume or destroy `body`). */
export interface StreamedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body, failing with a FederationError ("too_large") past `maxBytes`, or "timeout" when idle too long. */
  body: Readable;
}

/** A streamed body may pause this long between chunks. */
const STREAM_IDLE_MS = 60_000;

const CONNECT_ERRORS = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "EAI_AGAIN", "ENOTFOUND", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"]);

export class SafeTransport {
  private readonly pools = new Map<string, { pool: Pool; lastUsed: number }>();
  private readonly dns: Dns;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly o: TransportOptions) {
    this.dns = o.dns ?? systemDns;
    const idle = o.idlePoolMs ?? 5 * 60_000;
    this.sweeper = setInterval(() => this.sweep(idle), Math.min(idle, 60_000));
    this.sweeper.unref();
  }

  private now() {
    return this.o.now?.() ?? Date.now();
  }

  /** The addresses of `host` that may be reached; a FederationError when none may. */
  async allowedAddresses(host: string, destination: string): Promise<string[]> {
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = await this.dns.lookup(host);
      } catch (err) {
        throw new FederationError("unreachable", destination, `cannot resolve ${host}: ${(err as Error).message}`);
      }
    }
    const allowed = addresses.filter((a) => !isBlockedAddress(a, this.o.ipRanges));
    if (allowed.length === 0) {
      if (addresses.length === 0) throw new FederationError("unreachable", destination, `${host} has no address`);
      throw new FederationError("blocked", destination, `${host} resolves only to addresses outside ip_range_whitelist / inside ip_range_blacklist`);
    }
    return allowed;
  }

  private pool(address: string, t: ConnectTarget): Pool {
    const key = `${address}|${t.port}|${t.tlsName ?? ""}|${t.verifyCertificate}`;
    let entry = this.pools.get(key);
    if (!entry) {
      const origin = `https://${address.includes(":") ? `[${address}]` : address}:${t.port}`;
      const pool = new (undici().Pool)(origin, {
        connections: 8,
        connect: {
          timeout: this.o.connectTimeoutMs ?? 10_000,
          rejectUnauthorized: t.verifyCertificate,
          ...(t.tlsName ? { servername: t.tlsName } : {}),
        },
        keepAliveTimeout: 30_000,
      });
      entry = { pool, lastUsed: this.now() };
      this.pools.set(key, entry);
    }
    entry.lastUsed = this.now();
    return entry.pool;
  }

  /**
   * Sends one request to the first target that accepts a connection (targets in preference order, each
   * at its first allowed address). Any HTTP status is a response; FederationError for everything else.
   */
  async send(targets: readonly ConnectTarget[], o: SendOptions): Promise<RawResponse> {
    return this.firstReachable(targets, o, (address, t) => this.sendTo(address, t, o));
  }

  /** As `send`, but the answer's body is handed over unread, as a stream (media downloads). */
  async sendStreaming(targets: readonly ConnectTarget[], o: SendOptions): Promise<StreamedResponse> {
    return this.firstReachable(targets, o, (address, t) => this.streamFrom(address, t, o));
  }

  private async firstReachable<T>(targets: readonly ConnectTarget[], o: SendOptions, attempt: (address: string, t: ConnectTarget) => Promise<T>): Promise<T> {
    if (this.closed) throw new FederationError("unreachable", o.destination, "the federation client is closed");
    if (targets.length === 0) throw new FederationError("unreachable", o.destination, "no server to connect to");
    let lastError: FederationError | undefined;
    for (const t of targets) {
      let address: string;
      try {
        [address] = (await this.allowedAddresses(t.host, o.destination)) as [string];
      } catch (err) {
        lastError = err as FederationError;
        continue;
      }
      try {
        return await attempt(address, t);
      } catch (err) {
        lastError = err as FederationError;
        if (!(err as { connectFailed?: boolean }).connectFailed) throw err;
      }
    }
    throw lastError!;
  }

  /** Sends the request and waits for the answer's headers; a declared length over maxBytes is refused. */
  private async open(address: string, t: ConnectTarget, o: SendOptions, signal: AbortSignal, bodyTimeout: number): Promise<Dispatcher.ResponseData> {
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool(address, t).request({
        method: o.method as "GET",
        path: o.path,
        headers: { host: t.hostHeader, ...o.headers },
        body: o.body,
        signal,
        headersTimeout: o.timeoutMs,
        bodyTimeout,
      });
    } catch (err) {
      throw this.wrap(err, o, signal, true);
    }
    // A body cut off rejects its stream: nobody is listening any more.
    res.body.on("error", () => {});
    const declared = Number(res.headers["content-length"]);
    if (Number.isFinite(declared) && declared > o.maxBytes) {
      res.body.destroy();
      throw new FederationError("too_large", o.destination, `the answer is ${declared} bytes (at most ${o.maxBytes})`);
    }
    return res;
  }

  private async sendTo(address: string, t: ConnectTarget, o: SendOptions): Promise<RawResponse> {
    const signal = o.signal ? AbortSignal.any([AbortSignal.timeout(o.timeoutMs), o.signal]) : AbortSignal.timeout(o.timeoutMs);
    const res = await this.open(address, t, o, signal, o.timeoutMs);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > o.maxBytes) {
          res.body.destroy();
          throw new FederationError("too_large", o.destination, `the answer is over ${o.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof FederationError) throw err;
      throw this.wrap(err, o, signal, false);
    }
    return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
  }

  private async streamFrom(address: string, t: ConnectTarget, o: SendOptions): Promise<StreamedResponse> {
    // The time limit covers the wait for the headers; the body may take as long as it keeps flowing.
    const controller = new AbortController();
    const headersTimer = setTimeout(() => controller.abort(), o.timeoutMs);
    const onAbort = () => controller.abort();
    o.signal?.addEventListener("abort", onAbort, { once: true });
    let res: Dispatcher.ResponseData;
    try {
      res = await this.open(address, t, o, controller.signal, STREAM_IDLE_MS);
    } finally {
      clearTimeout(headersTimer);
    }
    let size = 0;
    const cap = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        size += chunk.length;
        if (size > o.maxBytes) done(new FederationError("too_large", o.destination, `the answer is over ${o.maxBytes} bytes`));
        else done(null, chunk);
      },
    });
    const body = res.body as unknown as Readable;
    body.on("error", (err) => cap.destroy(err instanceof FederationError ? err : this.wrap(err, o, controller.signal, false)));
    cap.on("close", () => {
      o.signal?.removeEventListener("abort", onAbort);
      if (!body.destroyed) body.destroy();
    });
    body.pipe(cap);
    return { status: res.statusCode, headers: res.headers, body: cap };
  }

  private wrap(err: unknown, o: SendOptions, signal: AbortSignal, beforeResponse: boolean): FederationError {
    const e = err as { code?: string; message?: string; cause?: { code?: string } };
    if (signal.aborted || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_BODY_TIMEOUT")
      return new FederationError("timeout", o.destination, `no answer within ${o.timeoutMs} ms`);
    const code = e.code ?? e.cause?.code;
    const out = new FederationError("unreachable", o.destination, `${code ?? "error"}: ${e.message ?? String(err)}`);
    // Only a connection that never carried the request may be retried on the next target.
    if (beforeResponse && code !== undefined && (CONNECT_ERRORS.has(code) || code.startsWith("ERR_TLS") || code.includes("CERT")))
      Object.assign(out, { connectFailed: true });
    return out;
  }

  private sweep(idleMs: number): void {
    const now = this.now();
    for (const [key, entry] of this.pools) {
      if (now - entry.lastUsed > idleMs) {
        this.pools.delete(key);
        void entry.pool.close().catch(() => {});
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.pool.destroy().catch(() => {})));
  }
}
