import { signRequest } from "../domain/federation/request-auth.js";
import { tryParseServerName } from "../domain/ids.js";
import { FederationError } from "./errors.js";
import { ServerDiscovery } from "./discovery.js";
import { SafeTransport, systemDns } from "./transport.js";
import { WELL_KNOWN_MAX_SIZE, WellKnownResolver } from "./well-known.js";
export const DEFAULT_MAX_RESPONSE_BYTES = 50 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_REDIRECTS = 5;
/** Encodes each interpolated value as one path segment: fedPath`/_matrix/federation/v1/event/${id}`. */
export function fedPath(strings, ...values) {
    return strings.reduce((out, s, i) => out + s + (i < values.length ? encodeURIComponent(String(values[i])) : ""), "");
}
/** The query string (without `?`), each name and value percent-encoded; arrays repeat the name. */
export function encodeQuery(query) {
    const parts = [];
    for (const [name, value] of Object.entries(query ?? {})) {
        if (value === undefined)
            continue;
        for (const v of Array.isArray(value) ? value : [value])
            parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(v))}`);
    }
    return parts.join("&");
}
function globToRegex(glob) {
    const body = glob.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*");
    return new RegExp(`^${body}$`, "i");
}
export class FederationClient {
    o;
    discovery;
    wellKnown;
    transport;
    unverified;
    userAgent;
    constructor(o) {
        this.o = o;
        const dns = o.dns ?? systemDns;
        this.transport = new SafeTransport({ ipRanges: o.ipRanges, dns, now: o.now, connectTimeoutMs: o.connectTimeoutMs });
        this.wellKnown = new WellKnownResolver({ fetch: (host) => this.fetchWellKnown(host), now: o.now });
        this.discovery = new ServerDiscovery({ dns, wellKnown: this.wellKnown, now: o.now });
        this.unverified = (o.certificateWhitelist ?? []).map(globToRegex);
        this.userAgent = o.userAgent ?? "Weft";
    }
    /** GET, signed; resolves the parsed JSON answer. */
    getJson(destination, path, query, opts = {}) {
        return this.requestJson("GET", destination, path, undefined, { ...opts, query: query ?? opts.query });
    }
    /** PUT with a JSON body, signed. */
    putJson(destination, path, body, opts = {}) {
        return this.requestJson("PUT", destination, path, body, opts);
    }
    /** POST with a JSON body, signed. */
    postJson(destination, path, body, opts = {}) {
        return this.requestJson("POST", destination, path, body, opts);
    }
    /**
     * Sends a signed request and parses the answer: 2xx → the JSON value; any other status → FederationError
     * ("remote") with the remote status and errcode; no answer → FederationError of the failure's kind.
     */
    async requestJson(method, destination, path, body, opts = {}) {
        const res = await this.send(destination, { ...this.signed(method, destination, path, body, opts.query), maxBytes: opts.maxBytes, timeoutMs: opts.timeoutMs, signal: opts.signal });
        return parseAnswer(destination, res);
    }
    /**
     * A signed GET whose answer is streamed, never held whole (media downloads): any status resolves, with
     * the body unread — the caller consumes or destroys it. `maxBytes` caps the body as it flows.
     */
    async getStream(destination, path, opts = {}) {
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
    signed(method, destination, path, body, query) {
        const qs = encodeQuery(query);
        const uri = qs ? `${path}?${qs}` : path;
        const content = method === "GET" || method === "DELETE" ? undefined : (body ?? {});
        const key = this.o.signingKeys[0];
        if (!key)
            throw new FederationError("unreachable", destination, "this server has no signing key");
        const headers = {
            authorization: signRequest({ method, uri, origin: this.o.serverName, destination, content }, key),
            "user-agent": this.userAgent,
        };
        let payload;
        if (content !== undefined) {
            payload = JSON.stringify(content);
            headers["content-type"] = "application/json";
        }
        return { method, path: uri, headers, body: payload };
    }
    /** Where requests to `destination` go (discovery), in preference order. */
    async targets(destination) {
        let resolved;
        try {
            resolved = await this.discovery.resolve(destination);
        }
        catch (err) {
            throw new FederationError("unreachable", destination, err.message);
        }
        const verify = this.verifies(destination);
        return resolved.targets.map((t) => ({ ...t, hostHeader: resolved.hostHeader, tlsName: resolved.tlsName, verifyCertificate: verify }));
    }
    /** Resolves `destination` and sends one request to it (unsigned unless the caller signed it). */
    async send(destination, r) {
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
    verifies(serverName) {
        if (!this.o.verifyCertificates)
            return false;
        const host = tryParseServerName(serverName)?.host ?? serverName;
        return !this.unverified.some((re) => re.test(host) || re.test(serverName));
    }
    /** GET https://<host>/.well-known/matrix/server, following redirects (https only, at most 5). */
    async fetchWellKnown(host) {
        let url = new URL(`https://${host}:${this.o.wellKnownPort ?? 443}/.well-known/matrix/server`);
        for (let hop = 0;; hop++) {
            const port = url.port ? Number(url.port) : 443;
            const target = {
                host: url.hostname.replace(/^\[|\]$/g, ""),
                port,
                hostHeader: url.host,
                tlsName: tryParseServerName(url.hostname)?.kind === "dns" ? url.hostname : undefined,
                verifyCertificate: this.verifies(host),
            };
            let res;
            try {
                res = await this.transport.send([target], { method: "GET", path: url.pathname + url.search, headers: { "user-agent": this.userAgent }, maxBytes: WELL_KNOWN_MAX_SIZE, timeoutMs: 30_000, destination: host });
            }
            catch (err) {
                if (err.kind === "too_large")
                    throw Object.assign(new Error("too large"), { tooLarge: true });
                throw err;
            }
            const location = res.headers.location;
            if (res.status >= 300 && res.status < 400 && typeof location === "string" && hop < MAX_REDIRECTS) {
                const next = new URL(location, url);
                if (next.protocol !== "https:")
                    return res; // not followed: an invalid answer
                url = next;
                continue;
            }
            return res;
        }
    }
    async close() {
        await this.transport.close();
    }
}
function parseAnswer(destination, res) {
    let json;
    let parsed = false;
    if (res.body.length > 0) {
        try {
            json = JSON.parse(res.body.toString("utf8"));
            parsed = true;
        }
        catch {
            // handled below
        }
    }
    if (res.status >= 200 && res.status < 300) {
        if (!parsed)
            throw new FederationError("invalid_response", destination, `status ${res.status} without a JSON body`);
        return json;
    }
    const detail = parsed && typeof json === "object" && json !== null ? json : undefined;
    const errcode = detail?.errcode;
    throw new FederationError("remote", destination, `status ${res.status}${typeof errcode === "string" ? ` ${errcode.slice(0, 128)}` : ""}`, { status: res.status, body: detail });
}
