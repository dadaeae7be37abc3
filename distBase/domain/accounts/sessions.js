import { generateDeviceId } from "../ids.js";
import { hashToken, newId, newToken } from "./tokens.js";
export async function startSession(s, tx, o) {
    const now = s.clock.now();
    const c = s.config;
    const deviceId = o.deviceId ?? generateDeviceId();
    await s.sessions.upsertDevice(tx, o.userId, deviceId, o.initialDisplayName, now);
    const ultimate = c.session_lifetime !== undefined ? now + c.session_lifetime : null;
    const cap = (ts) => (ultimate === null ? ts : ts === null ? ultimate : Math.min(ts, ultimate));
    const access = newToken("access");
    const out = { user_id: o.userId, device_id: deviceId, access_token: access };
    let refreshTokenId = null;
    let validUntil;
    if (o.refreshable) {
        const refresh = newToken("refresh");
        refreshTokenId = newId();
        const expiry = c.refresh_token_lifetime !== undefined ? now + c.refresh_token_lifetime : null;
        await s.sessions.createRefreshToken(tx, { id: refreshTokenId, tokenHash: hashToken(refresh), userId: o.userId, deviceId, expiryTs: cap(expiry), ultimateSessionExpiryTs: ultimate }, now);
        validUntil = cap(now + c.refreshable_access_token_lifetime);
        out.refresh_token = refresh;
    }
    else {
        validUntil = cap(c.nonrefreshable_access_token_lifetime !== undefined ? now + c.nonrefreshable_access_token_lifetime : null);
    }
    await s.sessions.createAccessToken(tx, { id: newId(), tokenHash: hashToken(access), userId: o.userId, deviceId, validUntilTs: validUntil, refreshTokenId }, now);
    if (validUntil !== null)
        out.expires_in_ms = validUntil - now;
    return out;
}
