import { RoomBatchReads } from "../store/rooms.js";
const str = (v) => (typeof v === "string" ? v : null);
/** The plain-text topic: `topic`, else the text/plain representation of `m.topic` (spec m.room.topic). */
export function plainTopic(content) {
    if (typeof content.topic === "string")
        return content.topic;
    const block = content["m.topic"];
    const reps = Array.isArray(block?.["m.text"]) ? block["m.text"] : [];
    const plain = reps.find((r) => typeof r?.body === "string" && (r.mimetype === undefined || r.mimetype === "text/plain"));
    return plain ? plain.body : null;
}
/** Which stats field a state event (state key "") sets, and to what. */
const FIELD_OF = {
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
function fieldsFrom(events) {
    const fields = {};
    for (const pdu of events) {
        const f = FIELD_OF[pdu.type];
        if (!f || pdu.state_key !== "")
            continue;
        const [k, v] = f(pdu.content);
        fields[k] = v;
    }
    return fields;
}
export const updateDirectoryStats = async (tx, s, { room, stored, stateChanges }) => {
    if (stateChanges.size === 0)
        return;
    const types = new Set([...stateChanges.keys()].map((k) => k.slice(0, k.indexOf("\u0000"))));
    // The events now in current state: this commit's (in hand), older ones (state resolution) read.
    const inBatch = new Map(stored.map((e) => [e.eventId, e.pdu]));
    const ids = [...stateChanges.values()].filter((id) => id !== null);
    const older = ids.some((id) => !inBatch.has(id)) ? await s.rooms.events.getMany(ids.filter((id) => !inBatch.has(id))) : new Map();
    const pdus = ids.map((id) => inBatch.get(id) ?? older.get(id)?.pdu).filter((p) => p !== undefined);
    if (types.has("m.room.create"))
        await s.directory.ensureStatsRow(tx, room.roomId);
    const fields = fieldsFrom(pdus);
    for (const [k, id] of stateChanges) {
        const type = k.slice(0, k.indexOf("\u0000"));
        if (id === null && k === `${type}\u0000` && FIELD_OF[type])
            fields[FIELD_OF[type]({})[0]] = null;
    }
    if (Object.keys(fields).length > 0)
        await s.directory.setStats(tx, room.roomId, fields);
    if (types.has("m.room.member"))
        await s.directory.recountJoined(tx, room.roomId);
};
/** Fills in the stats rows of rooms that have none, from their current state (a few batch reads). */
export async function backfillDirectoryStats(s, roomIds) {
    if (roomIds.length === 0)
        return;
    const current = await new RoomBatchReads(s.storage.sql).currentStateOfTypes(roomIds, STATS_TYPES);
    const events = await s.rooms.events.getMany([...current.values()].flatMap((m) => [...m.values()]));
    await s.storage.sql.transaction(async (tx) => {
        for (const roomId of roomIds) {
            const ids = [...(current.get(roomId)?.values() ?? [])];
            await s.directory.ensureStatsRow(tx, roomId);
            await s.directory.setStats(tx, roomId, fieldsFrom(ids.map((id) => events.get(id)?.pdu).filter((p) => p !== undefined)));
            await s.directory.recountJoined(tx, roomId);
        }
    });
}
