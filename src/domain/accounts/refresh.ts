// POST /refresh: trades a refresh token for a new access/refresh pair (rotation). The old refresh token
// stays usable until the new access token is first used, so a client that lost the response can retry.
// Spec: Client-Server API "Refreshing access tokens".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken, newId, newToken } from "./tokens.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export interface RefreshResponse {
  access_token: string;
  refresh_token: string;
  expires_in_ms?: number;
}

export async function refresh(s: Services, refreshToken: string): Promise<RefreshResponse> {
  refuseWhenDelegated(s);
  const now = s.clock.now();
  const existing = await s.sessions.findRefreshToken(hashToken(refreshToken));
  if (!existing) throw new MatrixError("M_UNKNOWN_TOKEN", "Unknown refresh token", 401, { soft_logout: false });
  if (existing.expiryTs !== null && existing.expiryTs <= now)
    throw new MatrixError("M_UNKNOWN_TOKEN", "The refresh token has expired", 401, { soft_logout: true });
  if (existing.nextTokenId !== null && (await s.sessions.refreshSessionUsed(existing.nextTokenId)))
    throw new MatrixError("M_UNKNOWN_TOKEN", "The refresh token has already been used", 401, { soft_logout: false });

  const c = s.config;
  const ultimate = existing.ultimateSessionExpiryTs;
  const cap = (ts: number | null) => (ultimate === null ? ts : ts === null ? ultimate : Math.min(ts, ultimate));
  const access = newToken("access");
  const next = newToken("refresh");
  const nextId = newId();
  const validUntil = cap(now + c.refreshable_access_token_lifetime)!;
  await s.db.$transaction(async (tx) => {
    await s.sessions.createRefreshToken(
      tx,
      {
        id: nextId,
        tokenHash: hashToken(next),
        userId: existing.userId,
        deviceId: existing.deviceId,
        expiryTs: cap(c.refresh_token_lifetime !== undefined ? now + c.refresh_token_lifetime : null),
        ultimateSessionExpiryTs: ultimate,
      },
      now,
    );
    await s.sessions.createAccessToken(
      tx,
      { id: newId(), tokenHash: hashToken(access), userId: existing.userId, deviceId: existing.deviceId, validUntilTs: validUntil, refreshTokenId: nextId },
      now,
    );
    await s.sessions.setNextRefreshToken(tx, existing.id, nextId);
  });
  return { access_token: access, refresh_token: next, expires_in_ms: validUntil - now };
}
