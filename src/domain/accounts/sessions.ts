// Starts a client session: the device (created or reused) and its access token, plus a refresh token
// when the client asked for one. Lifetimes follow Synapse's refreshable/nonrefreshable/session options.
// Spec: Client-Server API "Login", "Refreshing access tokens".
import type { Services } from "../services.ts";
import type { Tx } from "../../storage/database.ts";
import { generateDeviceId } from "../ids.ts";
import { hashToken, newId, newToken } from "./tokens.ts";

export interface SessionTokens {
  user_id: string;
  device_id: string;
  access_token: string;
  refresh_token?: string;
  expires_in_ms?: number;
}

export interface StartSessionOptions {
  userId: string;
  deviceId?: string;
  initialDisplayName?: string;
  refreshable?: boolean;
}

export async function startSession(s: Services, tx: Tx, o: StartSessionOptions): Promise<SessionTokens> {
  const now = s.clock.now();
  const c = s.config;
  const deviceId = o.deviceId ?? generateDeviceId();
  await s.sessions.upsertDevice(tx, o.userId, deviceId, o.initialDisplayName, now);

  const ultimate = c.session_lifetime !== undefined ? now + c.session_lifetime : null;
  const cap = (ts: number | null) => (ultimate === null ? ts : ts === null ? ultimate : Math.min(ts, ultimate));
  const access = newToken("access");
  const out: SessionTokens = { user_id: o.userId, device_id: deviceId, access_token: access };
  let refreshTokenId: string | null = null;
  let validUntil: number | null;

  if (o.refreshable) {
    const refresh = newToken("refresh");
    refreshTokenId = newId();
    const expiry = c.refresh_token_lifetime !== undefined ? now + c.refresh_token_lifetime : null;
    await s.sessions.createRefreshToken(
      tx,
      { id: refreshTokenId, tokenHash: hashToken(refresh), userId: o.userId, deviceId, expiryTs: cap(expiry), ultimateSessionExpiryTs: ultimate },
      now,
    );
    validUntil = cap(now + c.refreshable_access_token_lifetime);
    out.refresh_token = refresh;
  } else {
    validUntil = cap(c.nonrefreshable_access_token_lifetime !== undefined ? now + c.nonrefreshable_access_token_lifetime : null);
  }
  await s.sessions.createAccessToken(
    tx,
    { id: newId(), tokenHash: hashToken(access), userId: o.userId, deviceId, validUntilTs: validUntil, refreshTokenId },
    now,
  );
  if (validUntil !== null) out.expires_in_ms = validUntil - now;
  return out;
}
