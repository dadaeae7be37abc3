// Server admins' view of rooms (Synapse admin API "Rooms"): the room list with its extra attributes
// (member counts, version, creator, encryption, federatable, public, join rules, state size) sorted,
// filtered and paged; one room's details, members, current state and messages. Non-admins get 403 M_FORBIDDEN.
import { MatrixError } from "../errors.js";
import { requireAdmin } from "./require-admin.js";
import { checkDirection, checkPaging } from "./users.js";
import { AdminReads } from "../store/admin-reads.js";
import { RoomBatchReads } from "../store/rooms.js";
import { isValidRoomId } from "../ids.js";
import { serializeEvents, roomVersionLookup } from "../rooms/serialize.js";
import { getMessages } from "../rooms/read.js";
import { loadRoom } from "../rooms/room-cache.js";
/** Synapse's `order_by` values: the field compared and whether its natural order is largest first. */
const ORDER = {
    name: { key: "name", desc: false },
    alphabetical: { key: "name", desc: false },
    canonical_alias: { key: "canonical_alias", desc: false },
    joined_members: { key: "joined_members", desc: true },
    size: { key: "joined_members", desc: true },
    joined_local_members: { key: "joined_local_members", desc: true },
    version: { key: "version", desc: true },
    creator: { key: "creator", desc: false },
    encryption: { key: "encryption", desc: false },
    federatable: { key: "federatable", desc: true },
    public: { key: "public", desc: true },
    join_rules: { key: "join_rules", desc: false },
    guest_access: { key: "guest_access", desc: false },
    history_visibility: { key: "history_visibility", desc: false },
    state_events: { key: "state_events", desc: true },
};
/** Every room's list entry (a few batch reads for all rooms, never one per room). */
async function roomEntries(s, only) {
    const reads = new AdminReads(s.storage.sql);
    const rows = (await reads.allRooms()).filter((r) => only === undefined || r.roomId === only);
    const suffix = `:${s.config.server_name}`;
    const [counts, stateCounts] = await Promise.all([reads.joinedCounts(suffix), reads.stateEventCounts()]);
    const ids = rows.map((r) => r.roomId);
    const types = ["m.room.create", "m.room.encryption", "m.room.name", "m.room.canonical_alias", "m.room.join_rules", "m.room.guest_access", "m.room.history_visibility", "m.room.topic", "m.room.avatar"];
    const state = await new RoomBatchReads(s.storage.sql).currentStateOfTypes(ids, types);
    // Rooms with directory stats read most fields from there; the create and encryption events always.
    const wanted = rows.flatMap((r) => {
        const m = state.get(r.roomId);
        const list = [m?.get("m.room.create"), m?.get("m.room.encryption")];
        if (!r.hasStats)
            list.push(...types.slice(2).map((t) => m?.get(t)));
        return list.filter((x) => x !== undefined);
    });
    const events = await s.rooms.events.getMany(wanted);
    const content = (roomId, type) => {
        const id = state.get(roomId)?.get(type);
        return (id ? events.get(id)?.pdu.content : undefined) ?? {};
    };
    const str = (v) => (typeof v === "string" ? v : null);
    const out = new Map();
    for (const r of rows) {
        const fromState = (type, key) => str(content(r.roomId, type)[key]);
        const pick = (stat, type, key) => (r.hasStats ? r[stat] : fromState(type, key));
        const create = content(r.roomId, "m.room.create");
        out.set(r.roomId, {
            room_id: r.roomId,
            name: pick("name", "m.room.name", "name"),
            canonical_alias: pick("canonicalAlias", "m.room.canonical_alias", "alias"),
            joined_members: counts.get(r.roomId)?.joined ?? 0,
            joined_local_members: counts.get(r.roomId)?.local ?? 0,
            version: r.version,
            creator: str(create.creator) ?? r.creator,
            encryption: str(content(r.roomId, "m.room.encryption").algorithm),
            federatable: create["m.federate"] !== false,
            public: r.isPublic,
            join_rules: pick("joinRule", "m.room.join_rules", "join_rule"),
            guest_access: pick("guestAccess", "m.room.guest_access", "guest_access"),
            history_visibility: pick("historyVisibility", "m.room.history_visibility", "history_visibility"),
            state_events: stateCounts.get(r.roomId) ?? 0,
            room_type: str(create.type),
            topic: pick("topic", "m.room.topic", "topic"),
            avatar: pick("avatarUrl", "m.room.avatar", "url"),
        });
    }
    return out;
}
function compare(a, b) {
    if (a === b)
        return 0;
    if (a === null || a === undefined)
        return -1;
    if (b === null || b === undefined)
        return 1;
    if (typeof a === "number" && typeof b === "number")
        return a - b;
    if (typeof a === "boolean" && typeof b === "boolean")
        return Number(a) - Number(b);
    return String(a) < String(b) ? -1 : 1;
}
/** GET /v1/rooms: `rooms`, `offset`, `total_rooms`, and `next_batch`/`prev_batch` when there is more. */
export async function listRooms(s, r, p) {
    requireAdmin(r);
    const { from, limit } = checkPaging(p.from, p.limit);
    const orderBy = p.orderBy ?? "name";
    const order = ORDER[orderBy];
    if (!order)
        throw new MatrixError("M_INVALID_PARAM", `Unknown value for order_by: ${orderBy}`, 400);
    const dir = checkDirection(p.dir);
    let rooms = [...(await roomEntries(s)).values()];
    if (p.searchTerm !== undefined) {
        const term = p.searchTerm;
        const lower = term.toLowerCase();
        rooms = rooms.filter((x) => x.name?.toLowerCase().includes(lower) ||
            x.canonical_alias?.slice(1, x.canonical_alias.indexOf(":")).toLowerCase().includes(lower) ||
            x.room_id.includes(term));
    }
    if (p.publicRooms !== undefined)
        rooms = rooms.filter((x) => x.public === p.publicRooms);
    if (p.emptyRooms !== undefined)
        rooms = rooms.filter((x) => (x.joined_members === 0) === p.emptyRooms);
    const sign = (order.desc ? -1 : 1) * (dir === "b" ? -1 : 1);
    rooms.sort((a, b) => sign * compare(a[order.key], b[order.key]) || compare(a.room_id, b.room_id));
    const page = rooms.slice(from, from + limit).map(({ topic: _t, avatar: _a, ...entry }) => entry);
    const out = { rooms: page, offset: from, total_rooms: rooms.length };
    if (from + page.length < rooms.length)
        out.next_batch = from + page.length;
    if (from > 0)
        out.prev_batch = Math.max(0, from - limit);
    return out;
}
/** The room id path parameter: a valid id of a room this server knows, else 400 / 404. */
export async function knownRoomId(s, roomId) {
    if (!isValidRoomId(roomId))
        throw new MatrixError("M_INVALID_PARAM", `${roomId} is not a legal room ID`, 400);
    if (!(await s.rooms.store.getRoom(roomId)))
        throw new MatrixError("M_NOT_FOUND", "Room not found", 404);
    return roomId;
}
/** GET /v1/rooms/{roomId}: the list entry plus topic, avatar, local devices, forgotten, tombstone. */
export async function roomDetails(s, r, roomId) {
    requireAdmin(r);
    await knownRoomId(s, roomId);
    const entry = (await roomEntries(s, roomId)).get(roomId);
    const reads = new AdminReads(s.storage.sql);
    const suffix = `:${s.config.server_name}`;
    const tombstoneId = (await new RoomBatchReads(s.storage.sql).currentStateOfTypes([roomId], ["m.room.tombstone"])).get(roomId)?.get("m.room.tombstone");
    const tombstone = tombstoneId ? (await s.rooms.events.get(tombstoneId))?.pdu.content : undefined;
    return {
        ...entry,
        joined_local_devices: await reads.joinedLocalDevices(roomId, suffix),
        forgotten: await reads.forgottenByAll(roomId, suffix),
        tombstoned: tombstone !== undefined,
        replacement_room: typeof tombstone?.replacement_room === "string" ? tombstone.replacement_room : null,
    };
}
/** GET /v1/rooms/{roomId}/members: the joined members' ids and their count. */
export async function roomMembers(s, r, roomId) {
    requireAdmin(r);
    await knownRoomId(s, roomId);
    const members = (await s.rooms.store.joinedMembersOf([roomId])).get(roomId) ?? [];
    return { members, total: members.length };
}
/** GET /v1/rooms/{roomId}/state[?type=]: the current state events in client format. */
export async function roomState(s, r, roomId, type) {
    requireAdmin(r);
    await knownRoomId(s, roomId);
    const current = await s.rooms.store.currentState(roomId);
    const ids = [...current.entries()].filter(([k]) => type === undefined || k.slice(0, k.indexOf("\u0000")) === type).map(([, id]) => id);
    const events = await s.rooms.events.getMany(ids);
    const stored = ids.map((id) => events.get(id)).filter((e) => e !== undefined);
    return { state: await serializeEvents(s, r, roomVersionLookup(s), stored) };
}
/** GET /v1/rooms/{roomId}/messages: /messages over every event of the room, whoever may see them. */
export async function roomMessages(s, r, roomId, req) {
    requireAdmin(r);
    await knownRoomId(s, roomId);
    const room = await loadRoom(s, roomId);
    if (!room)
        throw new MatrixError("M_NOT_FOUND", "Room not found", 404);
    return getMessages(s, r, roomId, req, { room, membership: undefined, upTo: undefined, stateGroup: room.stateGroup, everything: true });
}
