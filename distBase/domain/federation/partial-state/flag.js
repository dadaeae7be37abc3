import { MatrixError } from "../../errors.js";
const perServices = new WeakMap();
function flags(s) {
    let f = perServices.get(s);
    if (!f) {
        const rows = s.storage.sql.all(`SELECT room_id, join_event_id, servers, completed_stream FROM partial_state_rooms`);
        const rooms = rows.then((all) => new Map(all.filter((r) => r.completed_stream === null).map((r) => [r.room_id, { roomId: r.room_id, joinEventId: r.join_event_id, servers: JSON.parse(r.servers) }])));
        const completed = rows.then((all) => new Map(all.filter((r) => r.completed_stream !== null).map((r) => [r.room_id, Number(r.completed_stream)])));
        f = { rooms, completed, waiters: new Map() };
        perServices.set(s, f);
    }
    return f;
}
/** The rooms still partial (resumed after a restart). */
export async function partialStateRooms(s) {
    return [...(await flags(s).rooms).values()];
}
/** The room's partial-state record, or undefined when its state is complete (or it is not joined). */
export async function partialStateOf(s, roomId) {
    return (await flags(s).rooms).get(roomId);
}
export async function isPartialState(s, roomId) {
    return (await flags(s).rooms).has(roomId);
}
/**
 * What /sync needs: the rooms still partial, and when each completed one became complete (a sync since an
 * earlier token shows the room anew to the clients it was hidden from).
 */
export async function partialStateView(s) {
    const f = flags(s);
    return { partial: new Set((await f.rooms).keys()), completedAt: await f.completed };
}
/** Marks a room partial, in the transaction that stores the join (seen in memory once it commits). */
export async function markPartialState(s, tx, room) {
    await tx.run(`DELETE FROM partial_state_rooms WHERE room_id = ?`, [room.roomId]);
    await tx.run(`INSERT INTO partial_state_rooms (room_id, join_event_id, servers, created_ts) VALUES (?, ?, ?, ?)`, [room.roomId, room.joinEventId, JSON.stringify(room.servers), s.clock.now()]);
    const f = flags(s);
    const [rooms, completed] = [await f.rooms, await f.completed];
    tx.onSettled?.((committed) => {
        if (!committed)
            return;
        rooms.set(room.roomId, room);
        completed.delete(room.roomId);
    });
}
/**
 * Clears the flag, in the transaction that completes the state; waiting reads resume once it commits. The
 * state counts as complete from the position after the newest event stored before this transaction.
 */
export async function clearPartialState(s, tx, roomId) {
    const max = await tx.get(`SELECT MAX(stream_ordering) AS m FROM events`);
    const at = Number(max?.m ?? 0) + 1;
    await tx.run(`UPDATE partial_state_rooms SET completed_stream = ? WHERE room_id = ?`, [at, roomId]);
    const f = flags(s);
    const [rooms, completed] = [await f.rooms, await f.completed];
    tx.onSettled?.((committed) => {
        if (!committed)
            return;
        rooms.delete(roomId);
        completed.set(roomId, at);
        const waiting = f.waiters.get(roomId) ?? [];
        f.waiters.delete(roomId);
        for (const wake of waiting)
            wake();
    });
}
/** How long a read waits for a room's full state before giving up (Synapse waits for as long as it takes). */
const MAX_WAIT_MS = 10 * 60_000;
/**
 * Waits until the room's full state is known (at once when it is): for the reads and writes that need it
 * (the member list, the room state, a local state event). Gives up with 504 after a long wait.
 */
export async function awaitFullState(s, roomId) {
    const f = flags(s);
    if (!(await f.rooms).has(roomId))
        return;
    await new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            const list = f.waiters.get(roomId);
            if (list)
                f.waiters.set(roomId, list.filter((w) => w !== wake));
            reject(new MatrixError("M_UNKNOWN", "Timed out waiting for the room's full state", 504));
        }, MAX_WAIT_MS);
        timer.unref?.();
        const wake = () => {
            clearTimeout(timer);
            resolve();
        };
        const list = f.waiters.get(roomId) ?? [];
        list.push(wake);
        f.waiters.set(roomId, list);
    });
}
