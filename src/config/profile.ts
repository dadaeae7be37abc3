// The options of extended profiles (spec v1.16, MSC4133): which profile fields users may change, as the
// `m.profile_fields` capability tells clients. Synapse has no such option (it lets users change every
// field but those enable_set_displayname / enable_set_avatar_url lock): `profile_fields` is Weft's own,
// shaped like the capability. Server admins are never held by it (as by Synapse's two options).
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";
import { profileKeyProblem } from "../domain/profile/keys.ts";

export interface ProfileFieldsConfig {
  /** false: users may change no profile field at all. */
  enabled: boolean;
  /** When set, the only fields users may change (`disallowed` then means nothing). */
  allowed?: string[];
  /** Fields users may not change. */
  disallowed: string[];
}

export interface ProfileConfig {
  profile_fields: ProfileFieldsConfig;
}

function keyList(r: Reader, key: string): string[] {
  return r.list(key).map((k, i) => {
    const name = `profile_fields.${key}[${i}]`;
    if (typeof k !== "string") throw new ConfigError(name, "must be a profile field name");
    const problem = profileKeyProblem(k);
    if (problem) throw new ConfigError(name, `"${k}": ${problem.message}`);
    return k;
  });
}

export function readProfileConfig(r: Reader): ProfileConfig {
  const pf = r.section("profile_fields");
  return {
    profile_fields: {
      enabled: pf.bool("enabled", true),
      ...(pf.has("allowed") ? { allowed: keyList(pf, "allowed") } : {}),
      disallowed: keyList(pf, "disallowed"),
    },
  };
}
