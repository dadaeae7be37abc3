// Resolves an access token to a Requester (spec: Client-Server API "Client Authentication"; with
// delegated authentication, MSC3861, tokens that are no local ones go to oauth-delegation/): unknown
// tokens are M_UNKNOWN_TOKEN, expired ones add soft_logout: true; a locked account's, M_USER_LOCKED (MSC3939). Application services authenticate
// with their as_token and act as their sender, or as a user of their namespace (`user_id`) on one of
// that user's devices (`device_id`, spec v1.17 / MSC4326). Spec: Application Service API "Identity assertion".
import { accountExpiry, expiredAccount } from "./account-validity.ts";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { AccessTokenRow } from "../store/sessions.ts";
import type { Invalidation } from "../cache/invalidation.ts";
import type { Requester } from "./requester.ts";
import { hashToken } from "./tokens.ts";
import { lockedError } from "./moderation.ts";
import { delegatedRequester } from "../oauth-delegation/requester.ts";
import { appServiceForRequest, appServiceUserId, isAppServiceUser, type AppServiceRegistration } from "./appservices.ts";

interface CachedToken {
  row: AccessTokenRow;
  isGuest: boolean;
  isAdmin: boolean;
  /** When the account expires (account validity); null: never. */
  expiresTs: number | null;
  locked: boolean;
  suspended: boolean;
}

const CACHE = "get_user_by_access_token";

function tokenCache(s: Services) {
  return s.caches.get<string, CachedToken>(CACHE, 100_000);
}

/** Drops cached token lookups named by an invalidation message (an invalidation listener, src/main.ts). */
export function invalidateTokenCache(s: Services, m: Invalidation): void {
  const cache = tokenCache(s);
  if (m.kind === "user_tokens") {
    cache.deleteWhere((v) => v.row.userId === m.userId);
    appServiceUserCache(s).delete(m.userId);
    s.oauthDelegation?.forgetUser(m.userId);
  } else if (m.kind === "token") cache.delete(m.tokenHash);
}

export interface SeenFrom {
  ip: string;
  userAgent: string | null;
}

export interface AuthenticateOptions {
  /** `?user_id=`: the user an application service acts as (spec: Application Service API "Identity assertion"). */
  asUserId?: string;
  /** `?device_id=` (spec v1.17, MSC4326): the device of that user it acts as. */
  asDeviceId?: string;
  seen?: SeenFrom;
  /** The request is one an expired account may still make (logging out, asking for a renewal). */
  allowExpired?: boolean;
  /** The request is one a locked account may still make (logging out, MSC3939). */
  allowLocked?: boolean;
}

export async function authenticate(s: Services, token: string, opts: AuthenticateOptions = {}): Promise<Requester> {
  const as = appServiceForRequest(s.config, token, opts.seen?.ip);
  if (as) return appServiceRequester(s, as, opts);

  const tokenHash = hashToken(token);
  const cache = tokenCache(s);
  let entry = cache.get(tokenHash);
  if (!entry) {
    // With delegated authentication (MSC3861), a token that is no local one is the authorization server's.
    const delegated = s.oauthDelegation;
    if (delegated && (delegated.isAdminToken(token) || delegated.ownerOf(token))) return delegatedRequester(s, delegated, token, opts);
    const row = await s.sessions.findAccessToken(tokenHash);
    if (!row && delegated) return delegatedRequester(s, delegated, token, opts);
    if (!row) throw new MatrixError("M_UNKNOWN_TOKEN", "Unknown access token", 401, { soft_logout: false });
    const user = await s.users.get(row.userId);
    if (!user || user.deactivated) throw new MatrixError("M_UNKNOWN_TOKEN", "Unknown access token", 401, { soft_logout: false });
    entry = { row, isGuest: user.isGuest, isAdmin: user.isAdmin, expiresTs: await accountExpiry(s, row.userId), locked: user.locked, suspended: user.suspended };
    cache.set(tokenHash, entry);
  }
  const { row } = entry;
  if (row.validUntilTs !== null && row.validUntilTs < s.clock.now())
    throw new MatrixError("M_UNKNOWN_TOKEN", "Access token has expired", 401, { soft_logout: true });
  if (entry.expiresTs !== null && entry.expiresTs <= s.clock.now() && !opts.allowExpired) throw expiredAccount();
  if (entry.locked && !opts.allowLocked) throw lockedError();

  if (!row.used && row.refreshTokenId) {
    // First use of a refreshed token: the client has the new pair, so the old refresh token retires
    // with its access tokens (dropped from the token cache too, or a cached old token would still work).
    row.used = true;
    await s.sessions.markAccessTokenUsed(row.id);
    for (const dropped of await s.sessions.deletePredecessors(row.refreshTokenId)) s.invalidations.publish({ kind: "token", tokenHash: dropped });
    await s.invalidations.delivered();
  }
  if (opts.seen && row.deviceId)
    s.deviceActivity.record({ userId: row.userId, deviceId: row.deviceId, ts: s.clock.now(), ...opts.seen });

  return { userId: row.userId, deviceId: row.deviceId, isGuest: entry.isGuest, isAdmin: entry.isAdmin, accessTokenId: row.id, ...(entry.suspended ? { suspended: true } : {}) };
}

