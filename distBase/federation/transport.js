// HTTPS to other servers, safely: every address a target resolves to is checked against ip_range_blacklist /
// ip_range_whitelist, and the connection goes to the checked IP itself (no second DNS lookup a rebinding
// attacker could answer differently), with the SNI and certificate name discovery chose. One undici Pool
// per connection target, closed when idle; connect and total timeouts; answers read up to a byte cap.
// Spec: Server-Server API "TLS" and "Resolving server names".
import { lookup as dnsLookup, resolveSrv as dnsResolveSrv } from "node:dns/promises";
import { isIP } from "node:net";
import { Transform } from "node:stream";
import { Pool } from "undici";
import { isBlockedAddress } from "../domain/net/ip-ranges.js";
import { FederationError } from "./errors.js";
export const systemDns = {
    async resolveSrv(name) {
        try {
            return await dnsResolveSrv(name);
        }
        catch {
            return [];
        }
    },
    async lookup(host) {
        return (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);
    },
};
/** A streamed body may pause this long between chunks. */
const STREAM_IDLE_MS = 60_000;
const CONNECT_ERRORS = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "EAI_AGAIN", "ENOTFOUND", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"]);
export class SafeTransport {
    o;
    pools = new Map();
    dns;
    sweeper;
    closed = false;
    constructor(o) {
        this.o = o;
        this.dns = o.dns ?? systemDns;
        const idle = o.idlePoolMs ?? 5 * 60_000;
        this.sweeper = setInterval(() => this.sweep(idle), Math.min(idle, 60_000));
        this.sweeper.unref();
    }
    now() {
        return this.o.now?.() ?? Date.now();
    }
    /** The addresses of `host` that may be reached; a FederationError when none may. */
    async allowedAddresses(host, destination) {
        let addresses;
        if (isIP(host))
            addresses = [host];
        else {
            try {
                addresses = await this.dns.lookup(host);
            }
            catch (err) {
                throw new FederationError("unreachable", destination, `cannot resolve ${host}: ${err.message}`);
            }
        }
        const allowed = addresses.filter((a) => !isBlockedAddress(a, this.o.ipRanges));
        if (allowed.length === 0) {
            if (addresses.length === 0)
                throw new FederationError("unreachable", destination, `${host} has no address`);
            throw new FederationError("blocked", destination, `${host} resolves only to addresses outside ip_range_whitelist / inside ip_range_blacklist`);
        }
        return allowed;
    }
    pool(address, t) {
        const key = `${address}|${t.port}|${t.tlsName ?? ""}|${t.verifyCertificate}`;
        let entry = this.pools.get(key);
        if (!entry) {
            const origin = `https://${address.includes(":") ? `[${address}]` : address}:${t.port}`;
            const pool = new Pool(origin, {
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
    async send(targets, o) {
        return this.firstReachable(targets, o, (address, t) => this.sendTo(address, t, o));
    }
    /** As `send`, but the answer's body is handed over unread, as a stream (media downloads). */
    async sendStreaming(targets, o) {
        return this.firstReachable(targets, o, (address, t) => this.streamFrom(address, t, o));
    }
    async firstReachable(targets, o, attempt) {
        if (this.closed)
            throw new FederationError("unreachable", o.destination, "the federation client is closed");
        if (targets.length === 0)
            throw new FederationError("unreachable", o.destination, "no server to connect to");
        let lastError;
        for (const t of targets) {
            let address;
            try {
                [address] = (await this.allowedAddresses(t.host, o.destination));
            }
            catch (err) {
                lastError = err;
                continue;
            }
            try {
                return await attempt(address, t);
            }
            catch (err) {
                lastError = err;
                if (!err.connectFailed)
                    throw err;
            }
        }
        throw lastError;
    }
    /** Sends the request and waits for the answer's headers; a declared length over maxBytes is refused. */
    async open(address, t, o, signal, bodyTimeout) {
        let res;
        try {
            res = await this.pool(address, t).request({
                method: o.method,
                path: o.path,
                headers: { host: t.hostHeader, ...o.headers },
                body: o.body,
                signal,
                headersTimeout: o.timeoutMs,
                bodyTimeout,
            });
        }
        catch (err) {
            throw this.wrap(err, o, signal, true);
        }
        // A body cut off rejects its stream: nobody is listening any more.
        res.body.on("error", () => { });
        const declared = Number(res.headers["content-length"]);
        if (Number.isFinite(declared) && declared > o.maxBytes) {
            res.body.destroy();
            throw new FederationError("too_large", o.destination, `the answer is ${declared} bytes (at most ${o.maxBytes})`);
        }
        return res;
    }
    async sendTo(address, t, o) {
        const signal = o.signal ? AbortSignal.any([AbortSignal.timeout(o.timeoutMs), o.signal]) : AbortSignal.timeout(o.timeoutMs);
        const res = await this.open(address, t, o, signal, o.timeoutMs);
        const chunks = [];
        let size = 0;
        try {
            for await (const chunk of res.body) {
                size += chunk.length;
                if (size > o.maxBytes) {
                    res.body.destroy();
                    throw new FederationError("too_large", o.destination, `the answer is over ${o.maxBytes} bytes`);
                }
                chunks.push(chunk);
            }
        }
        catch (err) {
            if (err instanceof FederationError)
                throw err;
            throw this.wrap(err, o, signal, false);
        }
        return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
    }
    async streamFrom(address, t, o) {
        // The time limit covers the wait for the headers; the body may take as long as it keeps flowing.
        const controller = new AbortController();
        const headersTimer = setTimeout(() => controller.abort(), o.timeoutMs);
        const onAbort = () => controller.abort();
        o.signal?.addEventListener("abort", onAbort, { once: true });
        let res;
        try {
            res = await this.open(address, t, o, controller.signal, STREAM_IDLE_MS);
        }
        finally {
            clearTimeout(headersTimer);
        }
        let size = 0;
        const cap = new Transform({
            transform: (chunk, _enc, done) => {
                size += chunk.length;
                if (size > o.maxBytes)
                    done(new FederationError("too_large", o.destination, `the answer is over ${o.maxBytes} bytes`));
                else
                    done(null, chunk);
            },
        });
        const body = res.body;
        body.on("error", (err) => cap.destroy(err instanceof FederationError ? err : this.wrap(err, o, controller.signal, false)));
        cap.on("close", () => {
            o.signal?.removeEventListener("abort", onAbort);
            if (!body.destroyed)
                body.destroy();
        });
        body.pipe(cap);
        return { status: res.statusCode, headers: res.headers, body: cap };
    }
    wrap(err, o, signal, beforeResponse) {
        const e = err;
        if (signal.aborted || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_BODY_TIMEOUT")
            return new FederationError("timeout", o.destination, `no answer within ${o.timeoutMs} ms`);
        const code = e.code ?? e.cause?.code;
        const out = new FederationError("unreachable", o.destination, `${code ?? "error"}: ${e.message ?? String(err)}`);
        // Only a connection that never carried the request may be retried on the next target.
        if (beforeResponse && code !== undefined && (CONNECT_ERRORS.has(code) || code.startsWith("ERR_TLS") || code.includes("CERT")))
            Object.assign(out, { connectFailed: true });
        return out;
    }
    sweep(idleMs) {
        const now = this.now();
        for (const [key, entry] of this.pools) {
            if (now - entry.lastUsed > idleMs) {
                this.pools.delete(key);
                void entry.pool.close().catch(() => { });
            }
        }
    }
    async close() {
        this.closed = true;
        clearInterval(this.sweeper);
        const pools = [...this.pools.values()];
        this.pools.clear();
        await Promise.all(pools.map((p) => p.pool.destroy().catch(() => { })));
    }
}
