// Global user profiles: reading them (displayname, avatar_url and the extended fields of spec v1.16) with
// the lookup restrictions, the federation profile query, and changing displayname and avatar_url with the
// server's limits (the other keys: extended-fields.ts). Spec: Client-Server API "Profiles" (GET
// /profile/{userId}[/{keyName}], PUT /profile/{userId}/{keyName}), Server-Server API "Querying for
// information"; where the spec is silent (lengths, who may write) Synapse's rules apply.
import { MatrixError, forbidden, notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseUserId } from "../ids.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { checkStorableText } from "../text.ts";
import { isMxcUri, shownMxc } from "../media/ids.ts";
import { remoteProfile } from "../federation/remote-profiles.ts";
import { askAboutUnknownUser } from "../accounts/user-lookup.ts";
import { requireNotSuspended } from "../accounts/moderation.ts";
import type { Tx } from "../../storage/database.ts";
import { AVATAR_URL, DISPLAYNAME, checkProfileKey, checkProfileSize, putField } from "./keys.ts";
import { requireChangeAllowed } from "./field-policy.ts";

export type ProfileField = "displayname" | "avatar_url";

/** A profile as clients see it: displayname and avatar_url when set, and every extended field (m.tz, custom keys). */
export interface Profile {
  displayname?: string;
  avatar_url?: string;
  [key: string]: unknown;
}

const isLegacyField = (key: string): key is ProfileField => key === DISPLAYNAME || key === AVATAR_URL;

/** Synapse's limits, in characters (code points). */
export const MAX_DISPLAYNAME_LEN = 256;
export const MAX_AVATAR_URL_LEN = 1000;

export interface ProfileChange {
  userId: string;
  /** Who made the change: the user, or a server admin. */
  requester: Requester;
  field: ProfileField;
  /** displayname and avatar_url after the change (the extended fields never propagate: not read). */
  profile: Profile;
}

/**
 * Run after a change of displayname or avatar_url was stored (declared in src/main.ts): rooms send updated
 * m.room.member events into every room the user has joined; the user directory will too. Changes of
 * other keys run no hook (as Synapse: custom fields reach neither rooms nor the user directory).
 */
export type ProfileChangeHook = (s: Services, change: ProfileChange) => Promise<void>;

/**
 * `limit_profile_requests_to_users_who_share_rooms`: only the user themselves and users sharing a room
 * with them may look at their profile. Checked before existence, so it discloses nothing.
 */
async function checkQueryAllowed(s: Services, requester: Requester | undefined, userId: string): Promise<void> {
  if (!s.config.limit_profile_requests_to_users_who_share_rooms) return;
  if (requester && requester.userId === userId) return;
  if (requester && (await s.users.shareARoom(requester.userId, userId))) return;
  throw forbidden("Profile isn't available");
}

/**
 * The stored profile of a local, active user (with its extended fields unless `extended` is false), or a
 * remote user's asked of their server; M_NOT_FOUND for unknown and deactivated users.
 */
async function loadProfile(s: Services, userId: string, opts: { field?: string; extended?: boolean } = {}): Promise<Profile> {
  const { serverName } = parseUserId(userId);
  if (serverName !== s.config.server_name) return remoteProfileOf(s, userId, opts.field);
  let user = await s.users.get(userId);
  if (!user && (await askAboutUnknownUser(s, userId))) user = await s.users.get(userId);
  if (!user || user.deactivated) throw notFound("Profile was not found");
  const [row, fields] = await Promise.all([s.users.getProfile(userId), opts.extended === false ? {} : s.profileFields.all(userId)]);
  const out: Profile = {};
  if (row?.displayname != null) out.displayname = row.displayname;
  // Stored before avatar URLs were checked (or set through the admin API): shown only as an MXC URI.
  const avatar = shownMxc(row?.avatarUrl);
  if (avatar !== undefined) out.avatar_url = avatar;
  for (const [k, v] of Object.entries(fields)) putField(out, k, v);
  return out;
}

/** A remote user's profile from their server (cached: src/domain/federation/remote-profiles.ts), or one field of it. */
async function remoteProfileOf(s: Services, userId: string, field?: string): Promise<Profile> {
  const whole = await remoteProfile(s, userId);
  const out: Profile = {};
  if (field === undefined) {
    for (const [k, v] of Object.entries(whole)) putField(out, k, v);
  } else if (Object.hasOwn(whole, field)) {
    putField(out, field, whole[field]);
  }
  return out;
}

/** The whole profile; M_NOT_FOUND when the user is unknown or has no profile information at all. */
export async function getProfile(s: Services, requester: Requester | undefined, userId: string): Promise<Profile> {
  parseUserId(userId);
  await checkQueryAllowed(s, requester, userId);
  const profile = await loadProfile(s, userId);
  if (Object.keys(profile).length === 0) throw notFound("Profile was not found");
  return profile;
}

/**
 * One field of the profile. displayname and avatar_url: undefined when the user has none (the route
 * answers 200 `{}`, as Synapse 1.163 does; the spec allows it beside a 404, MSC4537); any other key:
 * M_NOT_FOUND when the user has no such field (as Synapse, and the spec's 404). M_NOT_FOUND too for an
 * unknown or deactivated user; the key's own errors first (M_INVALID_PARAM, M_KEY_TOO_LARGE).
 */
export async function getProfileField(s: Services, requester: Requester | undefined, userId: string, key: string): Promise<unknown> {
  parseUserId(userId);
  checkProfileKey(key);
  await checkQueryAllowed(s, requester, userId);
  const profile = await loadProfile(s, userId, { field: key, extended: !isLegacyField(key) });
  if (isLegacyField(key)) return profile[key];
  if (!Object.hasOwn(profile, key)) throw notFound("Profile field was not found");
  return profile[key];
}

