// GET /capabilities: what this server lets the requesting user do, derived from configuration.
// Spec: Client-Server API "Capabilities negotiation".
import type { Services } from "../services.ts";
import { KNOWN_ROOM_VERSIONS, getRoomVersion } from "../rooms/room-versions.ts";
import type { Requester } from "../accounts/requester.ts";
import { accountModerationCapability } from "../accounts/moderation.ts";
import { capabilityAllows, profileFieldsCapability } from "../profile/field-policy.ts";

export interface Capabilities {
  capabilities: Record<string, Record<string, unknown>>;
}

export function capabilities(s: Services, r?: Requester): Capabilities {
  const { config } = s;
  const available: Record<string, "stable" | "unstable"> = {};
  for (const id of KNOWN_ROOM_VERSIONS) available[id] = getRoomVersion(id)?.stability ?? "unstable";
  const profileFields = profileFieldsCapability(config);
  return {
    capabilities: {
      // As Synapse: a password can be changed when password auth against the local database is on.
      "m.change_password": { enabled: config.password_config.enabled && config.password_config.localdb_enabled },
      "m.room_versions": { default: config.default_room_version, available },
      // Deprecated by m.profile_fields, and kept consistent with it (spec v1.16).
      "m.set_displayname": { enabled: capabilityAllows(profileFields, "displayname") },
      "m.set_avatar_url": { enabled: capabilityAllows(profileFields, "avatar_url") },
      "m.3pid_changes": { enabled: config.enable_3pid_changes },
      "m.get_login_token": { enabled: config.login_via_existing_session.enabled },
      // Spec v1.16 (MSC4133): which profile fields users may change; under its unstable name too with
      // experimental_features.msc4133_enabled (as Synapse).
      "m.profile_fields": { ...profileFields },
      ...(config.experimental_features.msc4133_enabled ? { "uk.tcpip.msc4133.profile_fields": { ...profileFields } } : {}),
      // Spec v1.18 (MSC4267): rooms are forgotten on leave (forget_rooms_on_leave).
      "m.forget_forced_upon_leave": { enabled: config.forget_rooms_on_leave },
      // MSC4140 (as Synapse, also when off: then 0 ms).
      "org.matrix.msc4140.delayed_events": {
        max_delay_ms: config.max_event_delay_duration,
        max_scheduled: config.experimental_features.msc4140_max_delayed_events_per_user,
      },
      // Spec v1.18: server admins may lock and suspend accounts (left out for everyone else).
      ...(r && accountModerationCapability(r) ? { "m.account_moderation": accountModerationCapability(r)! } : {}),
    },
  };
}
