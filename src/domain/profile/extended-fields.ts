// Changing any profile key (spec v1.16, MSC4133: PUT and DELETE /profile/{userId}/{keyName}): displayname
// and avatar_url go through their own rules (profile.ts: limits, propagation to member events); m.tz
// (MSC4175) and custom keys are stored as JSON and never propagate anywhere. Checked in Synapse's order:
// the user id, guests (who may change only their display name), the key (grammar, 255 bytes), the
// requester (the user, or a server admin), the target (local, active), the configuration
// (profile_fields), the value (m.tz a string), the 64 KiB total (M_PROFILE_TOO_LARGE).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseUserId } from "../ids.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { requireNotSuspended } from "../accounts/moderation.ts";
import { AVATAR_URL, DISPLAYNAME, TIME_ZONE, checkProfileKey } from "./keys.ts";
import { requireChangeAllowed } from "./field-policy.ts";
import { checkSizeAfterChange, checkWritableProfile, setAvatarUrl, setDisplayName } from "./profile.ts";

/**
 * What can be refused before the value is read: the user id, a guest changing anything but its display
 * name (M_GUEST_ACCESS_FORBIDDEN, as Synapse), the key. The REST face asks it before reading the body.
 */
export function checkProfileChange(r: Requester, userId: string, key: string): void {
  parseUserId(userId);
  if (key !== DISPLAYNAME) requireNotGuest(r, key === AVATAR_URL ? "setAvatarUrl" : "setProfileField");
  checkProfileKey(key);
}

function legacyValue(key: string, value: unknown): string {
  if (typeof value !== "string") throw new MatrixError("M_INVALID_PARAM", `'${key}' must be a string`, 400);
  return value;
}

/** Checks common to setting and deleting an extended field (not displayname or avatar_url). */
async function checkExtendedChange(s: Services, r: Requester, userId: string, key: string): Promise<void> {
  requireNotSuspended(r, "Updating profile");
  await checkWritableProfile(s, r, userId, "profile");
  requireChangeAllowed(s.config, r.isAdmin, key);
}

/**
 * Sets profile key `key` of `userId` to `value` (any JSON value for a custom key, null included: the spec
 * asks servers that accept null to store it). displayname and avatar_url: strings, by their own rules.
 */
export async function setProfileKey(s: Services, r: Requester, userId: string, key: string, value: unknown): Promise<void> {
  checkProfileChange(r, userId, key);
  if (value === undefined) throw new MatrixError("M_MISSING_PARAM", `Missing key '${key}'`, 400);
  if (key === DISPLAYNAME) return setDisplayName(s, r, userId, legacyValue(key, value));
  if (key === AVATAR_URL) return setAvatarUrl(s, r, userId, legacyValue(key, value));
  await checkExtendedChange(s, r, userId, key);
  // The spec: m.tz MUST be an IANA time zone identifier, which servers MAY check. Weft checks it is a
  // string (GET /profile's schema says so), not that the time zone exists; Synapse 1.163 checks nothing.
  if (key === TIME_ZONE && typeof value !== "string") throw new MatrixError("M_INVALID_PARAM", "'m.tz' must be a string", 400);
  await s.db.$transaction(async (tx) => {
    await checkSizeAfterChange(s, tx, userId, key, value);
    await s.profileFields.set(tx, userId, key, value);
  });
}

/**
 * Removes profile key `key` of `userId` (200 also when there was none, as the spec says). displayname and
 * avatar_url are cleared as an empty value clears them, propagating to member events, as Synapse does.
 */
export async function deleteProfileKey(s: Services, r: Requester, userId: string, key: string): Promise<void> {
  checkProfileChange(r, userId, key);
  if (key === DISPLAYNAME) return setDisplayName(s, r, userId, null);
  if (key === AVATAR_URL) return setAvatarUrl(s, r, userId, null);
  await checkExtendedChange(s, r, userId, key);
  await s.db.$transaction((tx) => s.profileFields.delete(tx, userId, key));
}
