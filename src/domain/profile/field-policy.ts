// Which profile fields a user may change, from configuration: the `m.profile_fields` capability and the
// deprecated `m.set_displayname` / `m.set_avatar_url` kept consistent with it, and the check PUT and
// DELETE /profile/{userId}/{keyName} make (403 M_FORBIDDEN, as the spec's 403 "profile modifications are
// disabled"). Spec: Client-Server API "m.profile_fields capability" (v1.16, MSC4133). The config:
// profile_fields (Weft's own, shaped like the capability) and Synapse's enable_set_displayname /
// enable_set_avatar_url, which add their field to `disallowed` as Synapse's capability does.
import type { Config } from "../../config/config.ts";
import { forbidden } from "../errors.ts";
import { AVATAR_URL, DISPLAYNAME } from "./keys.ts";

type PolicyConfig = Pick<Config, "profile_fields" | "enable_set_displayname" | "enable_set_avatar_url">;

export interface ProfileFieldsCapability {
  enabled: boolean;
  allowed?: string[];
  disallowed?: string[];
}

/** The fields Synapse's two options lock (users may still fill them while empty: profile.ts). */
function lockedByLegacyOptions(c: PolicyConfig): string[] {
  return [...(c.enable_set_displayname ? [] : [DISPLAYNAME]), ...(c.enable_set_avatar_url ? [] : [AVATAR_URL])];
}

/** The `m.profile_fields` capability: `allowed` when configured, else `disallowed` when any field is locked. */
export function profileFieldsCapability(c: PolicyConfig): ProfileFieldsCapability {
  const pf = c.profile_fields;
  if (!pf.enabled) return { enabled: false };
  const locked = lockedByLegacyOptions(c);
  if (pf.allowed) return { enabled: true, allowed: pf.allowed.filter((k) => !locked.includes(k)) };
  const disallowed = [...new Set([...locked, ...pf.disallowed])];
  return disallowed.length > 0 ? { enabled: true, disallowed } : { enabled: true };
}

/** Whether the capability lets users change `key` (Synapse's first-fill allowance aside). */
export function capabilityAllows(cap: ProfileFieldsCapability, key: string): boolean {
  if (!cap.enabled) return false;
  if (cap.allowed) return cap.allowed.includes(key);
  return !(cap.disallowed ?? []).includes(key);
}

/**
 * Whether `profile_fields` lets users change `key` — enable_set_displayname / enable_set_avatar_url are
 * checked where those fields are set, with Synapse's allowance for an empty field.
 */
export function configAllowsChange(c: PolicyConfig, key: string): boolean {
  const pf = c.profile_fields;
  if (!pf.enabled) return false;
  if (pf.allowed) return pf.allowed.includes(key);
  return !pf.disallowed.includes(key);
}

/** 403 M_FORBIDDEN for a field `profile_fields` keeps from users; server admins may change any. */
export function requireChangeAllowed(c: PolicyConfig, isAdmin: boolean, key: string): void {
  if (!isAdmin && !configAllowsChange(c, key)) throw forbidden(`Changing the profile field ${key} is not permitted on this server`);
}
