// `/.well-known/matrix/server` lookups and their cache: a valid answer is kept for its Cache-Control
// max-age / Expires (between 5 minutes and 48 hours; 24 hours ±10% without headers), a failure for an
// hour (2 minutes when the host recently had a valid one), and a still-cached answer is refreshed in its
// last 20% and kept through a temporary failure. Synapse's bounds (well_known_resolver.py), our code.
// Spec: Server-Server API "Resolving server names", step 3, and the `GET /.well-known/matrix/server` API.
import { isValidServerName } from "../domain/ids.js";
export const WELL_KNOWN_DEFAULT_CACHE_MS = 24 * 3600_000;
export const WELL_KNOWN_JITTER = 0.1;
export const WELL_KNOWN_INVALID_CACHE_MS = 3600_000;
export const WELL_KNOWN_DOWN_CACHE_MS = 2 * 60_000;
export const WELL_KNOWN_REMEMBER_HAD_VALID_MS = 2 * 3600_000;
export const WELL_KNOWN_MAX_CACHE_MS = 48 * 3600_000;
export const WELL_KNOWN_MIN_CACHE_MS = 5 * 60_000;
export const WELL_KNOWN_MAX_SIZE = 50 * 1024;
export const WELL_KNOWN_GRACE_FACTOR = 0.2;
export const WELL_KNOWN_RETRY_ATTEMPTS = 3;
class FetchFailure extends Error {
    temporary;
    constructor(temporary, reason) {
        super(reason);
        this.temporary = temporary;
    }
}
function header(h, name) {
    const v = h[name];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
/**
 * The cache period (ms) an answer's headers ask for, or undefined when they say nothing. `no-store` and
 * an unparseable Expires mean 0 (the caller's minimum then applies).
 */
export function cachePeriodFromHeaders(h, now) {
    const directives = new Map();
    for (const line of header(h, "cache-control")) {
        for (const d of line.split(",")) {
            const [k, v] = d.split("=", 2).map((x) => x.trim());
            if (k)
                directives.set(k.toLowerCase(), v);
        }
    }
    if (directives.has("no-store"))
        return 0;
    const maxAge = directives.get("max-age");
    if (maxAge !== undefined && /^\d+$/.test(maxAge))
        return Number(maxAge) * 1000;
    const expires = header(h, "expires");
    if (expires.length > 0) {
        // An HTTP-date (RFC 9110: IMF-fixdate, or the obsolete RFC 850 / asctime forms all start with a day
        // name); anything else, "0" included, means already expired.
        const text = expires[expires.length - 1].trim();
        const at = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(text) ? Date.parse(text) : NaN;
        return Number.isNaN(at) ? 0 : at - now;
    }
    return undefined;
}
export class WellKnownResolver {
    o;
    cache = new Map();
    /** Hosts that had a valid answer recently → until when we remember it. */
    hadValid = new Map();
    now;
    random;
    constructor(o) {
        this.o = o;
        this.now = o.now ?? Date.now;
        this.random = o.random ?? Math.random;
    }
    jitter(ms) {
        return ms * (1 - WELL_KNOWN_JITTER + 2 * WELL_KNOWN_JITTER * this.random());
    }
    /** The delegated server name (`m.server`) of `host`, or undefined when it has no valid answer. */
    async lookup(host) {
        const now = this.now();
        const cached = this.cache.get(host);
        if (cached && now < cached.expiresAt - WELL_KNOWN_GRACE_FACTOR * cached.ttl)
            return cached.value;
        const prev = cached && now < cached.expiresAt ? cached.value : undefined;
        let value;
        let period;
        try {
            [value, period] = await this.fetchOnce(host);
        }
        catch (err) {
            const failure = err instanceof FetchFailure ? err : new FetchFailure(true, String(err));
            if (prev !== undefined && failure.temporary)
                return prev;
            value = undefined;
            period = this.jitter(this.remembersValid(host) ? WELL_KNOWN_DOWN_CACHE_MS : WELL_KNOWN_INVALID_CACHE_MS);
        }
        if (period > 0)
            this.cache.set(host, { value, expiresAt: this.now() + period, ttl: period });
        return value;
    }
    remembersValid(host) {
        const until = this.hadValid.get(host);
        return until !== undefined && this.now() < until;
    }
    async fetchOnce(host) {
        const res = await this.fetchWithRetries(host);
        if (res.status !== 200)
            throw new FetchFailure(false, `status ${res.status}`);
        let parsed;
        try {
            parsed = JSON.parse(res.body.toString("utf8"));
        }
        catch {
            throw new FetchFailure(false, "not JSON");
        }
        const server = parsed?.["m.server"];
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || typeof server !== "string" || !isValidServerName(server))
            throw new FetchFailure(false, "no valid m.server");
        const fromHeaders = cachePeriodFromHeaders(res.headers, this.now());
        const period = fromHeaders === undefined
            ? this.jitter(WELL_KNOWN_DEFAULT_CACHE_MS)
            : Math.max(WELL_KNOWN_MIN_CACHE_MS, Math.min(WELL_KNOWN_MAX_CACHE_MS, fromHeaders));
        this.hadValid.set(host, this.now() + period + WELL_KNOWN_REMEMBER_HAD_VALID_MS);
        return [server, period];
    }
    /** Network failures and 5xx are temporary; a host that had a valid answer gets a few attempts. */
    async fetchWithRetries(host) {
        const attempts = this.remembersValid(host) ? WELL_KNOWN_RETRY_ATTEMPTS : 1;
        for (let i = 1;; i++) {
            try {
                const res = await this.o.fetch(host);
                if (res.status >= 500 && res.status < 600)
                    throw new Error(`status ${res.status}`);
                return res;
            }
            catch (err) {
                if (err.tooLarge || i >= attempts)
                    throw new FetchFailure(true, err.message);
            }
            await new Promise((r) => setTimeout(r, this.o.retryDelayMs ?? 500));
        }
    }
}
