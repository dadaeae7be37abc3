// Ed25519 signing and verification of raw bytes and of JSON objects, with cached node:crypto KeyObjects.
// Spec: Appendices, "Signing JSON" ("Signing Details", "Checking for a Signature") and "Unpadded Base64".
// Event content hashes and event signing rules (redaction first) belong to src/domain/events.
import { createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify } from "node:crypto";
import { base64Unpadded, canonicalJson } from "./canonical-json.js";
import { LruCache } from "./cache/lru.js";
/** The only signing algorithm Matrix defines. */
export const ED25519 = "ed25519";
// DER prefixes of an Ed25519 PKCS#8 private key (RFC 8410) and SPKI public key; the raw 32 bytes follow.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;
const BASE64_CHARS = /^[A-Za-z0-9+/_-]*={0,2}$/;
// LRUs of KeyObjects. Parsing a key costs far more than a verify's map lookup, and federation verifies
// the same few thousand remote keys again and again.
const publicKeys = new LruCache("ed25519_public_keys", 10_000);
const privateKeys = new LruCache("ed25519_private_keys", 64);
/**
 * Decodes Matrix base64 (unpadded or padded, standard or URL-safe) strictly enough to tell garbage from
 * data: returns undefined for characters outside the alphabet or a length no encoding produces.
 */
export function decodeBase64Strict(s) {
    if (typeof s !== "string" || !BASE64_CHARS.test(s))
        return undefined;
    const body = s.replace(/=+$/, "");
    if (body.length % 4 === 1)
        return undefined;
    if (s.length !== body.length && s.length % 4 !== 0)
        return undefined;
    return Buffer.from(body.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}
/** Builds the private KeyObject of a 32-byte Ed25519 seed (cached). Throws on a seed of the wrong size. */
export function privateKeyFromSeed(seed) {
    if (seed.length !== KEY_BYTES)
        throw new Error(`An Ed25519 seed is ${KEY_BYTES} bytes, got ${seed.length}`);
    const cacheKey = Buffer.from(seed).toString("base64");
    let key = privateKeys.get(cacheKey);
    if (!key) {
        key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
        privateKeys.set(cacheKey, key);
    }
    return key;
}
/** The raw 32-byte public key of a private (or public) Ed25519 KeyObject. */
export function rawPublicKey(key) {
    const pub = key.type === "private" ? createPublicKey(key) : key;
    const der = pub.export({ format: "der", type: "spki" });
    return der.subarray(der.length - KEY_BYTES);
}
/** Builds the public KeyObject of a raw 32-byte Ed25519 public key (cached). Throws on a key of the wrong size. */
export function publicKeyFromBytes(publicKey) {
    if (publicKey.length !== KEY_BYTES)
        throw new Error(`An Ed25519 public key is ${KEY_BYTES} bytes, got ${publicKey.length}`);
    return publicKeyFromBase64Internal(base64Unpadded(publicKey), Buffer.from(publicKey));
}
/**
 * The public KeyObject of an unpadded-base64 Ed25519 public key (cached by its text), or undefined when
 * the text is not a 32-byte key.
 */
export function publicKeyFromBase64(publicKeyBase64) {
    const cached = publicKeys.get(publicKeyBase64);
    if (cached)
        return cached;
    const raw = decodeBase64Strict(publicKeyBase64);
    if (!raw || raw.length !== KEY_BYTES)
        return undefined;
    try {
        return publicKeyFromBase64Internal(publicKeyBase64, raw);
    }
    catch {
        return undefined;
    }
}
function publicKeyFromBase64Internal(cacheKey, raw) {
    let key = publicKeys.get(cacheKey);
    if (!key) {
        key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
        publicKeys.set(cacheKey, key);
    }
    return key;
}
/** Signs bytes with an Ed25519 private key: the 64-byte signature. */
export function signBytes(data, privateKey) {
    return cryptoSign(null, data, privateKey);
}
/**
 * Checks an Ed25519 signature over bytes. The key is a KeyObject, raw 32 bytes or unpadded base64; the
 * signature raw 64 bytes or base64. Never throws: anything malformed is simply not a valid signature.
 */
export function verifyBytes(data, signature, publicKey) {
    try {
        const sig = typeof signature === "string" ? decodeBase64Strict(signature) : signature;
        if (!sig || sig.length !== SIGNATURE_BYTES)
            return false;
        let key;
        if (typeof publicKey === "string")
            key = publicKeyFromBase64(publicKey);
        else if (publicKey instanceof Uint8Array)
            key = publicKey.length === KEY_BYTES ? publicKeyFromBytes(publicKey) : undefined;
        else
            key = publicKey;
        if (!key)
            return false;
        return cryptoVerify(null, data, key, sig);
    }
    catch {
        return false;
    }
}
/** The algorithm part of a key id (`ed25519:abc` → `ed25519`). */
export function keyAlgorithm(keyId) {
    const i = keyId.indexOf(":");
    return i < 0 ? keyId : keyId.slice(0, i);
}
function isPlainObject(v) {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
/**
 * The bytes a JSON signature covers: the object without `signatures` and `unsigned`, as canonical JSON
 * in UTF-8. Throws M_BAD_JSON if the object holds values canonical JSON cannot encode.
 */
export function signingBytes(obj) {
    const { signatures: _s, unsigned: _u, ...rest } = obj;
    return Buffer.from(canonicalJson(rest), "utf8");
}
/**
 * Signs a JSON object: returns a copy with `signatures[signerName][key.keyId]` set, keeping `unsigned`
 * and every other signature. The input is not modified. Throws M_BAD_JSON for non-canonical values.
 */
export function signJson(obj, signerName, key) {
    const record = obj;
    const signature = base64Unpadded(signBytes(signingBytes(record), key.privateKey));
    // Object.fromEntries makes own properties for every name, "__proto__" included.
    const entries = [];
    let mine = [];
    if (isPlainObject(record.signatures)) {
        for (const [entity, sigs] of Object.entries(record.signatures)) {
            if (!isPlainObject(sigs))
                continue;
            const pairs = Object.entries(sigs).filter((e) => typeof e[1] === "string");
            if (entity === signerName)
                mine = pairs.filter(([id]) => id !== key.keyId);
            else
                entries.push([entity, Object.fromEntries(pairs)]);
        }
    }
    entries.push([signerName, Object.fromEntries([...mine, [key.keyId, signature]])]);
    return { ...obj, signatures: Object.fromEntries(entries) };
}
/** The key ids under which `signerName` signed the object (empty when it did not). */
export function signatureKeyIds(obj, signerName) {
    if (!isPlainObject(obj) || !isPlainObject(obj.signatures))
        return [];
    const sigs = obj.signatures[signerName];
    return isPlainObject(sigs) ? Object.keys(sigs).filter((k) => typeof sigs[k] === "string") : [];
}
/**
 * Checks that `signerName` signed the object with the key `keyId`, whose public key is given as unpadded
 * base64 (or a KeyObject). Spec "Checking for a Signature". Never throws: a missing or malformed
 * signature, an unknown algorithm, a bad key or a non-canonical object all give false.
 */
export function verifyJsonSignature(obj, signerName, keyId, publicKey) {
    try {
        if (!isPlainObject(obj) || !isPlainObject(obj.signatures))
            return false;
        if (keyAlgorithm(keyId) !== ED25519)
            return false;
        const sigs = obj.signatures[signerName];
        if (!isPlainObject(sigs))
            return false;
        const signature = sigs[keyId];
        if (typeof signature !== "string")
            return false;
        return verifyBytes(signingBytes(obj), signature, publicKey);
    }
    catch {
        return false;
    }
}
