// Server admins changing accounts (Synapse admin API "User Admin API"): create or modify an account
// (PUT /v2/users/{userId}), deactivate (with erase), reset a password, grant or revoke admin rights, and
// log in as a user. Every operation refuses non-admins (403 M_FORBIDDEN); the password policy applies.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { requireAdmin } from "./require-admin.ts";
import { existingLocalUser, localUserId } from "./users.ts";
import { checkPasswordPolicy, hashPassword } from "../accounts/passwords.ts";
import { deleteDevices } from "../devices/delete-devices.ts";
import { invalidateUserTokens } from "../accounts/authenticate.ts";
import { deactivateAccount } from "../accounts/deactivate.ts";
import { createAccount } from "../accounts/register.ts";
import { setAvatarUrl, setDisplayName } from "../profile/profile.ts";
import { hashToken, newId, newToken } from "../accounts/tokens.ts";
import { AdminReads } from "../store/admin-reads.ts";
import { USER_TYPES } from "./shared-secret-registration.ts";
import { isValidLocalpartForRegistration } from "../ids.ts";
import { checkIdentifiersFree, parseExternalIds, parseThreepids, replaceExternalIds, replaceThreepids } from "./user-identifiers.ts";
import { writeModerationFlag } from "../accounts/moderation.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";
import { storeNewPassword } from "../accounts/set-password.ts";

type Body = Record<string, unknown>;

function opt<T>(body: Body, key: string, type: "string" | "boolean"): T | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (typeof v !== type) throw new MatrixError("M_INVALID_PARAM", `${key} must be a ${type}`, 400);
  return v as T;
}

/** Checks the password against `password_config` and hashes it. */
async function newPasswordHash(s: Services, password: string): Promise<string> {
  if (!s.config.password_config.enabled || !s.config.password_config.localdb_enabled)
    throw new MatrixError("M_FORBIDDEN", "Setting a password is disabled on this server", 403);
  if (password.length > 512) throw new MatrixError("M_INVALID_PARAM", "Invalid password", 400);
  checkPasswordPolicy(password, s.config.password_config.policy);
  return hashPassword(password, s.config.password_config.scrypt_log_n);
}

/** Stores a new password hash; unless `logoutDevices` is false every session of the user ends. */
async function setPassword(s: Services, userId: string, hash: string, logoutDevices: boolean): Promise<void> {
  await storeNewPassword(s, userId, hash);
  if (!logoutDevices) return;
  await deleteDevices(s, userId, await s.sessions.deviceIds(userId));
  await s.db.$transaction(async (tx) => {
    await s.sessions.deleteAccessTokensOfUser(tx, userId);
    await s.sessions.deleteRefreshTokensOfUser(tx, userId);
  });
  await invalidateUserTokens(s, userId);
}

/**
 * PUT /v2/users/{userId}: creates the account (201) or changes the given fields (200); answers the
 * account's details. Synapse's rules: an admin may not demote themselves; reactivating needs a password.
 */
export async function putUser(s: Services, r: Requester, userId: string, body: Body): Promise<{ created: boolean }> {
  requireAdmin(r);
  localUserId(s, userId, "create or modify");
  const password = opt<string>(body, "password", "string");
  const logoutDevices = opt<boolean>(body, "logout_devices", "boolean") ?? true;
  const displayname = opt<string>(body, "displayname", "string");
  const avatarUrl = opt<string>(body, "avatar_url", "string");
  const admin = opt<boolean>(body, "admin", "boolean");
  const deactivated = opt<boolean>(body, "deactivated", "boolean");
  const locked = opt<boolean>(body, "locked", "boolean");
  const userType = body.user_type;
  if (userType !== undefined && userType !== null && !(USER_TYPES as readonly unknown[]).includes(userType))
    throw new MatrixError("M_INVALID_PARAM", "Invalid user type", 400);
  if (avatarUrl !== undefined && avatarUrl !== "" && !avatarUrl.startsWith("mxc://"))
    throw new MatrixError("M_INVALID_PARAM", "avatar_url must be an MXC URI", 400);
  const threepids = body.threepids === undefined ? undefined : parseThreepids(body.threepids);
  const externalIds = body.external_ids === undefined ? undefined : parseExternalIds(body.external_ids);
  await checkIdentifiersFree(s, userId, threepids, externalIds);
  const setIdentifiers = async () => {
    if (threepids) await replaceThreepids(s, userId, threepids);
    if (externalIds) await replaceExternalIds(s, userId, externalIds);
  };

  const existing = await new AdminReads(s.storage.sql).user(userId);
  if (!existing && s.config.oauth_delegation)
    throw new MatrixError("M_FORBIDDEN", "User creation via the Admin API is not available when authentication is delegated (MSC3861): create the user at the authorization server", 403);
  if (!existing) {
    const localpart = userId.slice(1, userId.indexOf(":"));
    if (!isValidLocalpartForRegistration(localpart, s.config.server_name)) throw new MatrixError("M_INVALID_USERNAME", "Invalid user ID", 400);
    const hash = password !== undefined ? await newPasswordHash(s, password) : null;
    await createAccount(s, { inhibit_login: true }, {
      userId,
      passwordHash: hash,
      isAdmin: admin ?? false,
      userType: (userType as string | null | undefined) ?? null,
      displayname: displayname === "" ? undefined : displayname,
    });
    if (displayname === "") await setDisplayName(s, r, userId, null);
    if (avatarUrl) await setAvatarUrl(s, r, userId, avatarUrl);
    await setIdentifiers();
    if (deactivated === true) await deactivateAccount(s, userId, false);
    if (locked !== undefined) await writeModerationFlag(s, userId, "locked", locked);
    return { created: true };
  }

  if (admin === false && userId === r.userId) throw new MatrixError("M_FORBIDDEN", "You may not demote yourself.", 400);
  if (deactivated === false && existing.deactivated && password === undefined && s.config.password_config.localdb_enabled)
    throw new MatrixError("M_INVALID_PARAM", "Must provide a password to re-activate an account.", 400);
  const hash = password !== undefined ? await newPasswordHash(s, password) : undefined;

  if (deactivated === true && !existing.deactivated) await deactivateAccount(s, userId, false);
  if (deactivated === false && existing.deactivated) await s.db.user.update({ where: { userId }, data: { deactivated: false } });
  if (hash !== undefined) await setPassword(s, userId, hash, logoutDevices);
  if (admin !== undefined && admin !== existing.admin) await s.users.setAdmin(userId, admin);
  if (locked !== undefined && locked !== existing.locked) await writeModerationFlag(s, userId, "locked", locked);
  if (userType !== undefined) await s.db.user.update({ where: { userId }, data: { userType: userType as string | null } });
  if (admin !== undefined || userType !== undefined || deactivated !== undefined) await invalidateUserTokens(s, userId);
  const active = deactivated === false || (deactivated === undefined && !existing.deactivated);
  if (active && displayname !== undefined && displayname !== existing.displayname) await setDisplayName(s, r, userId, displayname || null);
  if (active && avatarUrl !== undefined && avatarUrl !== existing.avatarUrl) await setAvatarUrl(s, r, userId, avatarUrl || null);
  await setIdentifiers();
  return { created: false };
}

