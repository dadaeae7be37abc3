// Small readers for the E2EE request bodies, each failing with the spec's error; and the canonical
// comparisons the key rules use. Spec: Client-Server API "End-to-End Encryption".
import { MatrixError } from "../errors.js";
import { canonicalJson } from "../canonical-json.js";
import { isPlainObject } from "../events/types.js";
export { isPlainObject };
export function objectField(body, name, required = false) {
    const v = body[name];
    if (v === undefined || v === null) {
        if (required)
            throw new MatrixError("M_MISSING_PARAM", `Missing ${name}`, 400);
        return undefined;
    }
    if (!isPlainObject(v))
        throw new MatrixError("M_BAD_JSON", `${name} must be an object`, 400);
    return v;
}
/** Canonical JSON of the object without `signatures` and `unsigned` (what a signature covers). */
export function signedPart(obj) {
    const { signatures: _s, unsigned: _u, ...rest } = obj;
    return canonicalJson(rest);
}
/** The requester's device id; key uploads and to-device sending need one. */
export function requireDevice(r) {
    if (!r.deviceId)
        throw new MatrixError("M_INVALID_PARAM", "This access token has no device: log in with a device to use end-to-end encryption", 400);
    return r.deviceId;
}
export function parseJson(text) {
    return JSON.parse(text);
}
/** Merges stored signatures into an object's `signatures` (the object is copied). */
export function withSignatures(obj, extra) {
    if (extra.length === 0)
        return obj;
    const sigs = {};
    if (isPlainObject(obj.signatures))
        for (const [k, v] of Object.entries(obj.signatures))
            if (isPlainObject(v))
                sigs[k] = { ...v };
    for (const e of extra)
        (sigs[e.signer] ??= {})[e.keyId] = e.signature;
    return { ...obj, signatures: sigs };
}
