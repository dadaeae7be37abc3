// What this server supports, for GET /versions (spec: Client-Server API "API Standards"): the spec
// versions, and the unstable features clients feature-detect on, each one Weft serves (named as Synapse
// names them; a flag that follows the config says false when it is off, as Synapse's do).
import type { Config } from "../../config/config.ts";
import { delayedEventsEnabled } from "../../config/experimental.ts";
import { rtcTransportsServed } from "./client-discovery.ts";

export const SUPPORTED_VERSIONS = [
  "r0.0.1", "r0.1.0", "r0.2.0", "r0.3.0", "r0.4.0", "r0.5.0", "r0.6.0", "r0.6.1",
  "v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6", "v1.7", "v1.8", "v1.9", "v1.10", "v1.11",
  // Each once all of its release is served (README "Spec versions" says what each brought). The OAuth
  // 2.0 API of v1.15 is optional for a server: without one GET /auth_metadata answers 404 M_UNRECOGNIZED;
  // Weft's own (oauth_server.enabled) or a delegated one (MSC3861) answers it (server/auth-metadata.ts).
  "v1.12", "v1.13", "v1.14", "v1.15", "v1.16", "v1.17", "v1.18", "v1.19",
] as const;

type FeatureConfig = Pick<Config, "encryption_enabled_by_default_for_room_type" | "login_via_existing_session" | "experimental_features" | "max_event_delay_duration" | "rc_delayed_event_mgmt" | "matrix_rtc">;

/** The unstable features this server serves, by the flag clients look for. */
export function unstableFeatures(config: FeatureConfig): Record<string, boolean> {
  const encryptByDefault = config.encryption_enabled_by_default_for_room_type;
  return {
    // MSC1756: cross-signing keys (/keys/device_signing/upload, /keys/signatures/upload).
    "org.matrix.e2e_cross_signing": true,
    // MSC2432: GET /rooms/{roomId}/aliases and the checked m.room.canonical_alias (alt_aliases).
    "org.matrix.msc2432": true,
    // MSC2285: private read receipts (m.read.private), stable names.
    "org.matrix.msc2285.stable": true,
    // MSC3827: room_types in /publicRooms filters, stable names.
    "org.matrix.msc3827.stable": true,
    // MSC3440: threads (m.thread relations, aggregations and filters), stable names.
    "org.matrix.msc3440.stable": true,
    // MSC3771: threaded read receipts (thread_id).
    "org.matrix.msc3771": true,
    // MSC3773: per-thread notification counts (unread_thread_notifications).
    "org.matrix.msc3773": true,
    // MSC2659: POST /_matrix/client/v1/appservice/{appserviceId}/ping, stable names.
    "fi.mau.msc2659.stable": true,
    // MSC3981: /relations with recurse.
    "org.matrix.msc3981": true,
    // MSC3882: POST /login/get_token, when login_via_existing_session is enabled.
    "org.matrix.msc3882": config.login_via_existing_session.enabled,
    // MSC3874: rel_types / not_rel_types in room event filters, with experimental_features.msc3874_enabled.
    "org.matrix.msc3874": config.experimental_features.msc3874_enabled,
    // MSC3391: deleting account data, with experimental_features.msc3391_enabled.
    "org.matrix.msc3391": config.experimental_features.msc3391_enabled,
    // MSC4140: delayed events, when max_event_delay_duration is set.
    "org.matrix.msc4140": delayedEventsEnabled(config),
    // MSC4155: invite filtering by account data, with experimental_features.msc4155_enabled.
    "org.matrix.msc4155": config.experimental_features.msc4155_enabled,
    // MSC4380: invite blocking (`m.invite_permission_config`, spec v1.18), stable names; always on, as Synapse.
    "org.matrix.msc4380.stable": true,
    // MSC4169: m.room.redaction sent through /send in every room version (spec v1.18); Synapse gates it
    // behind experimental_features.msc4169_enabled, Weft always does it.
    "com.beeper.msc4169": true,
    // MSC4306: thread subscriptions, with experimental_features.msc4306_enabled (Synapse 1.163 lists it so).
    "org.matrix.msc4306": config.experimental_features.msc4306_enabled,
    // MSC4133: extended profiles. `.stable`: the v3 endpoints (spec v1.16), which matrix-js-sdk looks for
    // while /versions stops short of v1.16; the bare flag: /unstable/uk.tcpip.msc4133, with
    // experimental_features.msc4133_enabled (Synapse 1.163 lists both so).
    "uk.tcpip.msc4133": config.experimental_features.msc4133_enabled,
    "uk.tcpip.msc4133.stable": true,
    // MSC4354: sticky events, with experimental_features.msc4354_enabled (Synapse 1.163 lists it so).
    "org.matrix.msc4354": config.experimental_features.msc4354_enabled,
    // MSC4108: rendezvous sessions for QR-code login, served here (msc4108_enabled) or delegated
    // (msc4108_delegation_endpoint), as Synapse lists it.
    "org.matrix.msc4108": config.experimental_features.msc4108_enabled || config.experimental_features.msc4108_delegation_endpoint !== undefined,
    // MSC2666: the rooms shared with another user (GET /unstable/uk.half-shot.msc2666/user/mutual_rooms; v1 in spec v1.19).
    "uk.half-shot.msc2666.query_mutual_rooms": true,
    // MSC4143: MatrixRTC transports (GET /unstable/org.matrix.msc4143/rtc/transports), with
    // experimental_features.msc4143_enabled or configured `matrix_rtc.transports`.
    "org.matrix.msc4143": rtcTransportsServed(config),
    // MSC4186: simplified sliding sync (POST /unstable/org.matrix.simplified_msc3575/sync), as Synapse serves it.
    "org.matrix.simplified_msc3575": true,
    // Whether new rooms are encrypted by default, per preset (encryption_enabled_by_default_for_room_type).
    "io.element.e2ee_forced.public": encryptByDefault === "all",
    "io.element.e2ee_forced.private": encryptByDefault !== "off",
    "io.element.e2ee_forced.trusted_private": encryptByDefault !== "off",
  };
}

export function versionsResponse(config: FeatureConfig): { versions: string[]; unstable_features: Record<string, boolean> } {
  return { versions: [...SUPPORTED_VERSIONS], unstable_features: unstableFeatures(config) };
}