/** POST /v1/deactivate/{userId} with `erase`: deactivates a local account (idempotent, as Synapse). */
export async function adminDeactivate(s: Services, r: Requester, userId: string, body: Body): Promise<{ id_server_unbind_result: string }> {
  requireAdmin(r);
  localUserId(s, userId, "deactivate");
  const erase = body.erase ?? false;
  if (typeof erase !== "boolean") throw new MatrixError("M_BAD_JSON", "Param 'erase' must be a boolean, if given", 400);
  await existingLocalUser(s, userId, "deactivate");
  await deactivateAccount(s, userId, erase);
  return { id_server_unbind_result: "success" };
}

/** POST /v1/reset_password/{userId}: `new_password` (required), `logout_devices` (default true). */
export async function adminResetPassword(s: Services, r: Requester, userId: string, body: Body): Promise<void> {
  refuseWhenDelegated(s);
  requireAdmin(r);
  localUserId(s, userId, "reset the password of");
  const pw = body.new_password;
  if (pw === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing param new_password", 400);
  if (typeof pw !== "string") throw new MatrixError("M_INVALID_PARAM", "new_password must be a string", 400);
  const logout = opt<boolean>(body, "logout_devices", "boolean") ?? true;
  await existingLocalUser(s, userId);
  await setPassword(s, userId, await newPasswordHash(s, pw), logout);
}

/** PUT /v1/users/{userId}/admin `{admin}`: grants or revokes server admin rights (never one's own). */
export async function setServerAdmin(s: Services, r: Requester, userId: string, body: Body): Promise<void> {
  refuseWhenDelegated(s);
  requireAdmin(r);
  const admin = body.admin;
  if (admin === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing param admin", 400);
  if (typeof admin !== "boolean") throw new MatrixError("M_INVALID_PARAM", "admin must be a boolean", 400);
  await existingLocalUser(s, userId, "set admin status of");
  if (userId === r.userId) throw new MatrixError("M_FORBIDDEN", "You may not demote yourself.", 400);
  await s.users.setAdmin(userId, admin);
  await invalidateUserTokens(s, userId);
}

/**
 * POST /v1/users/{userId}/login `{valid_until_ms?}`: an access token of the user, made for (and marked
 * as puppeted by) the admin, with no device of its own. Never one's own; never a deactivated account.
 */
export async function loginAsUser(s: Services, r: Requester, userId: string, body: Body): Promise<{ access_token: string }> {
  refuseWhenDelegated(s);
  requireAdmin(r);
  const validUntil = body.valid_until_ms;
  if (validUntil !== undefined && validUntil !== null && (typeof validUntil !== "number" || !Number.isSafeInteger(validUntil)))
    throw new MatrixError("M_INVALID_PARAM", "valid_until_ms must be an integer", 400);
  const now = s.clock.now();
  if (typeof validUntil === "number" && validUntil < now) throw new MatrixError("M_INVALID_PARAM", "'valid_until_ms' is in the past", 400);
  const user = await existingLocalUser(s, userId, "generate tokens for");
  if (userId === r.userId) throw new MatrixError("M_UNKNOWN", "Cannot use admin API to login as self", 400);
  if (user.deactivated) throw new MatrixError("M_FORBIDDEN", "User is deactivated", 403);
  const token = newToken("access");
  await s.db.$transaction((tx) =>
    s.sessions.createAccessToken(
      tx,
      { id: newId(), tokenHash: hashToken(token), userId, deviceId: null, validUntilTs: typeof validUntil === "number" ? validUntil : null, refreshTokenId: null, puppetsUserId: r.userId },
      now,
    ),
  );
  return { access_token: token };
}

/** PUT /v1/suspend/{userId} `{suspend}` (Synapse's admin API for MSC3823): `{"user_<id>_suspended": bool}`. */
export async function adminSuspend(s: Services, r: Requester, userId: string, body: Body): Promise<Record<string, boolean>> {
  requireAdmin(r);
  localUserId(s, userId, "suspend");
  const suspend = body.suspend;
  if (typeof suspend !== "boolean") throw new MatrixError("M_BAD_JSON", "suspend must be a boolean", 400);
  await existingLocalUser(s, userId);
  await writeModerationFlag(s, userId, "suspended", suspend);
  return { [`user_${userId}_suspended`]: suspend };
}
