// Which rooms this server joined with partial state ("faster joins": send_join with omit_members) and
// still lacks the full state of: the partial_state_rooms rows, mirrored in memory (read on every event a
// partial room receives and on every read that must wait), and the waits for a room's state to be complete.
// Spec: Server-Server API "Joining Rooms" (send_join v2, omit_members; MSC3706/MSC3902 partial state).
import type { Services } from "../../services.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import type { PartialStateFlags } from "../../process-state.ts";
import { MatrixError } from "../../errors.ts";

export interface PartialStateRoom {
  roomId: string;
  joinEventId: string;
  /** Where the full state can be fetched (send_join's servers_in_room), the joined one first. */
  servers: string[];
  /** The device-list stream's position at the join (undefined for rows from before it was kept). */
  deviceListsStream?: number;
}

/** The flags of this process (Services.processState), read from partial_state_rooms on first use. */
function flags(s: Services): PartialStateFlags {
  let f = s.processState.partialStateFlags;
  if (!f) {
    const rows = s.storage.sql.all<{ room_id: string; join_event_id: string; servers: string; completed_stream: number | bigint | null; device_lists_stream: number | bigint | null }>(
      `SELECT room_id, join_event_id, servers, completed_stream, device_lists_stream FROM partial_state_rooms`,
    );
    const rooms = rows.then(
      (all) =>
        new Map(
          all
            .filter((r) => r.completed_stream === null)
            .map((r) => [
              r.room_id,
              {
                roomId: r.room_id,
                joinEventId: r.join_event_id,
                servers: JSON.parse(r.servers) as string[],
                ...(r.device_lists_stream === null ? {} : { deviceListsStream: Number(r.device_lists_stream) }),
              },
            ]),
        ),
    );
    const completed = rows.then((all) => new Map(all.filter((r) => r.completed_stream !== null).map((r) => [r.room_id, Number(r.completed_stream)])));
    const joins = rows.then((all) => new Set(all.map((r) => r.join_event_id)));
    f = { rooms, completed, joins, waiters: new Map() };
    s.processState.partialStateFlags = f;
  }
  return f;
}

/** The rooms still partial (resumed after a restart). */
export async function partialStateRooms(s: Services): Promise<PartialStateRoom[]> {
  return [...(await flags(s).rooms).values()];
}

/** The room's partial-state record, or undefined when its state is complete (or it is not joined). */
export async function partialStateOf(s: Services, roomId: string): Promise<PartialStateRoom | undefined> {
  return (await flags(s).rooms).get(roomId);
}

export async function isPartialState(s: Services, roomId: string): Promise<boolean> {
  return (await flags(s).rooms).has(roomId);
}

/**
 * Whether `server` is in a partial-state room as far as this server can tell: its join named it (the
 * members of the room are not known yet). Synapse's "hosts in room, or the partial-state approximation",
 * by which typing and receipts from a room's servers are taken while partial.
 */
export async function inPartialStateRoom(s: Services, roomId: string, server: string): Promise<boolean> {
  return (await flags(s).rooms).get(roomId)?.servers.includes(server) ?? false;
}

/**
 * What /sync needs: the rooms still partial, and when each completed one became complete (a sync since an
 * earlier token shows the room anew to the clients it was hidden from).
 */
export async function partialStateView(s: Services): Promise<{ partial: ReadonlySet<string>; completedAt: ReadonlyMap<string, number> }> {
  const f = flags(s);
  return { partial: new Set((await f.rooms).keys()), completedAt: await f.completed };
}

/**
 * Whether `eventId` is our join that made its room partial: the resident server that completed it sends
 * it to the room (Synapse never sends such a join itself: `proactively_send` false), so we do not.
 */
export async function isPartialStateJoin(s: Services, eventId: string): Promise<boolean> {
  return (await flags(s).joins).has(eventId);
}

/**
 * Records a later partial join of a room already partial (another of our users'), in the transaction that
 * stores it: not sent either (kept in memory: a restart before the sender read it may send it, harmlessly).
 */
