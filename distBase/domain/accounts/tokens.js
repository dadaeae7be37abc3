// Opaque secrets handed to clients (access, refresh, login tokens) and the hashes we store instead.
// High-entropy random tokens need no slow hash: SHA-256 is enough and keeps the lookup fast.
import { createHash, randomBytes } from "node:crypto";
const PREFIX = { access: "wft_", refresh: "wfr_", login: "wfl_" };
export function newToken(kind) {
    return PREFIX[kind] + randomBytes(24).toString("base64url");
}
export function hashToken(token) {
    return createHash("sha256").update(token).digest("hex");
}
export function newId() {
    return randomBytes(12).toString("base64url");
}
