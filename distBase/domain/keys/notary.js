import { badJson } from "../errors.js";
import { isValidServerName } from "../ids.js";
import { signJson } from "../signing.js";
import { buildServerKeysResponse } from "./server-keys.js";
/** Servers refreshed at once while answering one query. */
const REFRESH_CONCURRENCY = 8;
/** Validates a POST /_matrix/key/v2/query body; M_BAD_JSON when it is not `{server_keys: {name: {keyId: {...}}}}`. */
export function parseKeyQuery(body) {
    const sk = body.server_keys;
    if (typeof sk !== "object" || sk === null || Array.isArray(sk))
        throw badJson("server_keys must be an object");
    const out = {};
    for (const [server, keys] of Object.entries(sk)) {
        if (typeof keys !== "object" || keys === null || Array.isArray(keys))
            throw badJson(`server_keys.${server} must be an object`);
        const criteria = {};
        for (const [keyId, c] of Object.entries(keys)) {
            if (typeof c !== "object" || c === null || Array.isArray(c))
                throw badJson(`criteria of ${keyId} must be an object`);
            const min = c.minimum_valid_until_ts;
            if (min !== undefined && min !== null && !Number.isSafeInteger(min))
                throw badJson("minimum_valid_until_ts must be an integer");
            criteria[keyId] = typeof min === "number" ? { minimum_valid_until_ts: min } : {};
        }
        out[server] = criteria;
    }
    return out;
}
async function inBatches(items, size, fn) {
    for (let i = 0; i < items.length; i += size)
        await Promise.all(items.slice(i, i + size).map(fn));
}
/** The notary answer for `query`: `{server_keys: [signed key documents]}`. */
export async function queryServerKeys(s, query) {
    const now = s.clock.now();
    const own = s.config.server_name;
    const remote = Object.keys(query).filter((name) => name !== own && isValidServerName(name));
    // Refresh the servers whose cached keys do not cover what was asked.
    const stale = [];
    for (const name of remote) {
        const criteria = query[name];
        const rows = await s.serverKeys.forServer(name);
        const wanted = Object.keys(criteria);
        const min = Math.max(now, ...wanted.map((id) => criteria[id].minimum_valid_until_ts ?? now));
        const covered = wanted.length === 0
            ? rows.some((r) => r.expiredTs === null && r.validUntilTs >= min)
            : wanted.every((id) => rows.some((r) => r.keyId === id && r.validUntilTs >= (criteria[id].minimum_valid_until_ts ?? now)));
        if (!covered)
            stale.push({ name, min });
    }
    await inBatches(stale, REFRESH_CONCURRENCY, (x) => s.keyRing.refreshDirect(x.name, x.min));
    const docs = [];
    if (own in query) {
        docs.push(buildServerKeysResponse({ serverName: own, keys: s.signingKeys, validityMs: s.config.key_refresh_interval, now }));
    }
    for (const name of remote) {
        const wanted = new Set(Object.keys(query[name]));
        const texts = new Set();
        for (const row of await s.serverKeys.forServer(name))
            if (wanted.size === 0 || wanted.has(row.keyId))
                texts.add(row.keyJson);
        for (const text of texts) {
            let doc = JSON.parse(text);
            for (const key of s.signingKeys)
                doc = signJson(doc, own, key);
            docs.push(doc);
        }
    }
    return { server_keys: docs };
}
