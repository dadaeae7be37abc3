// The room version table: one record of feature flags per room version "1".."12", and Synapse's unstable
// MSC3757 versions "org.matrix.msc3757.10" / ".11" (owned state; always known, as Synapse 1.163 knows them).
// Every rule that differs between versions reads a flag from here; nothing else compares version strings.
// Spec: Room Versions (spec.matrix.org/rooms, v1–v12 pages and the feature matrix); MSC3757.
import { MatrixError } from "../errors.ts";

/** How event ids are formed. */
export type EventIdFormat =
  /** v1–2: `$opaque:server`, chosen by the sending server and carried in the PDU as `event_id`. */
  | "server-assigned"
  /** v3: `$` + the reference hash in standard unpadded base64. */
  | "reference-hash-base64"
  /** v4+: `$` + the reference hash in URL-safe unpadded base64. */
  | "reference-hash-base64url";

/**
 * State resolution algorithm. "v2.1" is v2 with the room version 12 changes (iterative auth checks
 * start from an empty state map; the conflicted state subgraph joins the full conflicted set).
 */
export type StateResolutionAlgorithm = "v1" | "v2" | "v2.1";

/**
 * Redaction algorithm generation, named by the room version that introduced it:
 * v1 (v1–5, keeps `aliases`), v6 (drops `aliases`), v8 (join_rules keep `allow`),
 * v9 (member keeps `join_authorised_via_users_server`), v11 (v11+ rules).
 */
export type RedactionAlgorithm = "v1" | "v6" | "v8" | "v9" | "v11";

export interface RoomVersion {
  readonly id: string;
  readonly stability: "stable" | "unstable";
  readonly eventIdFormat: EventIdFormat;
  readonly stateResolution: StateResolutionAlgorithm;
  readonly redaction: RedactionAlgorithm;

  // --- redaction algorithm details (derived from `redaction`, spelled out so callers read one flag) ---
  /** v1–5: `m.room.aliases` keeps `aliases` when redacted. */
  readonly redactionKeepsAliases: boolean;
  /** v8+: `m.room.join_rules` keeps `allow`. */
  readonly redactionKeepsJoinRulesAllow: boolean;
  /** v9+: `m.room.member` keeps `join_authorised_via_users_server`. */
  readonly redactionKeepsJoinAuthorisedVia: boolean;
  /**
   * v11+: top-level `origin`, `membership`, `prev_state` are no longer kept; create keeps all content;
   * power_levels keeps `invite`; member keeps `third_party_invite.signed`; redaction keeps `redacts`.
   */
  readonly updatedRedactionRules: boolean;

  // --- event format ---
  /** v6+: events must be canonical JSON (integers in [-(2^53)+1, 2^53-1], no floats); depth ≤ 2^53-1. */
  readonly strictCanonicalJson: boolean;
  /** v1–5: power level values may be floats (truncated toward zero). */
  readonly floatPowerLevels: boolean;
  /** v1–9: power level values may be strings holding an integer. v10+: integers only. */
  readonly stringPowerLevels: boolean;
  /** v10+: every power level value must be an integer (auth rule 10.1/10.2 in v10+ numbering). */
  readonly integerOnlyPowerLevels: boolean;
  /** v11+: `m.room.redaction` carries `redacts` in `content`, not at the top level. */
  readonly redactsInContent: boolean;
  /** v1–10: the create event's `content.creator` is required and names the creator. v11+: the sender does. */
  readonly createHasCreator: boolean;
  /** v12: the room id is `!` + the create event's reference hash; the create event carries no room_id. */
  readonly roomIdIsCreateEventHash: boolean;

  // --- authorization rules ---
  /** v1–5: special rule for `m.room.aliases` (state_key must be the sender's domain; no membership needed). */
  readonly specialCaseAliasesAuth: boolean;
  /** v1–2: redactions are checked by the auth rules (rule 11). v3+: checked when the redaction is applied. */
  readonly redactionAuthInRules: boolean;
  /** v5+: signing keys must be valid at the event's origin_server_ts. */
  readonly enforceKeyValidity: boolean;
  /** v6+: power level changes to `notifications` are checked like `events`. */
  readonly notificationsPowerLevels: boolean;
  /** v7+: `knock` membership and join rule. */
  readonly knock: boolean;
  /** v8+: `restricted` join rule with `join_authorised_via_users_server`. */
  readonly restricted: boolean;
  /** v10+: `knock_restricted` join rule. */
  readonly knockRestricted: boolean;
  /**
   * v11+: a received event with a field over 255 bytes is dropped. Before, only over 255 code points is
   * (Synapse long counted code points): one within that but over 255 bytes is kept, rejected.
   */
  readonly strictEventByteLimits: boolean;
  /** v12: creators (create sender + `additional_creators`) have infinite power and may not appear in power levels. */
  readonly privilegedCreators: boolean;
  /** v12: `additional_creators` in the create content is validated and grants creator status. */
  readonly additionalCreators: boolean;
  /** v1–11: `m.room.create` is selected into every event's auth_events. v12: it must not be. */
  readonly createInAuthEvents: boolean;
  /**
   * v12: a received `invite_room_state` failing validation (no create event, an entry not a PDU of this
   * room, a bad signature) is refused with 400 M_MISSING_PARAM. v1–11: the failure is logged and the bad
   * entries left out (the spec v1.16 migration note: "warn ... rather than error in room versions 1 through 11").
   */
  readonly strictInviteRoomState: boolean;
  /**
   * MSC3757 (owned state): a state key `@user:server` or `@user:server_<suffix>` belongs to that user; a
   * sender of higher power may set it too, and a state key starting with `@` that is neither is invalid.
   */
  readonly ownedState: boolean;
}

