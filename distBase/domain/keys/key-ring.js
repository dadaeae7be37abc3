import { publicKeyFromBase64 } from "../signing.js";
import { LruCache } from "../cache/lru.js";
import { keysFromDirectResponse, keysFromNotaryResponse } from "./remote-keys.js";
/** Knows only this server's own keys (tests and tools; the homeserver uses FederatedKeyRing). */
export class LocalKeyRing {
    serverName;
    keys;
    constructor(serverName, keys) {
        this.serverName = serverName;
        this.keys = keys;
    }
    async verifyKey(serverName, keyId) {
        if (serverName !== this.serverName)
            return undefined;
        return this.keys.find((k) => k.keyId === keyId)?.publicKeyObject;
    }
    async refreshDirect() { }
}
/** After a fetch that found keys, the same server is not asked again sooner than this. */
export const MIN_REFETCH_MS = 5_000;
/** After a fetch that found nothing, back off from this, doubling, up to BACKOFF_MAX_MS. */
export const BACKOFF_START_MS = 30_000;
export const BACKOFF_MAX_MS = 30 * 60_000;
/**
 * Own keys, then memory, then the database, then the network: the server itself, then each trusted
 * notary. One fetch per server at a time (callers share it), a short floor between fetches of a server
 * that answered, and an exponential backoff for one that did not.
 */
export class FederatedKeyRing {
    o;
    cache;
    fetches = new Map();
    constructor(o) {
        this.o = o;
        this.cache = o.cache ?? new LruCache("server_keys", 10_000);
    }
    async verifyKey(serverName, keyId, atTs) {
        if (serverName === this.o.serverName)
            return this.o.ownKeys.find((k) => k.keyId === keyId)?.publicKeyObject;
        const known = await this.known(serverName, keyId);
        if (known && known.validUntilTs >= atTs)
            return publicKeyFromBase64(known.verifyKey);
        await this.fetch(serverName, [keyId], atTs);
        const after = await this.known(serverName, keyId);
        return after && after.validUntilTs >= atTs ? publicKeyFromBase64(after.verifyKey) : undefined;
    }
    /**
     * Asks the server itself for fresh keys (unless it was asked moments ago or is backed off). The notary
     * face uses this: never our own notaries, so two notaries trusting each other cannot loop.
     */
    async refreshDirect(serverName, minimumValidUntilTs) {
        if (serverName === this.o.serverName)
            return;
        await this.fetch(serverName, [], minimumValidUntilTs, { notaries: false });
    }
    async known(serverName, keyId) {
        const id = `${serverName}\n${keyId}`;
        const hit = this.cache.get(id);
        if (hit)
            return hit;
        const row = await this.o.store.get(serverName, keyId);
        if (!row)
            return undefined;
        const entry = { verifyKey: row.verifyKey, validUntilTs: row.validUntilTs };
        this.cache.set(id, entry);
        return entry;
    }
    async fetch(serverName, keyIds, minValidUntil, opts = {}) {
        // Direct-only fetches (the notary face) keep their own state: never waiting on a fetch that is itself
        // waiting on a notary.
        const useNotaries = opts.notaries ?? true;
        const stateKey = useNotaries ? serverName : `direct:${serverName}`;
        let state = this.fetches.get(stateKey);
        if (state?.inflight)
            return state.inflight;
        if (state && this.o.now() < state.nextAllowedTs)
            return;
        state ??= { nextAllowedTs: 0, failures: 0 };
        this.fetches.set(stateKey, state);
        const s = state;
        s.inflight = (async () => {
            let found = false;
            try {
                found = await this.fetchFromNetwork(serverName, keyIds, minValidUntil, useNotaries);
            }
            catch (err) {
                this.o.log.warn({ err, serverName }, "fetching server keys failed");
            }
            finally {
                const now = this.o.now();
                if (found) {
                    s.failures = 0;
                    s.nextAllowedTs = now + MIN_REFETCH_MS;
                }
                else {
                    s.failures++;
                    s.nextAllowedTs = now + Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** (s.failures - 1));
                }
                s.inflight = undefined;
            }
        })();
        return s.inflight;
    }
    /** True when some keys of the server were found and stored. */
    async fetchFromNetwork(serverName, keyIds, minValidUntil, useNotaries) {
        const now = this.o.now();
        let stored = [];
        try {
            const result = keysFromDirectResponse(await this.o.transport.fetchServerKeys(serverName), serverName, now);
            if (result.ok)
                stored = result.keys;
            else
                this.o.log.warn({ serverName, reason: result.reason }, "rejected a server's key response");
        }
        catch (err) {
            this.o.log.info({ serverName, err: err.message }, "could not fetch keys from the server itself");
        }
        const satisfied = () => keyIds.every((id) => stored.some((k) => k.keyId === id && k.validUntilTs >= minValidUntil));
        if (useNotaries && !(stored.length > 0 && satisfied())) {
            for (const notary of this.o.trustedKeyServers) {
                if (notary.server_name === this.o.serverName || notary.server_name === serverName)
                    continue;
                const criteria = Object.fromEntries(keyIds.map((id) => [id, { minimum_valid_until_ts: minValidUntil }]));
                try {
                    const body = await this.o.transport.queryNotary(notary.server_name, { server_keys: { [serverName]: criteria } });
                    const result = keysFromNotaryResponse(body, notary, new Set([serverName]), this.o.now());
                    if (!result.ok) {
                        this.o.log.warn({ notary: notary.server_name, reason: result.reason }, "rejected a notary's key response");
                        continue;
                    }
                    if (result.skipped?.length)
                        this.o.log.warn({ notary: notary.server_name, skipped: result.skipped }, "skipped entries of a notary's key response");
                    stored.push(...result.keys);
                    if (satisfied())
                        break;
                }
                catch (err) {
                    this.o.log.info({ notary: notary.server_name, err: err.message }, "could not query a notary");
                }
            }
        }
        if (stored.length === 0)
            return false;
        await this.o.store.store(stored);
        // Memory follows what the store kept (a longer-valid stored row wins over a shorter new one).
        for (const k of stored)
            this.cache.delete(`${k.serverName}\n${k.keyId}`);
        return true;
    }
}
