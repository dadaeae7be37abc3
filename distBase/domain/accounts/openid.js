// OpenID tokens: a user asks for a short-lived token (POST /user/{userId}/openid/request_token) to hand to
// a third party (widgets, integration managers), which exchanges it with this server for the user id
// (GET /_matrix/federation/v1/openid/userinfo). A token is self-verifying — user id, expiry and an HMAC
// keyed from the server's signing key — so nothing is stored, in clear or not. Lifetime one hour, as
// Synapse. Spec: Client-Server API "OpenID"; Server-Server API "OpenID".
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { MatrixError, forbidden } from "../errors.js";
import { requireNotGuest } from "./guest-access.js";
export const OPENID_TOKEN_LIFETIME_MS = 3_600_000;
function mac(s, payload) {
    const key = Buffer.from(hkdfSync("sha256", s.signingKeys[0].seed, Buffer.alloc(0), "weft openid token", 32));
    return createHmac("sha256", key).update(payload).digest("base64url");
}
export function requestOpenIdToken(s, r, userId) {
    requireNotGuest(r, "requestOpenIdToken");
    if (userId !== r.userId)
        throw forbidden("Cannot request tokens for other users.");
    const payload = `${Buffer.from(userId).toString("base64url")}.${s.clock.now() + OPENID_TOKEN_LIFETIME_MS}`;
    return {
        access_token: `${payload}.${mac(s, payload)}`,
        token_type: "Bearer",
        matrix_server_name: s.config.server_name,
        expires_in: OPENID_TOKEN_LIFETIME_MS / 1000,
    };
}
/** The user an OpenID token names: M_MISSING_TOKEN without one, M_UNKNOWN_TOKEN if forged, expired or the user is gone. */
export async function openIdUserInfo(s, token) {
    if (!token)
        throw new MatrixError("M_MISSING_TOKEN", "Access Token required", 401);
    const unknown = new MatrixError("M_UNKNOWN_TOKEN", "Access Token unknown or expired", 401);
    const parts = token.split(".");
    if (parts.length !== 3)
        throw unknown;
    const [user, expiry, sig] = parts;
    const expected = Buffer.from(mac(s, `${user}.${expiry}`));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw unknown;
    if (!/^\d+$/.test(expiry) || Number(expiry) < s.clock.now())
        throw unknown;
    const userId = Buffer.from(user, "base64url").toString("utf8");
    const row = await s.users.get(userId);
    if (!row || row.deactivated)
        throw unknown;
    return { sub: userId };
}
