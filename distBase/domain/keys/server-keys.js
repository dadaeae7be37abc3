// The server's published key document (`GET /_matrix/key/v2/server`): building it, signed by every
// current key, and checking one fetched from another server is self-signed by each of its verify_keys.
// Spec: Server-Server API, "Retrieving server keys" / "Publishing Keys"; Appendices, "Signing JSON".
import { MatrixError } from "../errors.js";
import { isValidServerName } from "../ids.js";
import { decodeBase64Strict, ED25519, keyAlgorithm, signJson, verifyJsonSignature } from "../signing.js";
/**
 * Builds the signed key document. Throws M_UNKNOWN (500) when given no current key, a non-positive
 * validity, or an old key whose id is also a current key's: all configuration mistakes.
 */
export function buildServerKeysResponse(opts) {
    const { serverName, keys, oldKeys = [], validityMs } = opts;
    const now = opts.now ?? Date.now();
    if (keys.length === 0)
        throw new MatrixError("M_UNKNOWN", "The server has no signing key", 500);
    if (!(validityMs > 0) || !Number.isFinite(validityMs)) {
        throw new MatrixError("M_UNKNOWN", "Key validity must be a positive number of milliseconds", 500);
    }
    const verify_keys = {};
    for (const k of keys)
        verify_keys[k.keyId] = { key: k.publicKeyBase64 };
    const old_verify_keys = {};
    for (const k of oldKeys) {
        if (k.keyId in verify_keys)
            throw new MatrixError("M_UNKNOWN", `Key ${k.keyId} is both current and old`, 500);
        old_verify_keys[k.keyId] = { key: k.publicKeyBase64, expired_ts: Math.floor(k.expiredTs) };
    }
    let doc = {
        server_name: serverName,
        verify_keys,
        old_verify_keys,
        valid_until_ts: Math.floor(now + validityMs),
    };
    for (const k of keys)
        doc = signJson(doc, serverName, k);
    return doc;
}
function isPlainObject(v) {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
function isPublicKeyText(v) {
    if (typeof v !== "string")
        return false;
    const raw = decodeBase64Strict(v);
    return raw !== undefined && raw.length === 32;
}
/**
 * Checks a key document fetched from a server: its shape, that `server_name` is the expected one (when
 * given), and that it is signed under `server_name` by every ed25519 key in `verify_keys` (keys of other
 * algorithms are ignored, as the spec's signature check says; at least one ed25519 key must be present).
 * Never throws.
 */
export function verifyServerKeysResponse(obj, opts = {}) {
    const fail = (reason) => ({ ok: false, reason });
    if (!isPlainObject(obj))
        return fail("not a JSON object");
    const serverName = obj.server_name;
    if (typeof serverName !== "string" || !isValidServerName(serverName))
        return fail("server_name is missing or invalid");
    if (opts.expectedServerName !== undefined && serverName !== opts.expectedServerName) {
        return fail(`server_name ${JSON.stringify(serverName)} is not ${JSON.stringify(opts.expectedServerName)}`);
    }
    if (typeof obj.valid_until_ts !== "number" || !Number.isSafeInteger(obj.valid_until_ts)) {
        return fail("valid_until_ts is missing or not an integer");
    }
    if (!isPlainObject(obj.verify_keys))
        return fail("verify_keys is missing or not an object");
    if (obj.old_verify_keys !== undefined && !isPlainObject(obj.old_verify_keys))
        return fail("old_verify_keys is not an object");
    if (!isPlainObject(obj.signatures))
        return fail("signatures is missing or not an object");
    const ed25519Keys = [];
    for (const [keyId, entry] of Object.entries(obj.verify_keys)) {
        if (keyAlgorithm(keyId) !== ED25519)
            continue;
        if (!isPlainObject(entry) || !isPublicKeyText(entry.key))
            return fail(`verify key ${keyId} is malformed`);
        ed25519Keys.push([keyId, entry.key]);
    }
    if (ed25519Keys.length === 0)
        return fail("no ed25519 verify key");
    for (const [keyId, entry] of Object.entries(obj.old_verify_keys ?? {})) {
        if (keyAlgorithm(keyId) !== ED25519)
            continue;
        if (!isPlainObject(entry) || !isPublicKeyText(entry.key) || typeof entry.expired_ts !== "number" || !Number.isSafeInteger(entry.expired_ts)) {
            return fail(`old verify key ${keyId} is malformed`);
        }
    }
    for (const [keyId, key] of ed25519Keys) {
        if (!verifyJsonSignature(obj, serverName, keyId, key))
            return fail(`not signed by its own key ${keyId}`);
    }
    const response = { old_verify_keys: {}, ...obj };
    return { ok: true, response };
}