/**
 * A remote server's profile query (GET /_matrix/federation/v1/query/profile): a local user's public
 * profile, or one field of it — displayname and avatar_url absent when unset, any other field 404
 * M_NOT_FOUND when unset (as Synapse; any field name is asked for, none is refused). 403 when
 * allow_profile_lookup_over_federation is off, 400 for a user of another server, 404 for an unknown or
 * deactivated user. As Synapse, the share-a-room restriction of the client API does not apply (a server
 * is not a user).
 */
export async function federationProfileQuery(s: Services, userId: string, field: string | undefined): Promise<Record<string, unknown>> {
  if (!s.config.allow_profile_lookup_over_federation)
    throw forbidden("Profile lookup over federation is disabled on this homeserver");
  const { serverName } = parseUserId(userId);
  if (serverName !== s.config.server_name) throw new MatrixError("M_INVALID_PARAM", "User is not hosted on this homeserver", 400);
  const profile = await loadProfile(s, userId, { extended: field === undefined || !isLegacyField(field) });
  if (field === undefined) return { ...profile };
  if (!Object.hasOwn(profile, field)) {
    if (isLegacyField(field)) return {};
    throw notFound("Profile field was not found");
  }
  return { [field]: profile[field] };
}

/**
 * Who may change `userId`'s profile, checked before anything is read: the user, or a server admin for any
 * local user; 403 for another user's, 400 for a remote user's (admins), 404 for an unknown or deactivated one.
 */
export async function checkWritableProfile(s: Services, r: Requester, userId: string, what: string): Promise<void> {
  const { serverName } = parseUserId(userId);
  if (r.userId !== userId && !r.isAdmin) throw forbidden(`Cannot set another user's ${what}`);
  if (serverName !== s.config.server_name) throw new MatrixError("M_INVALID_PARAM", "User is not hosted on this homeserver", 400);
  const user = await s.users.get(userId);
  if (!user || user.deactivated) throw notFound("User not found");
}

/**
 * Inside a change's transaction: holds the user's profile (PostgreSQL) and checks that it stays within
 * the 64 KiB the spec allows once `key` is `value` (stored values counted: displayname, avatar_url, fields).
 */
export async function checkSizeAfterChange(s: Services, tx: Tx, userId: string, key: string, value: unknown): Promise<void> {
  await s.profileFields.lockProfile(tx, userId);
  const [row, fields] = await Promise.all([s.users.getProfile(userId, tx), s.profileFields.all(userId, tx)]);
  const whole: Record<string, unknown> = {};
  if (row?.displayname != null) whole.displayname = row.displayname;
  if (row?.avatarUrl != null) whole.avatar_url = row.avatarUrl;
  for (const [k, v] of Object.entries(fields)) putField(whole, k, v);
  putField(whole, key, value);
  checkProfileSize(whole);
}

async function setField(s: Services, r: Requester, userId: string, field: ProfileField, value: string | null): Promise<void> {
  if (field === "avatar_url") requireNotGuest(r, "setAvatarUrl");
  requireNotSuspended(r, "Updating profile");
  await checkWritableProfile(s, r, userId, field);
  requireChangeAllowed(s.config, r.isAdmin, field);

  const enabled = field === "displayname" ? s.config.enable_set_displayname : s.config.enable_set_avatar_url;
  if (!enabled && !r.isAdmin) {
    // As Synapse: with changes disabled, a user may still fill a field that is empty.
    const current = await s.users.getProfile(userId);
    if ((field === "displayname" ? current?.displayname : current?.avatarUrl) != null)
      throw forbidden(field === "displayname" ? "Changing display name is disabled on this server" : "Changing avatar is disabled on this server");
  }

  if (value !== null) checkStorableText(value, field);
  const max = field === "displayname" ? MAX_DISPLAYNAME_LEN : MAX_AVATAR_URL_LEN;
  if (value !== null && [...value].length > max)
    throw new MatrixError("M_TOO_LARGE", `${field === "displayname" ? "Displayname" : "Avatar URL"} is too long (max ${max})`, 400);
  // The spec: "For avatar_url, the value MUST be an MXC URI string" (GET /profile answers only such).
  if (field === "avatar_url" && value !== null && value !== "" && !isMxcUri(value)) throw new MatrixError("M_INVALID_PARAM", "avatar_url must be an MXC URI", 400);
  // An empty value clears the field; display names lose surrounding whitespace.
  let stored = value;
  if (stored !== null && field === "displayname") stored = stored.trim();
  if (stored === "") stored = null;

  await s.db.$transaction(async (tx) => {
    if (stored !== null) await checkSizeAfterChange(s, tx, userId, field, stored);
    await s.users.setProfileField(tx, userId, field === "displayname" ? "displayname" : "avatarUrl", stored);
  });
  s.invalidations.publish({ kind: "profile", userId });
  if (s.extensions.profileChanged.length > 0) {
    const profile = await loadProfile(s, userId, { extended: false });
    for (const hook of s.extensions.profileChanged) await hook(s, { userId, requester: r, field, profile });
  }
}

/** Sets (or with null or "" clears) a display name: the user's own, or any local user's for a server admin. */
export function setDisplayName(s: Services, requester: Requester, userId: string, displayname: string | null): Promise<void> {
  return setField(s, requester, userId, "displayname", displayname);
}

/** Sets (or with null or "" clears) an avatar URL: the user's own, or any local user's for a server admin. */
export function setAvatarUrl(s: Services, requester: Requester, userId: string, avatarUrl: string | null): Promise<void> {
  return setField(s, requester, userId, "avatar_url", avatarUrl);
}
