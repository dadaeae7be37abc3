// The directory's view of each room (room_directory_stats): name, topic, canonical alias, avatar, join
// rule, history visibility, guest access, room type and joined-member count, kept from the room's state
// by an in-transaction indexer of every event commit (from the changes of current state), so
// /publicRooms reads a page in one query. Rooms created
// before this table existed are filled in from current state the first time the directory is read.
// Spec: Client-Server API "Listing rooms" (PublishedRoomsChunk).
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import type { EventIndexer } from "../rooms/pipeline/commit.ts";
import type { StatsField } from "../store/directory.ts";
import { RoomBatchReads } from "../store/rooms.ts";
import { plainTopic } from "../rooms/topic.ts";

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** Which stats field a state event (state key "") sets, and to what. */
const FIELD_OF: Record<string, (content: Record<string, unknown>) => [StatsField, string | null]> = {
  "m.room.name": (c) => ["name", str(c.name)],
  "m.room.topic": (c) => ["topic", plainTopic(c)],
  "m.room.canonical_alias": (c) => ["canonicalAlias", str(c.alias)],
  "m.room.avatar": (c) => ["avatarUrl", str(c.url)],
  "m.room.join_rules": (c) => ["joinRule", str(c.join_rule)],
  "m.room.history_visibility": (c) => ["historyVisibility", str(c.history_visibility)],
  "m.room.guest_access": (c) => ["guestAccess", str(c.guest_access)],
  "m.room.create": (c) => ["roomType", str(c.type)],
};
export const STATS_TYPES = Object.keys(FIELD_OF);

function fieldsFrom(events: Iterable<Pdu>): Partial<Record<StatsField, string | null>> {
  const fields: Partial<Record<StatsField, string | null>> = {};
  for (const pdu of events) {
    const f = FIELD_OF[pdu.type];
    if (!f || pdu.state_key !== "") continue;
    const [k, v] = f(pdu.content);
    fields[k] = v;
  }
  return fields;
}

export const updateDirectoryStats: EventIndexer = async (tx, s, { room, stored, stateChanges }) => {
  if (stateChanges.size === 0) return;
  const types = new Set([...stateChanges.keys()].map((k) => k.slice(0, k.indexOf("\u0000"))));
  // The events now in current state: this commit's (in hand), older ones (state resolution) read.
  const inBatch = new Map(stored.map((e) => [e.eventId, e.pdu]));
  const ids = [...stateChanges.values()].filter((id): id is string => id !== null);
  const older = ids.some((id) => !inBatch.has(id)) ? await s.rooms.events.getMany(ids.filter((id) => !inBatch.has(id))) : new Map();
  const pdus = ids.map((id) => inBatch.get(id) ?? older.get(id)?.pdu).filter((p): p is Pdu => p !== undefined);
  if (types.has("m.room.create")) await s.directory.ensureStatsRow(tx, room.roomId);
  const fields = fieldsFrom(pdus);
  for (const [k, id] of stateChanges) {
    const type = k.slice(0, k.indexOf("\u0000"));
    if (id === null && k === `${type}\u0000` && FIELD_OF[type]) fields[FIELD_OF[type]({})[0]] = null;
  }
  if (Object.keys(fields).length > 0) await s.directory.setStats(tx, room.roomId, fields);
  if (types.has("m.room.member")) await s.directory.recountJoined(tx, room.roomId);
};

/** Fills in the stats rows of rooms that have none, from their current state (a few batch reads). */
export async function backfillDirectoryStats(s: Services, roomIds: string[]): Promise<void> {
  if (roomIds.length === 0) return;
  const current = await new RoomBatchReads(s.storage.sql).currentStateOfTypes(roomIds, STATS_TYPES);
  const events = await s.rooms.events.getMany([...current.values()].flatMap((m) => [...m.values()]));
  await s.storage.sql.transaction(async (tx: SqlExecutor) => {
    for (const roomId of roomIds) {
      const ids = [...(current.get(roomId)?.values() ?? [])];
      await s.directory.ensureStatsRow(tx, roomId);
      await s.directory.setStats(tx, roomId, fieldsFrom(ids.map((id) => events.get(id)?.pdu).filter((p): p is Pdu => p !== undefined)));
      await s.directory.recountJoined(tx, roomId);
    }
  });
}
