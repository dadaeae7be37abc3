import { verifyJsonSignature } from "../signing.js";
import { localKeys, crossSigningPublicKey } from "./query-keys.js";
/** Key information of every device of `userId` that published keys, by device id. */
export async function deviceKeyInfo(s, userId) {
    const read = await localKeys(s, userId, new Map([[userId, []]]));
    const ssk = read.self_signing_keys[userId];
    const sskPub = ssk ? crossSigningPublicKey(ssk) : undefined;
    const out = new Map();
    for (const [deviceId, dk] of Object.entries(read.device_keys[userId] ?? {})) {
        const k = dk;
        out.set(deviceId, {
            algorithms: k.algorithms ?? [],
            keys: k.keys ?? {},
            signatures: k.signatures ?? {},
            crossSigned: sskPub !== undefined && verifyJsonSignature(k, userId, `ed25519:${sskPub}`, sskPub),
        });
    }
    return out;
}