/**
 * The requester of an application service's request: its sender, or a user of its namespace that exists
 * (`user_id`), on one of that user's devices (`device_id`; without it, no device: operations needing one
 * refuse). Refusals as the spec and Synapse: 403 M_FORBIDDEN for a user outside its namespace or not
 * registered, 400 M_UNKNOWN_DEVICE for a device that is not that user's (the sender's, without `user_id`).
 *
 * Moderation, as Synapse: a suspended account stays suspended when a service acts as it (Synapse checks
 * suspension by user id where the action happens, so the service is refused what the user is refused,
 * 403 M_USER_SUSPENDED); locking is not applied — Synapse checks the lock only for access tokens, never
 * for as_token requests (synapse/api/auth/internal.py), so a service keeps driving a locked user.
 */
async function appServiceRequester(s: Services, as: AppServiceRegistration, opts: AuthenticateOptions): Promise<Requester> {
  const sender = appServiceUserId(s.config, as);
  const userId = opts.asUserId ?? sender;
  if (userId !== sender && !isAppServiceUser(s.config, as, userId))
    throw new MatrixError("M_FORBIDDEN", `Application service cannot masquerade as this user (${userId}).`, 403);
  const account = await appServiceUser(s, userId);
  if (userId !== sender && !account)
    throw new MatrixError("M_FORBIDDEN", `Application service has not registered this user (${userId})`, 403);
  let deviceId: string | null = null;
  if (opts.asDeviceId !== undefined) {
    if (!(await s.sessions.getDevice(userId, opts.asDeviceId)))
      throw new MatrixError("M_UNKNOWN_DEVICE", `Application service trying to use a device that doesn't exist ('${opts.asDeviceId}' for ${userId})`, 400);
    deviceId = opts.asDeviceId;
  }
  return { userId, deviceId, isGuest: false, isAdmin: false, accessTokenId: null, appserviceId: as.id, ...(account?.suspended ? { suspended: true } : {}) };
}

interface AppServiceUser {
  suspended: boolean;
}

function appServiceUserCache(s: Services) {
  return s.caches.get<string, AppServiceUser>("appservice_user", 100_000);
}

/** A registered user a service acts as (undefined: none); cached until the user changes (invalidateTokenCache). */
async function appServiceUser(s: Services, userId: string): Promise<AppServiceUser | undefined> {
  const cache = appServiceUserCache(s);
  const hit = cache.get(userId);
  if (hit) return hit;
  const user = await s.users.get(userId);
  if (!user) return undefined;
  const entry = { suspended: user.suspended };
  cache.set(userId, entry);
  return entry;
}

/**
 * Drops cached token lookups after tokens were deleted or a user changed (logout, deactivation, admin);
 * with several processes, resolves once the other processes were told (so the answer that follows is
 * true everywhere at once).
 */
export function invalidateUserTokens(s: Services, userId: string): Promise<void> {
  s.invalidations.publish({ kind: "user_tokens", userId });
  return s.invalidations.delivered();
}