const V1: RoomVersion = {
  id: "1",
  stability: "stable",
  eventIdFormat: "server-assigned",
  stateResolution: "v1",
  redaction: "v1",
  redactionKeepsAliases: true,
  redactionKeepsJoinRulesAllow: false,
  redactionKeepsJoinAuthorisedVia: false,
  updatedRedactionRules: false,
  strictCanonicalJson: false,
  floatPowerLevels: true,
  stringPowerLevels: true,
  integerOnlyPowerLevels: false,
  redactsInContent: false,
  createHasCreator: true,
  roomIdIsCreateEventHash: false,
  specialCaseAliasesAuth: true,
  redactionAuthInRules: true,
  enforceKeyValidity: false,
  notificationsPowerLevels: false,
  knock: false,
  restricted: false,
  knockRestricted: false,
  strictEventByteLimits: false,
  privilegedCreators: false,
  additionalCreators: false,
  createInAuthEvents: true,
  strictInviteRoomState: false,
  ownedState: false,
};

// Each version is the previous one plus the changes its spec page lists.
const V2: RoomVersion = { ...V1, id: "2", stateResolution: "v2" };
const V3: RoomVersion = { ...V2, id: "3", eventIdFormat: "reference-hash-base64", redactionAuthInRules: false };
const V4: RoomVersion = { ...V3, id: "4", eventIdFormat: "reference-hash-base64url" };
const V5: RoomVersion = { ...V4, id: "5", enforceKeyValidity: true };
const V6: RoomVersion = {
  ...V5,
  id: "6",
  redaction: "v6",
  redactionKeepsAliases: false,
  strictCanonicalJson: true,
  floatPowerLevels: false,
  specialCaseAliasesAuth: false,
  notificationsPowerLevels: true,
};
const V7: RoomVersion = { ...V6, id: "7", knock: true };
const V8: RoomVersion = { ...V7, id: "8", redaction: "v8", redactionKeepsJoinRulesAllow: true, restricted: true };
const V9: RoomVersion = { ...V8, id: "9", redaction: "v9", redactionKeepsJoinAuthorisedVia: true };
const V10: RoomVersion = {
  ...V9,
  id: "10",
  knockRestricted: true,
  stringPowerLevels: false,
  integerOnlyPowerLevels: true,
};
const V11: RoomVersion = {
  ...V10,
  id: "11",
  redaction: "v11",
  updatedRedactionRules: true,
  redactsInContent: true,
  createHasCreator: false,
  strictEventByteLimits: true,
};
const V12: RoomVersion = {
  ...V11,
  id: "12",
  stateResolution: "v2.1",
  roomIdIsCreateEventHash: true,
  privilegedCreators: true,
  additionalCreators: true,
  createInAuthEvents: false,
  strictInviteRoomState: true,
};

// MSC3757's unstable versions: 10 and 11 with owned state (Synapse's MSC3757V10 / MSC3757V11).
const MSC3757V10: RoomVersion = { ...V10, id: "org.matrix.msc3757.10", stability: "unstable", ownedState: true };
const MSC3757V11: RoomVersion = { ...V11, id: "org.matrix.msc3757.11", stability: "unstable", ownedState: true };

const TABLE: ReadonlyMap<string, RoomVersion> = new Map(
  [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, MSC3757V10, MSC3757V11].map((v) => [v.id, Object.freeze(v)]),
);

/** The room version new rooms get when the request names none. (The spec now recommends 12.) */
export const DEFAULT_ROOM_VERSION = "11";

/** Every room version this server implements: the stable ones oldest first, then the unstable ones. */
export const KNOWN_ROOM_VERSIONS: readonly string[] = Object.freeze([...TABLE.keys()]);

/** The flags of a room version, or undefined when the version is unknown. */
export function getRoomVersion(id: string): RoomVersion | undefined {
  return TABLE.get(id);
}

/** Accepts a version id or flags; throws M_UNSUPPORTED_ROOM_VERSION for an unknown id. */
export function resolveRoomVersion(version: string | RoomVersion): RoomVersion {
  if (typeof version !== "string") return version;
  const found = TABLE.get(version);
  if (!found) throw new MatrixError("M_UNSUPPORTED_ROOM_VERSION", `Unsupported room version: ${version}`);
  return found;
}

/** The `m.room_versions` capability body for /capabilities. */
export function roomVersionsCapability(): { default: string; available: Record<string, "stable" | "unstable"> } {
  const available: Record<string, "stable" | "unstable"> = {};
  for (const v of TABLE.values()) available[v.id] = v.stability;
  return { default: DEFAULT_ROOM_VERSION, available };
}
