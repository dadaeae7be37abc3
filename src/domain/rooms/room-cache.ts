// The in-memory picture of each room a process writes to: version, current state, state group, forward
// extremities and depth. Loaded once from storage, then updated by the pipeline after each commit, so
// building and authorizing a new event reads no rows at all.
import type { Services } from "../services.ts";
import { resolveRoomVersion, type RoomVersion } from "./room-versions.ts";
import type { Pdu } from "../events/types.ts";
import { MatrixError } from "../errors.ts";
import { stateKeyOf } from "../store/state-groups.ts";

export interface RoomSnapshot {
  roomId: string;
  version: RoomVersion;
  /** (type, state_key) key → event id. Never mutated in place: replaced on each state change. */
  state: ReadonlyMap<string, string>;
  /** The state group holding `state`, if one does (one forward extremity); else undefined. */
  stateGroup: number | undefined;
  extremities: string[];
  maxDepth: number;
  createEvent: Pdu;
  createEventId: string;
  /**
   * Stream position of the newest event `state` includes, when known (set by the pipeline at commit;
   * unknown for a snapshot loaded from storage). /sync uses `state` as the state at a token at or above it.
   */
  position?: number;
}

/**
 * The room's snapshot, or undefined when this server holds no state of it: no row, or only the row of an
 * out-of-band membership (an invite received over federation, its rejection) — a room it is not in.
 */
export async function loadRoom(s: Services, roomId: string): Promise<RoomSnapshot | undefined> {
  const cached = s.rooms.cache.get(roomId);
  if (cached) return cached;
  const room = await s.rooms.store.getRoom(roomId);
  if (!room) return undefined;
  const state = await s.rooms.store.currentState(roomId);
  if (state.size === 0) return undefined;
  const extremities = await s.rooms.events.extremities(roomId);
  const ext = await s.rooms.events.getMany(extremities);
  const createId = state.get(stateKeyOf("m.room.create", ""));
  const create = createId ? await s.rooms.events.get(createId) : undefined;
  if (!create) throw new MatrixError("M_UNKNOWN", `Room ${roomId} has no create event`, 500);
  const snap: RoomSnapshot = {
    roomId,
    version: resolveRoomVersion(room.roomVersion),
    state,
    stateGroup: extremities.length === 1 ? (ext.get(extremities[0]!)?.stateGroup ?? undefined) : undefined,
    extremities,
    maxDepth: Math.max(0, ...[...ext.values()].map((e) => e.pdu.depth)),
    createEvent: create.pdu,
    createEventId: create.eventId,
    // Present though unknown: every snapshot has the same fields (see movedRoom).
    position: undefined,
  };
  s.rooms.cache.set(roomId, snap);
  return snap;
}

/** The snapshot of a room about to get its first events (created here, or joined from another server). */
export function newRoomSnapshot(roomId: string, version: RoomVersion, createEvent: Pdu, createEventId: string): RoomSnapshot {
  return { roomId, version, state: new Map(), stateGroup: undefined, extremities: [], maxDepth: 0, createEvent, createEventId, position: undefined };
}

/** What a commit or a plan moves in a room's snapshot. */
export type RoomMove = Partial<Pick<RoomSnapshot, "state" | "stateGroup" | "extremities" | "maxDepth" | "position">>;

/**
 * `room` with the fields of `to` replacing its own. Written out field by field rather than as `{ ...room,
 * ... }`: V8 gives an object literal that starts with a spread a hidden class of its own, and snapshots
 * are made and read on every send (each one another Map, and their readers' property accesses megamorphic).
 */
export function movedRoom(room: RoomSnapshot, to: RoomMove): RoomSnapshot {
  return {
    roomId: room.roomId,
    version: room.version,
    state: to.state ?? room.state,
    stateGroup: "stateGroup" in to ? to.stateGroup : room.stateGroup,
    extremities: to.extremities ?? room.extremities,
    maxDepth: to.maxDepth ?? room.maxDepth,
    createEvent: room.createEvent,
    createEventId: room.createEventId,
    position: "position" in to ? to.position : room.position,
  };
}

export async function requireRoom(s: Services, roomId: string): Promise<RoomSnapshot> {
  const room = await loadRoom(s, roomId);
  if (!room) throw new MatrixError("M_NOT_FOUND", "Unknown room", 404);
  return room;
}

/** The current state event of a room for (type, stateKey), if any. */
export async function currentStateEvent(s: Services, room: RoomSnapshot, type: string, stateKey = ""): Promise<Pdu | undefined> {
  const id = room.state.get(stateKeyOf(type, stateKey));
  return id ? (await s.rooms.events.get(id))?.pdu : undefined;
}