export async function markPartialStateJoin(s: Services, tx: SqlExecutor, joinEventId: string): Promise<void> {
  const joins = await flags(s).joins;
  tx.onSettled?.((committed) => {
    if (committed) joins.add(joinEventId);
  });
}

/**
 * Marks a room partial, in the transaction that stores the join (seen in memory once it commits), with
 * the device-list stream's position at the join.
 */
export async function markPartialState(s: Services, tx: SqlExecutor, mark: Omit<PartialStateRoom, "deviceListsStream">): Promise<void> {
  const deviceListsStream = await s.e2ee.currentDeviceListPosition();
  const room: PartialStateRoom = { ...mark, deviceListsStream };
  await tx.run(`DELETE FROM partial_state_rooms WHERE room_id = ?`, [room.roomId]);
  await tx.run(`INSERT INTO partial_state_rooms (room_id, join_event_id, servers, created_ts, device_lists_stream) VALUES (?, ?, ?, ?, ?)`, [
    room.roomId,
    room.joinEventId,
    JSON.stringify(room.servers),
    s.clock.now(),
    deviceListsStream,
  ]);
  const f = flags(s);
  const [rooms, completed, joins] = [await f.rooms, await f.completed, await f.joins];
  tx.onSettled?.((committed) => {
    if (!committed) return;
    rooms.set(room.roomId, room);
    joins.add(room.joinEventId);
    completed.delete(room.roomId);
  });
}

/**
 * Clears the flag, in the transaction that completes the state; waiting reads resume once it commits. The
 * state counts as complete from the position after the newest event stored before this transaction.
 */
export async function clearPartialState(s: Services, tx: SqlExecutor, roomId: string): Promise<void> {
  const max = await tx.get<{ m: number | bigint | null }>(`SELECT MAX(stream_ordering) AS m FROM events`);
  const at = Number(max?.m ?? 0) + 1;
  await tx.run(`UPDATE partial_state_rooms SET completed_stream = ? WHERE room_id = ?`, [at, roomId]);
  const f = flags(s);
  const [rooms, completed] = [await f.rooms, await f.completed];
  tx.onSettled?.((committed) => {
    if (!committed) return;
    rooms.delete(roomId);
    completed.set(roomId, at);
    const waiting = f.waiters.get(roomId) ?? [];
    f.waiters.delete(roomId);
    for (const wake of waiting) wake();
    // Readers that left the room out while partial (syncs, live subscriptions) read again: it is shown now.
    s.rooms.notifier.notify({ stream: "events", position: at - 1, roomIds: [roomId], stateCompleted: true });
  });
}

/** How long a read waits for a room's full state before giving up (Synapse waits for as long as it takes). */
const MAX_WAIT_MS = 10 * 60_000;

/**
 * Waits until the room's full state is known (at once when it is): for the reads and writes that need it
 * (the member list, the room state, a local state event). Gives up with 504 after a long wait.
 */
export async function awaitFullState(s: Services, roomId: string): Promise<void> {
  const f = flags(s);
  if (!(await f.rooms).has(roomId)) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      const list = f.waiters.get(roomId);
      if (list) f.waiters.set(roomId, list.filter((w) => w !== wake));
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

/**
 * Another process changed partial_state_rooms (a join with partial state, a completion: cluster/
 * replication.ts hears it from their commits): the flags are read again, and reads here waiting for a
 * room that is now complete resume.
 */
export async function reloadPartialStateFlags(s: Services): Promise<void> {
  const old = s.processState.partialStateFlags;
  if (!old) return;
  s.processState.partialStateFlags = undefined;
  const f = flags(s);
  for (const [roomId, waiting] of old.waiters) f.waiters.set(roomId, waiting);
  const rooms = await f.rooms;
  for (const [roomId, waiting] of [...f.waiters]) {
    if (rooms.has(roomId)) continue;
    f.waiters.delete(roomId);
    for (const wake of waiting) wake();
  }
}
