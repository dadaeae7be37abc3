// Auth rules around the create event: rule 1 (the m.room.create event itself), v12 rule 2 (the room id
// is the create event's id), the m.federate rule, and who the room's creators are in each version.
// Spec: Room Versions v1–v12 "Authorisation rules" rules 1–4; v12 "room creators".
import { eventIdOf, roomIdFromCreateEvent } from "../events/hashes.ts";
import { prevEventIds, type Pdu } from "../events/types.ts";
import { KNOWN_ROOM_VERSIONS, type RoomVersion } from "../rooms/room-versions.ts";
import { forbid, isValidUserId, serverOf, type AuthContext } from "./context.ts";

/** Rule 1: an `m.room.create` event. Returns normally when allowed. */
export function checkCreateEvent(event: Pdu, v: RoomVersion): void {
  if (prevEventIds(event).length > 0) forbid("create.prev_events", "the create event has prev_events");
  if (v.roomIdIsCreateEventHash) {
    if (event.room_id !== undefined) forbid("create.room_id", "the create event must not have a room_id in this room version");
  } else {
    if (typeof event.room_id !== "string" || serverOf(event.room_id) !== serverOf(event.sender)) {
      forbid("create.room_id_domain", "the room id's domain does not match the sender's domain");
    }
  }
  const roomVersion = event.content["room_version"];
  if (roomVersion !== undefined && (typeof roomVersion !== "string" || !KNOWN_ROOM_VERSIONS.includes(roomVersion))) {
    forbid("create.room_version", `unrecognised room_version ${JSON.stringify(roomVersion)}`);
  }
  if (v.createHasCreator && !Object.hasOwn(event.content, "creator")) {
    forbid("create.creator", "the create event's content has no creator");
  }
  if (v.additionalCreators && Object.hasOwn(event.content, "additional_creators")) {
    const extra = event.content["additional_creators"];
    if (!Array.isArray(extra) || !extra.every((u) => isValidUserId(u))) {
      // 400 to a local client, as Synapse (check_valid_additional_creators raises AuthError(400)).
      forbid("create.additional_creators", "additional_creators must be an array of valid user ids", 400);
    }
  }
}

/**
 * The room's creators. v1–10: `content.creator`; v11: the create event's sender; v12: the sender plus
 * `content.additional_creators`.
 */
export function roomCreators(create: Pdu | undefined, v: RoomVersion): Set<string> {
  const out = new Set<string>();
  if (!create) return out;
  if (v.createHasCreator) {
    const c = create.content["creator"];
    if (typeof c === "string") out.add(c);
    return out;
  }
  out.add(create.sender);
  if (v.additionalCreators) {
    const extra = create.content["additional_creators"];
    if (Array.isArray(extra)) for (const u of extra) if (typeof u === "string") out.add(u);
  }
  return out;
}

/** The user whose join may directly follow the create event (first-join rule): creator / create sender. */
export function firstJoinUser(create: Pdu, v: RoomVersion): string | undefined {
  if (v.createHasCreator) {
    const c = create.content["creator"];
    return typeof c === "string" ? c : undefined;
  }
  return create.sender;
}

/** The create event's id (given by the caller, carried in v1–2, derived from the room id in v12, or hashed). */
export function createEventIdOf(ctx: AuthContext, create: Pdu): string {
  if (ctx.options.createEventId) return ctx.options.createEventId;
  if (ctx.version.roomIdIsCreateEventHash && typeof ctx.event.room_id === "string" && ctx.event.room_id.startsWith("!")) {
    // Rule 2 (v12) has already checked that the room id is the create event's id with `!`.
    return "$" + ctx.event.room_id.slice(1);
  }
  return eventIdOf(create, ctx.version);
}

/**
 * The checks every non-create event passes first: a create event in the auth state, the room id bound to it
 * (v12 rule 2: room id = `!` + create event id; before: same room_id), and the m.federate rule.
 */
export function checkRoomAndFederation(ctx: AuthContext): Pdu {
  const { event, version: v } = ctx;
  const create = ctx.create;
  if (!create) forbid("auth_events.create", "no m.room.create event in the auth state");
  if (v.roomIdIsCreateEventHash) {
    const expected = ctx.options.createEventId ? "!" + ctx.options.createEventId.slice(1) : roomIdFromCreateEvent(create, v);
    if (event.room_id !== expected) forbid("room_id.create_event", "the room id is not the create event's id");
  } else if (create.room_id !== event.room_id) {
    forbid("auth_events.room_id", "the create event belongs to another room");
  }
  if (create.content["m.federate"] === false && serverOf(event.sender) !== serverOf(create.sender)) {
    forbid("federate", "the room is not federated and the sender is on another server");
  }
  return create;
}
