// Blocking and deleting rooms (Synapse admin API "Block Room", "Delete Room API" v2 and its status): a
// blocked room refuses local joins and invites; a deletion runs in the background: block (if asked),
// every local member leaves and forgets the room (and joins the notice room `new_room_user_id` creates,
// which also takes over the local aliases), then the room is purged from storage unless `purge: false`.
// A deletion's request and progress are stored: one interrupted by a stop resumes at the next start.
// Non-admins get 403 M_FORBIDDEN.
import { MatrixError } from "../errors.js";
import { requireAdmin } from "./require-admin.js";
import { existingLocalUser } from "./users.js";
import { actingAs } from "./join.js";
import { isValidRoomId, randomString } from "../ids.js";
import { RoomAdminStore } from "../store/room-admin.js";
import { createRoom } from "../rooms/create-room.js";
import { forgetRoom, joinRoom, leaveRoom } from "../rooms/membership.js";
import { sendMessage, sendStateEvent } from "../rooms/send.js";
const DEFAULT_ROOM_NAME = "Content Violation Notification";
const DEFAULT_MESSAGE = "Sharing illegal content on this server is not permitted and rooms in violation will be blocked.";
const store = (s) => new RoomAdminStore(s.storage.sql);
function legalRoomId(roomId) {
    if (!isValidRoomId(roomId))
        throw new MatrixError("M_INVALID_PARAM", `${roomId} is not a legal room ID`, 400);
}
/** GET /v1/rooms/{roomId}/block: `{block}` and, when blocked, who blocked it. */
export async function getRoomBlock(s, r, roomId) {
    requireAdmin(r);
    legalRoomId(roomId);
    const b = await store(s).isBlocked(roomId);
    return b ? { block: true, user_id: b.userId } : { block: false };
}
/** PUT /v1/rooms/{roomId}/block `{block}`: a room need not be known here to be blocked. */
export async function setRoomBlock(s, r, roomId, body) {
    requireAdmin(r);
    legalRoomId(roomId);
    const block = body.block;
    if (block === undefined)
        throw new MatrixError("M_MISSING_PARAM", "Missing param block", 400);
    if (typeof block !== "boolean")
        throw new MatrixError("M_BAD_JSON", "Param 'block' must be a boolean.", 400);
    await store(s).setBlocked(roomId, r.userId, block, s.clock.now());
    return { block };
}
function parseDeleteBody(body) {
    const bool = (key, def) => {
        const v = body[key] ?? def;
        if (typeof v !== "boolean")
            throw new MatrixError("M_BAD_JSON", `Param '${key}' must be a boolean, if given`, 400);
        return v;
    };
    const str = (key) => {
        const v = body[key];
        if (v === undefined || v === null)
            return undefined;
        if (typeof v !== "string")
            throw new MatrixError("M_BAD_JSON", `Param '${key}' must be a string, if given`, 400);
        return v;
    };
    return {
        block: bool("block", false),
        purge: bool("purge", true),
        forcePurge: bool("force_purge", false),
        newRoomUserId: str("new_room_user_id"),
        roomName: str("room_name") ?? DEFAULT_ROOM_NAME,
        message: str("message") ?? DEFAULT_MESSAGE,
    };
}
/** DELETE /v2/rooms/{roomId}: starts the deletion; `{delete_id}` names it for the status endpoints. */
export async function startRoomDeletion(s, r, roomId, body) {
    requireAdmin(r);
    const p = parseDeleteBody(body);
    legalRoomId(roomId);
    if (p.newRoomUserId !== undefined) {
        const u = await existingLocalUser(s, p.newRoomUserId, "create rooms for");
        if (u.deactivated)
            throw new MatrixError("M_INVALID_PARAM", "new_room_user_id is deactivated", 400);
    }
    if (!(await s.rooms.store.getRoom(roomId)) && !p.block)
        throw new MatrixError("M_NOT_FOUND", `Unknown room id ${roomId}`, 404);
    if (await store(s).deletionRunning(roomId))
        throw new MatrixError("M_UNKNOWN", "History purge already in progress for " + roomId, 400);
    const deleteId = randomString(16);
    const result = { kicked_users: [], failed_to_kick_users: [], local_aliases: [], new_room_id: null };
    const params = { ...p, adminId: r.userId };
    await store(s).insertDeletion({ deleteId, roomId, status: "active", error: null, result, params: JSON.stringify(params) }, s.clock.now());
    launchDeletion(s, deleteId, roomId, params, result);
    return { delete_id: deleteId };
}
/** Thrown between steps when the server begins to stop: the row stays "active" and resumes at the next start. */
class Interrupted extends Error {
}
/** Runs a deletion in the background (not awaited: its progress is in room_deletions). */
function launchDeletion(s, deleteId, roomId, p, result) {
    const progress = () => store(s).updateDeletion(deleteId, "active", null, result);
    void s.inFlight.track(() => runDeletion(s, roomId, p, result, progress).then(() => store(s).updateDeletion(deleteId, "complete", null, result), async (err) => {
        if (err instanceof Interrupted) {
            s.log.info({ roomId, deleteId }, "room deletion interrupted by shutdown: it resumes at the next start");
            return progress();
        }
        s.log.warn({ err, roomId }, "room deletion failed");
        return store(s).updateDeletion(deleteId, "failed", err instanceof Error ? err.message : String(err), result);
    }));
}
/** At start (declared in src/main.ts, `background`): resumes the deletions a stop interrupted. */
export const resumeRoomDeletions = (s) => {
    let stopped = false;
    const resume = async () => {
        for (const row of await store(s).unfinishedDeletions()) {
            if (stopped || s.inFlight.draining)
                return;
            if (row.params === null) {
                await store(s).updateDeletion(row.deleteId, "failed", "interrupted by a restart", row.result);
                continue;
            }
            s.log.info({ roomId: row.roomId, deleteId: row.deleteId }, "resuming a room deletion interrupted by a restart");
            launchDeletion(s, row.deleteId, row.roomId, JSON.parse(row.params), row.result);
        }
    };
    void s.inFlight.track(() => resume().catch((err) => s.log.warn({ err }, "resuming room deletions failed")));
    return () => {
        stopped = true;
    };
};
async function runDeletion(s, roomId, p, result, progress) {
    // Between steps: progress saved, a turn of the event loop given to requests (a background job must not
    // hold it for a whole room), and a stop honoured.
    const checkpoint = async () => {
        await progress();
        await new Promise((resolve) => setImmediate(resolve));
        if (s.inFlight.draining)
            throw new Interrupted();
    };
    if (p.block)
        await store(s).setBlocked(roomId, p.adminId, true, s.clock.now());
    const known = await s.rooms.store.getRoom(roomId);
    if (!known)
        return;
    const suffix = `:${s.config.server_name}`;
    // A resumed deletion finds its notice room in the saved result and does not make a second one.
    let newRoomId = result.new_room_id ?? undefined;
    if (p.newRoomUserId !== undefined && newRoomId === undefined) {
        const creator = actingAs(p.newRoomUserId);
        newRoomId = (await createRoom(s, creator, { preset: "public_chat", name: p.roomName, power_level_content_override: { users_default: -10 } })).room_id;
        result.new_room_id = newRoomId;
        await progress();
        await sendMessage(s, creator, newRoomId, "m.room.message", undefined, { msgtype: "m.text", body: p.message });
    }
    const members = (await s.rooms.store.membersOf(roomId)).filter((m) => m.userId.endsWith(suffix) && ["join", "invite", "knock"].includes(m.membership));
    for (const m of members) {
        await checkpoint();
        const user = actingAs(m.userId);
        try {
            await leaveRoom(s, user, roomId);
            await forgetRoom(s, user, roomId);
            if (newRoomId !== undefined && m.membership === "join")
                await joinRoom(s, user, newRoomId);
            result.kicked_users.push(m.userId);
        }
        catch (err) {
            s.log.warn({ err, roomId, userId: m.userId }, "could not remove a user from a deleted room");
            if (!result.failed_to_kick_users.includes(m.userId))
                result.failed_to_kick_users.push(m.userId);
        }
    }
    // Local aliases leave with the room; they point at the notice room when there is one.
    await checkpoint();
    const aliases = await s.directory.aliasesOf(roomId);
    result.local_aliases = [...result.local_aliases, ...aliases];
    for (const alias of aliases)
        await s.directory.deleteAlias(alias);
    if (newRoomId !== undefined && aliases.length > 0) {
        await s.storage.sql.transaction(async (tx) => {
            for (const alias of aliases)
                await s.directory.insertAlias(tx, { alias, roomId: newRoomId, creator: p.newRoomUserId }, s.clock.now());
        });
        await sendStateEvent(s, actingAs(p.newRoomUserId), newRoomId, "m.room.canonical_alias", "", { alias: aliases[0] });
    }
    await s.rooms.store.setPublic(roomId, false);
    if (!p.purge)
        return;
    if (!p.forcePurge && result.failed_to_kick_users.length > 0)
        throw new Error(`Users are still joined to this room: ${result.failed_to_kick_users.join(", ")}`);
    await store(s).purge(roomId);
    s.rooms.cache.delete(roomId);
}
const statusEntry = (d) => ({
    delete_id: d.deleteId,
    room_id: d.roomId,
    status: d.status,
    ...(d.error !== null ? { error: d.error } : {}),
    shutdown_room: d.result,
});
/** GET /v2/rooms/{roomId}/delete_status */
export async function deletionsOfRoom(s, r, roomId) {
    requireAdmin(r);
    legalRoomId(roomId);
    const rows = await store(s).deletionsOf(roomId);
    if (rows.length === 0)
        throw new MatrixError("M_NOT_FOUND", `No delete task for room_id '${roomId}' found`, 404);
    return { results: rows.map(statusEntry) };
}
/** GET /v2/rooms/delete_status/{deleteId} */
export async function deletionStatus(s, r, deleteId) {
    requireAdmin(r);
    const row = await store(s).deletion(deleteId);
    if (!row)
        throw new MatrixError("M_NOT_FOUND", `delete id '${deleteId}' not found`, 404);
    return statusEntry(row);
}
