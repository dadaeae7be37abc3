// The sync Filter (spec: Client-Server API "Filtering", POST /user/{userId}/filter): event_fields,
// event_format, account_data and presence EventFilters, and the room filter — rooms/not_rooms,
// include_leave, and RoomEventFilters for timeline, state, ephemeral and account_data. Validated once
// (M_BAD_JSON / M_INVALID_PARAM), stored as sent, re-parsed per /sync. Lazy-loading flags are read from
// room.state (as the spec places them) or room.timeline.
import { MatrixError } from "../errors.ts";
import { isPlainObject } from "../events/types.ts";
import { matchesFilter, parseRoomEventFilter, type FilterOptions, type RoomEventFilter } from "./room-event-filter.ts";

export interface SyncFilter {
  event_fields?: string[];
  event_format: "client" | "federation";
  account_data: RoomEventFilter;
  presence: RoomEventFilter;
  room: {
    rooms?: string[];
    not_rooms?: string[];
    include_leave: boolean;
    timeline: RoomEventFilter;
    state: RoomEventFilter;
    ephemeral: RoomEventFilter;
    account_data: RoomEventFilter;
  };
}

/** The default timeline limit when the filter gives none (as Synapse). */
export const DEFAULT_TIMELINE_LIMIT = 10;

function strings(v: unknown, name: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw new MatrixError("M_BAD_JSON", `${name} must be a list of strings`);
  return v as string[];
}

function roomIds(v: string[] | undefined, name: string): string[] | undefined {
  for (const id of v ?? []) if (!id.startsWith("!")) throw new MatrixError("M_INVALID_PARAM", `${name} contains an invalid room ID: ${id}`);
  return v;
}

function userIds(f: RoomEventFilter, name: string): RoomEventFilter {
  for (const [k, list] of [["senders", f.senders], ["not_senders", f.not_senders]] as const)
    for (const id of list ?? []) if (!id.startsWith("@") || !id.includes(":")) throw new MatrixError("M_INVALID_PARAM", `${name}.${k} contains an invalid user ID: ${id}`);
  roomIds(f.rooms, `${name}.rooms`);
  roomIds(f.not_rooms, `${name}.not_rooms`);
  return f;
}

function eventFilter(raw: unknown, name: string, opts: FilterOptions = {}): RoomEventFilter {
  return userIds(parseRoomEventFilter(raw, name, opts), name);
}

/** Validates and parses a filter definition (the body of POST /user/{userId}/filter or inline JSON). */
export function parseSyncFilter(raw: unknown, opts: FilterOptions = {}): SyncFilter {
  if (!isPlainObject(raw)) throw new MatrixError("M_BAD_JSON", "A filter must be a JSON object");
  const format = raw.event_format ?? "client";
  if (format !== "client" && format !== "federation") throw new MatrixError("M_BAD_JSON", "event_format must be client or federation");
  const room = raw.room ?? {};
  if (!isPlainObject(room)) throw new MatrixError("M_BAD_JSON", "room must be an object");
  const includeLeave = room.include_leave ?? false;
  if (typeof includeLeave !== "boolean") throw new MatrixError("M_BAD_JSON", "room.include_leave must be a boolean");
  const eventFields = strings(raw.event_fields, "event_fields");
  for (const f of eventFields ?? []) if (f === "") throw new MatrixError("M_BAD_JSON", "event_fields entries must not be empty");
  return {
    event_fields: eventFields,
    event_format: format,
    // MSC3874's fields apply to every filter of events but presence (as Synapse's): account data and
    // ephemeral events carry no relation, so rel_types keeps none of them.
    account_data: eventFilter(raw.account_data, "account_data", opts),
    presence: eventFilter(raw.presence, "presence"),
    room: {
      rooms: roomIds(strings(room.rooms, "room.rooms"), "room.rooms"),
      not_rooms: roomIds(strings(room.not_rooms, "room.not_rooms"), "room.not_rooms"),
      include_leave: includeLeave,
      timeline: eventFilter(room.timeline, "room.timeline", opts),
      state: eventFilter(room.state, "room.state", opts),
      ephemeral: eventFilter(room.ephemeral, "room.ephemeral", opts),
      account_data: eventFilter(room.account_data, "room.account_data", opts),
    },
  };
}

export const DEFAULT_SYNC_FILTER: SyncFilter = parseSyncFilter({});

/** Is this room wanted by the room filter (rooms / not_rooms)? */
export function roomWanted(f: SyncFilter, roomId: string): boolean {
  if (f.room.not_rooms?.includes(roomId)) return false;
  if (f.room.rooms && !f.room.rooms.includes(roomId)) return false;
  return true;
}

export const lazyLoadMembers = (f: SyncFilter) => Boolean(f.room.state.lazy_load_members ?? f.room.timeline.lazy_load_members);
export const includeRedundantMembers = (f: SyncFilter) => Boolean(f.room.state.include_redundant_members ?? f.room.timeline.include_redundant_members);

/** Filters non-room events ({type, content, sender?}) by an EventFilter (types, senders, limit). */
export function filterPlainEvents<T extends { type: string; sender?: string }>(f: RoomEventFilter, events: T[]): T[] {
  const out = events.filter((e) => matchesFilter({ ...f, rooms: undefined, not_rooms: undefined, contains_url: undefined }, { type: e.type, sender: e.sender ?? "", content: {} } as never, ""));
  return f.limit !== undefined ? out.slice(0, f.limit) : out;
}

/** Keeps only `fields` (dotted paths, `\.` escaping a dot) of a serialized event (spec "event_fields"). */
export function pickEventFields(event: Record<string, unknown>, fields: string[] | undefined): Record<string, unknown> {
  if (!fields) return event;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const path = field.split(/(?<!\\)\./).map((p) => p.replace(/\\\./g, "."));
    let src: unknown = event;
    for (const p of path) src = isPlainObject(src) ? src[p] : undefined;
    if (src === undefined) continue;
    let dst = out;
    for (const p of path.slice(0, -1)) dst = (isPlainObject(dst[p]) ? dst[p] : (dst[p] = {})) as Record<string, unknown>;
    dst[path[path.length - 1]!] = src;
  }
  return out;
}
