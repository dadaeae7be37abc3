// The API Matrix Authentication Service drives a homeserver with (Synapse's /_synapse/mas/*, served only
// with `matrix_authentication_service` on, and only to its shared secret): MAS owns accounts and
// sessions, so it provisions users (profile, e-mail addresses, lock), checks localparts, deactivates and
// reactivates accounts, and keeps each user's devices in step with its sessions; it approves
// cross-signing resets too.
import { MatrixError, notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { createAccount } from "../accounts/register.ts";
import { checkUsername } from "../accounts/usernames.ts";
import { deactivateAccount } from "../accounts/deactivate.ts";
import { invalidateUserTokens } from "../accounts/authenticate.ts";
import { writeModerationFlag } from "../accounts/moderation.ts";
import { setAvatarUrl, setDisplayName } from "../profile/profile.ts";
import { deleteDevices } from "../devices/delete-devices.ts";
import { runDeviceUpdateHooks } from "../devices/update-device.ts";
import { REPLACEMENT_PERIOD_MS } from "../admin/cross-signing-replacement.ts";
import { canonicalEmail } from "../threepids/email-validation.ts";
import { unbindEverywhere } from "../threepids/identity-binding.ts";
import { ADMIN_TOKEN_LOCALPART } from "./requester.ts";
import { sameSecret } from "./client-auth.ts";

type Body = Record<string, unknown>;

/** Refuses everyone but MAS: unknown endpoint without MAS integration, 403 for another token (as Synapse). */
export function requireMas(s: Services, bearer: string | undefined): void {
  const d = s.oauthDelegation;
  if (!d || d.config.client.method !== "bearer") throw new MatrixError("M_UNRECOGNIZED", "Unrecognized request", 404);
  if (bearer === undefined || !sameSecret(bearer, d.config.client.secret))
    throw new MatrixError("M_FORBIDDEN", "This endpoint must only be called by MAS", 403);
}

/** The requester MAS's profile changes are made as: a server admin, as Synapse's `by_admin`. */
const masRequester = (s: Services): Requester => ({
  userId: `@${ADMIN_TOKEN_LOCALPART}:${s.config.server_name}`, deviceId: null, isGuest: false, isAdmin: true, accessTokenId: null,
});

function str(body: Body, key: string): string {
  const v = body[key];
  if (v === undefined || v === null) throw new MatrixError("M_MISSING_PARAM", `Missing parameter: ${key}`, 400);
  if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${key} must be a string`, 400);
  return v;
}
function optStr(body: Body, key: string): string | undefined {
  return body[key] === undefined || body[key] === null ? undefined : str(body, key);
}
function optBool(body: Body, key: string): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw new MatrixError("M_BAD_JSON", `${key} must be a boolean`, 400);
  return v;
}

const userIdOf = (s: Services, localpart: string) => `@${localpart}:${s.config.server_name}`;

async function existingUser(s: Services, localpart: string) {
  const userId = userIdOf(s, localpart);
  const user = await s.users.get(userId);
  if (!user) throw notFound("User not found");
  return { userId, user };
}

/** GET /_synapse/mas/query_user?localpart= */
export async function masQueryUser(s: Services, localpart: string) {
  const { userId, user } = await existingUser(s, localpart);
  const profile = await s.users.getProfile(userId);
  return { user_id: userId, display_name: profile?.displayname ?? null, avatar_url: profile?.avatarUrl ?? null, is_suspended: user.suspended, is_deactivated: user.deactivated };
}

/** POST /_synapse/mas/provision_user: creates or updates the account; `created` says which. */
export async function masProvisionUser(s: Services, body: Body): Promise<{ created: boolean }> {
  const localpart = str(body, "localpart");
  for (const f of ["displayname", "avatar_url", "emails"])
    if (body[`set_${f}`] !== undefined && body[`unset_${f}`] !== undefined) throw new MatrixError("M_BAD_JSON", `Cannot specify both unset_${f} and set_${f}`, 400);
  const setDisplayname = optStr(body, "set_displayname");
  const unsetDisplayname = optBool(body, "unset_displayname") ?? false;
  const setAvatar = optStr(body, "set_avatar_url");
  const unsetAvatar = optBool(body, "unset_avatar_url") ?? false;
  const locked = optBool(body, "locked");
  const emails = optBool(body, "unset_emails") ? [] : body.set_emails === undefined || body.set_emails === null ? undefined : emailList(body.set_emails);
  const userId = userIdOf(s, localpart);
  const r = masRequester(s);
  const created = !(await s.users.exists(userId));
  if (created) {
    await checkUsername(s, localpart);
    await createAccount(s, { inhibit_login: true }, { userId, passwordHash: null, displayname: setDisplayname });
  } else if (unsetDisplayname || setDisplayname !== undefined) {
    await setDisplayName(s, r, userId, unsetDisplayname ? null : setDisplayname!);
  }
  if (emails !== undefined) await syncEmails(s, userId, emails);
  if (locked !== undefined) await writeModerationFlag(s, userId, "locked", locked);
  if (unsetAvatar || setAvatar !== undefined) await setAvatarUrl(s, r, userId, unsetAvatar ? null : setAvatar!);
  return { created };
}

function emailList(v: unknown): string[] {
  if (!Array.isArray(v) || v.some((e) => typeof e !== "string")) throw new MatrixError("M_BAD_JSON", "set_emails must be a list of strings", 400);
  return [...new Set((v as string[]).map((e) => {
    try {
      return canonicalEmail(e);
    } catch {
      throw new MatrixError("M_INVALID_PARAM", `Not an e-mail address: ${e}`, 400);
    }
  }))];
}

/** The account's e-mail addresses become `emails` (validated by MAS): others are unbound and dropped. */
async function syncEmails(s: Services, userId: string, emails: string[]): Promise<void> {
  const current = (await s.threepids.ofUser(userId)).filter((t) => t.medium === "email").map((t) => t.address);
  for (const address of emails) {
    const owner = await s.threepids.owner("email", address);
    if (owner !== null && owner !== userId) throw new MatrixError("M_THREEPID_IN_USE", `${address} is already in use`, 400);
  }
  for (const address of current.filter((a) => !emails.includes(a))) {
    await unbindEverywhere(s, userId, "email", address, undefined).catch((err: unknown) => s.log.info({ err, userId }, "MAS: could not unbind an address"));
    await s.threepids.remove(userId, "email", address);
  }
  const now = s.clock.now();
  for (const address of emails.filter((a) => !current.includes(a)))
    await s.db.$transaction((tx) => s.threepids.add(tx, { medium: "email", address, userId, validatedAt: now, addedAt: now }));
}

/** GET /_synapse/mas/is_localpart_available?localpart=: {} when free, else registration's error. */
export async function masIsLocalpartAvailable(s: Services, localpart: string | undefined): Promise<Record<string, never>> {
  if (localpart === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing localpart", 400);
  await checkUsername(s, localpart);
  return {};
}

/** POST /_synapse/mas/delete_user {localpart, erase}: deactivates the account. */
export async function masDeleteUser(s: Services, body: Body): Promise<Record<string, never>> {
  const erase = optBool(body, "erase");
  if (erase === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing parameter: erase", 400);
  const { userId } = await existingUser(s, str(body, "localpart"));
  await deactivateAccount(s, userId, erase);
  return {};
}

/** POST /_synapse/mas/reactivate_user {localpart} */
export async function masReactivateUser(s: Services, body: Body): Promise<Record<string, never>> {
  const { userId, user } = await existingUser(s, str(body, "localpart"));
  if (user.deactivated) {
    await s.db.user.update({ where: { userId }, data: { deactivated: false } });
    await invalidateUserTokens(s, userId);
  }
  return {};
}

/** POST /_synapse/mas/set_displayname {localpart, displayname} and unset_displayname {localpart}. */
export async function masSetDisplayname(s: Services, body: Body, unset: boolean): Promise<Record<string, never>> {
  const { userId } = await existingUser(s, str(body, "localpart"));
  await setDisplayName(s, masRequester(s), userId, unset ? null : str(body, "displayname"));
  return {};
}

function deviceIdOf(body: Body): string {
  const id = str(body, "device_id");
  if (id.length === 0 || id.length > 255 || id.includes("\0")) throw new MatrixError("M_INVALID_PARAM", "device_id must be 1 to 255 characters", 400);
  return id;
}

/** Creates the device (true) or renames it when a display name is given (false). */
async function upsert(s: Services, userId: string, deviceId: string, displayName: string | undefined): Promise<boolean> {
  let created: boolean;
  try {
    created = await s.db.$transaction(async (tx) => {
      const existed = (await s.sessions.getDevice(userId, deviceId, tx)) !== null;
      await s.sessions.upsertDevice(tx, userId, deviceId, displayName, s.clock.now());
      return !existed;
    });
  } catch (err) {
    if ((err as { code?: string }).code !== "P2002") throw err; // created concurrently
    created = false;
    if (displayName !== undefined) await s.sessions.setDeviceDisplayName(userId, deviceId, displayName);
  }
  if (created || displayName !== undefined) await runDeviceUpdateHooks(s, userId, deviceId, created);
  return created;
}

/** POST /_synapse/mas/upsert_device {localpart, device_id, display_name?}: `created` when new. */
export async function masUpsertDevice(s: Services, body: Body): Promise<{ created: boolean }> {
  const { userId } = await existingUser(s, str(body, "localpart"));
  return { created: await upsert(s, userId, deviceIdOf(body), optStr(body, "display_name")) };
}

/** POST /_synapse/mas/delete_device {localpart, device_id}: the device, its tokens and keys go. */
export async function masDeleteDevice(s: Services, body: Body): Promise<void> {
  const { userId } = await existingUser(s, str(body, "localpart"));
  await deleteDevices(s, userId, [str(body, "device_id")]);
}

/** POST /_synapse/mas/update_device_display_name {localpart, device_id, display_name} */
export async function masUpdateDeviceDisplayName(s: Services, body: Body): Promise<Record<string, never>> {
  const { userId } = await existingUser(s, str(body, "localpart"));
  const deviceId = str(body, "device_id");
  if (!(await s.sessions.setDeviceDisplayName(userId, deviceId, str(body, "display_name")))) throw notFound("No device found");
  await runDeviceUpdateHooks(s, userId, deviceId, false);
  return {};
}

/** POST /_synapse/mas/sync_devices {localpart, devices}: the user's devices become exactly `devices`. */
export async function masSyncDevices(s: Services, body: Body): Promise<Record<string, never>> {
  const { userId } = await existingUser(s, str(body, "localpart"));
  const list = body.devices;
  if (!Array.isArray(list) || list.some((d) => typeof d !== "string")) throw new MatrixError("M_BAD_JSON", "devices must be a list of device ids", 400);
  const target = new Set(list as string[]);
  const current = new Set(await s.sessions.deviceIds(userId));
  const extra = [...current].filter((d) => !target.has(d));
  if (extra.length > 0) await deleteDevices(s, userId, extra);
  for (const d of target) if (!current.has(d)) await upsert(s, userId, deviceIdOf({ device_id: d }), undefined);
  return {};
}

/** POST /_synapse/mas/allow_cross_signing_reset {localpart}: ten minutes to replace the keys without UIA. */
export async function masAllowCrossSigningReset(s: Services, body: Body): Promise<Record<string, never>> {
  const { userId } = await existingUser(s, str(body, "localpart"));
  if (!(await s.e2ee.allowMasterReplacement(userId, s.clock.now() + REPLACEMENT_PERIOD_MS)))
    s.log.warn({ userId }, "MAS allowed a cross-signing reset of a user without a master key");
  return {};
}
