// Resolves an access token to a Requester (spec: Client-Server API "Client Authentication"): unknown
// tokens are M_UNKNOWN_TOKEN, expired ones add soft_logout: true. Application services authenticate
// with their as_token and may act as any user in their namespace (`user_id` query parameter).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { AccessTokenRow } from "../store/sessions.ts";
import type { Invalidation } from "../cache/invalidation.ts";
import type { Requester } from "./requester.ts";
import { hashToken } from "./tokens.ts";
import { appServiceByToken, appServiceUserId, isInNamespace } from "./appservices.ts";

interface CachedToken {
  row: AccessTokenRow;
  isGuest: boolean;
  isAdmin: boolean;
}

const CACHE = "get_user_by_access_token";

function tokenCache(s: Services) {
  return s.caches.get<string, CachedToken>(CACHE, 100_000);
}

/** Drops cached token lookups named by an invalidation message (an invalidation listener, src/main.ts). */
export function invalidateTokenCache(s: Services, m: Invalidation): void {
  const cache = tokenCache(s);
  if (m.kind === "user_tokens") cache.deleteWhere((v) => v.row.userId === m.userId);
  else if (m.kind === "token") cache.delete(m.tokenHash);
}

export interface SeenFrom {
  ip: string;
  userAgent: string | null;
}

export async function authenticate(s: Services, token: string, opts: { asUserId?: string; seen?: SeenFrom } = {}): Promise<Requester> {
  const as = appServiceByToken(s.config, token);
  if (as) {
    const userId = opts.asUserId ?? appServiceUserId(s.config, as);
    if (userId !== appServiceUserId(s.config, as) && !isInNamespace(as, "users", userId))
      throw new MatrixError("M_EXCLUSIVE", "Application service cannot masquerade as this user", 403);
    if (opts.asUserId && !(await s.users.exists(userId)))
      throw new MatrixError("M_FORBIDDEN", "Application service has not registered this user", 403);
    return { userId, deviceId: null, isGuest: false, isAdmin: false, accessTokenId: null, appserviceId: as.id };
  }

  const tokenHash = hashToken(token);
  const cache = tokenCache(s);
  let entry = cache.get(tokenHash);
  if (!entry) {
    const row = await s.sessions.findAccessToken(tokenHash);
    if (!row) throw new MatrixError("M_UNKNOWN_TOKEN", "Unknown access token", 401, { soft_logout: false });
    const user = await s.users.get(row.userId);
    if (!user || user.deactivated) throw new MatrixError("M_UNKNOWN_TOKEN", "Unknown access token", 401, { soft_logout: false });
    entry = { row, isGuest: user.isGuest, isAdmin: user.isAdmin };
    cache.set(tokenHash, entry);
  }
  const { row } = entry;
  if (row.validUntilTs !== null && row.validUntilTs < s.clock.now())
    throw new MatrixError("M_UNKNOWN_TOKEN", "Access token has expired", 401, { soft_logout: true });

  if (!row.used && row.refreshTokenId) {
    // First use of a refreshed token: the client has the new pair, so the old refresh token retires.
    row.used = true;
    await s.sessions.markAccessTokenUsed(row.id);
    await s.sessions.deletePredecessors(row.refreshTokenId);
  }
  if (opts.seen && row.deviceId)
    s.deviceActivity.record({ userId: row.userId, deviceId: row.deviceId, ts: s.clock.now(), ...opts.seen });

  return { userId: row.userId, deviceId: row.deviceId, isGuest: entry.isGuest, isAdmin: entry.isAdmin, accessTokenId: row.id };
}

/** Drops cached token lookups after tokens were deleted or a user changed (logout, deactivation, admin). */
export function invalidateUserTokens(s: Services, userId: string): void {
  s.invalidations.publish({ kind: "user_tokens", userId });
}
