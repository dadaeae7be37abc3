// Global user profiles (displayname, avatar_url): reading with the lookup restrictions, and changing them
// with the server's limits. Spec: Client-Server API "Profiles" (GET /profile/{userId}[/{keyName}], PUT
// /profile/{userId}/{keyName}); where the spec is silent (lengths, who may write) Synapse's rules apply.
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

export type ProfileField = "displayname" | "avatar_url";

export interface Profile {
  displayname?: string;
  avatar_url?: string;
}

/** Synapse's limits, in characters (code points). */
export const MAX_DISPLAYNAME_LEN = 256;
export const MAX_AVATAR_URL_LEN = 1000;

export interface ProfileChange {
  userId: string;
  /** Who made the change: the user, or a server admin. */
  requester: Requester;
  field: ProfileField;
  /** The whole profile after the change. */
  profile: Profile;
}

/**
 * Run after a profile change was stored (declared in src/main.ts): rooms send updated m.room.member
 * events into every room the user has joined; the user directory will too.
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

/** The stored profile of a local, active user, or a remote user's asked of their server; M_NOT_FOUND for unknown and deactivated users. */
async function loadProfile(s: Services, userId: string, field?: ProfileField): Promise<Profile> {
  const { serverName } = parseUserId(userId);
  if (serverName !== s.config.server_name) return remoteProfileOf(s, userId, field);
  let user = await s.users.get(userId);
  if (!user && (await askAboutUnknownUser(s, userId))) user = await s.users.get(userId);
  if (!user || user.deactivated) throw notFound("Profile was not found");
  const row = await s.users.getProfile(userId);
  const out: Profile = {};
  if (row?.displayname != null) out.displayname = row.displayname;
  // Stored before avatar URLs were checked (or set through the admin API): shown only as an MXC URI.
  const avatar = shownMxc(row?.avatarUrl);
  if (avatar !== undefined) out.avatar_url = avatar;
  return out;
}

/** A remote user's profile from their server (cached: src/domain/federation/remote-profiles.ts), or one field of it. */
async function remoteProfileOf(s: Services, userId: string, field?: ProfileField): Promise<Profile> {
  const whole = await remoteProfile(s, userId);
  if (!field) return { ...whole };
  return whole[field] === undefined ? {} : { [field]: whole[field] };
}

/** The whole profile; M_NOT_FOUND when the user is unknown or has no profile information at all. */
export async function getProfile(s: Services, requester: Requester | undefined, userId: string): Promise<Profile> {
  parseUserId(userId);
  await checkQueryAllowed(s, requester, userId);
  const profile = await loadProfile(s, userId);
  if (profile.displayname === undefined && profile.avatar_url === undefined) throw notFound("Profile was not found");
  return profile;
}

/**
 * One field of the profile: null when the user has none (as Synapse answers: 200 with a null value, which
 * clients read as "no avatar"); M_NOT_FOUND when the user is unknown or deactivated.
 */
export async function getProfileField(s: Services, requester: Requester | undefined, userId: string, field: ProfileField): Promise<string | null> {
  parseUserId(userId);
  await checkQueryAllowed(s, requester, userId);
  return (await loadProfile(s, userId, field))[field] ?? null;
}

/**
 * A remote server's profile query (GET /_matrix/federation/v1/query/profile): a local user's public
 * profile, or one field of it (absent when unset). 403 when allow_profile_lookup_over_federation is off,
 * 400 for a user of another server, 404 for an unknown or deactivated user. As Synapse, the
 * share-a-room restriction of the client API does not apply (a server is not a user).
 */
export async function federationProfileQuery(s: Services, userId: string, field: string | undefined): Promise<Record<string, string>> {
  if (!s.config.allow_profile_lookup_over_federation)
    throw forbidden("Profile lookup over federation is disabled on this homeserver");
  const { serverName } = parseUserId(userId);
  if (serverName !== s.config.server_name) throw new MatrixError("M_INVALID_PARAM", "User is not hosted on this homeserver", 400);
  const profile = await loadProfile(s, userId);
  if (field === undefined) return { ...profile };
  const value = field === "displayname" || field === "avatar_url" ? profile[field] : undefined;
  return value === undefined ? {} : { [field]: value };
}

async function setField(s: Services, r: Requester, userId: string, field: ProfileField, value: string | null): Promise<void> {
  if (field === "avatar_url") requireNotGuest(r, "setAvatarUrl");
  requireNotSuspended(r, "Updating profile");
  const { serverName } = parseUserId(userId);
  if (r.userId !== userId && !r.isAdmin) throw forbidden(`Cannot set another user's ${field}`);
  if (serverName !== s.config.server_name) throw new MatrixError("M_INVALID_PARAM", "User is not hosted on this homeserver", 400);
  const user = await s.users.get(userId);
  if (!user || user.deactivated) throw notFound("User not found");

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

  await s.db.$transaction((tx) => s.users.setProfileField(tx, userId, field === "displayname" ? "displayname" : "avatarUrl", stored));
  s.invalidations.publish({ kind: "profile", userId });
  if (s.extensions.profileChanged.length > 0) {
    const profile = await loadProfile(s, userId);
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
