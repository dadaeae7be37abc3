// Turning another server's key answers into keys we keep: a `GET /_matrix/key/v2/server` response must be
// self-signed and name the server we asked; each entry of a notary's `POST /_matrix/key/v2/query` answer
// must be self-signed by its server and, when the notary's verify_keys are configured, signed by the
// notary too. valid_until_ts is capped at 7 days after we fetched it (room versions 5+ rule).
// Spec: Server-Server API "Retrieving server keys", keys_server / keys_query definitions.
import { verifyServerKeysResponse } from "./server-keys.js";
import { ED25519, keyAlgorithm, verifyJsonSignature } from "../signing.js";
/** Servers must not trust a key document for more than 7 days from when they fetched it. */
export const MAX_KEY_VALIDITY_MS = 7 * 86_400_000;
/** The keys a verified key document carries (current and old), ready to store. */
function keysOf(doc, fromServer, now) {
    const serverName = doc.server_name;
    const keyJson = JSON.stringify(doc);
    const validUntil = Math.min(doc.valid_until_ts, now + MAX_KEY_VALIDITY_MS);
    const out = [];
    for (const [keyId, entry] of Object.entries(doc.verify_keys)) {
        if (keyAlgorithm(keyId) !== ED25519)
            continue;
        out.push({ serverName, keyId, verifyKey: entry.key, validUntilTs: validUntil, expiredTs: null, fromServer, addedTs: now, keyJson });
    }
    for (const [keyId, entry] of Object.entries((doc.old_verify_keys ?? {}))) {
        if (keyAlgorithm(keyId) !== ED25519 || keyId in doc.verify_keys)
            continue;
        out.push({ serverName, keyId, verifyKey: entry.key, validUntilTs: entry.expired_ts, expiredTs: entry.expired_ts, fromServer, addedTs: now, keyJson });
    }
    return out;
}
/** Checks a server's own answer to GET /_matrix/key/v2/server. */
export function keysFromDirectResponse(body, serverName, now) {
    const check = verifyServerKeysResponse(body, { expectedServerName: serverName });
    if (!check.ok)
        return { ok: false, reason: check.reason };
    return { ok: true, keys: keysOf(check.response, serverName, now) };
}
/**
 * Checks a notary's answer to POST /_matrix/key/v2/query and keeps the entries for `wanted` servers
 * that pass; a bad entry is skipped (and reported), the rest still count. The whole answer fails only
 * when it is not `{server_keys: [...]}`.
 */
export function keysFromNotaryResponse(body, notary, wanted, now) {
    const list = body?.server_keys;
    if (typeof body !== "object" || body === null || !Array.isArray(list))
        return { ok: false, reason: "no server_keys array" };
    const keys = [];
    const skipped = [];
    for (const entry of list) {
        const name = entry?.server_name;
        if (typeof name !== "string" || !wanted.has(name))
            continue;
        if (notary.verify_keys) {
            const signedByNotary = Object.entries(notary.verify_keys).some(([keyId, key]) => verifyJsonSignature(entry, notary.server_name, keyId, key));
            if (!signedByNotary) {
                skipped.push(`${name}: not signed by the notary ${notary.server_name} with a configured key`);
                continue;
            }
        }
        const check = verifyServerKeysResponse(entry, { expectedServerName: name });
        if (!check.ok) {
            skipped.push(`${name}: ${check.reason}`);
            continue;
        }
        keys.push(...keysOf(check.response, notary.server_name, now));
    }
    return { ok: true, keys, skipped };
}
