// Completing a room joined with partial state, as Synapse's `_sync_partial_state_room`: through one of
// the servers in the room (the joined one first), the state after each of our join's prev_events is
// fetched as on receipt of an event whose prev_events this server lacks (GET /state_ids at it, then the
// events lacked by GET /event, or GET /state when many are: fetch-events.ts `stateAfter`), resolved into
// the full state before the join. One commit adds its missing entries to current state, the memberships
// and the room's snapshot groups; then every event placed since the join is placed again against the full
// state (recheck.ts), and the commit of that outcome clears the partial flag (flag.ts) — waiting reads
// resume — and runs the `partialStateCompleted` hooks (device lists: partial-state/device-lists.ts). Runs in the background after the join, and again at start-up for rooms still partial; a server
// that fails is skipped, and when all fail the resync is retried with backoff. Both commits are announced
// on the CommitFeed as every commit is (rooms/pipeline/commit.ts `announceCommit`), the second naming the
// events placed again.
// Spec: Server-Server API "Joining Rooms" (omit_members), "Room State" (GET /state_ids, GET /state).
import type { Services } from "../../services.ts";
import type { BackgroundTask } from "../../extensions.ts";
import { prevEventIds } from "../../events/types.ts";
import type { StateMap } from "../../store/state-groups.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import { announceCommit, indexStateChanges, writeMemberships } from "../../rooms/pipeline/commit.ts";
import { resolveState } from "../../state/resolve.ts";
import { RemoteRoomFetcher, type FetchLimits } from "../fetch-events.ts";
import { clearPartialState, partialStateOf, partialStateRooms, type PartialStateRoom } from "./flag.ts";
import { recheckSinceJoin, writeRecheck } from "./recheck.ts";

/** A room whose state was completed: its partial-state record and the full state before our join. */
export interface PartialStateCompleted {
  room: PartialStateRoom;
  beforeJoin: StateMap;
}

/** Run in the transaction that completes a room's state, after its events were placed again (device lists). */
export type PartialStateCompletedHook = (s: Services, tx: SqlExecutor, done: PartialStateCompleted) => Promise<void>;

/** What one attempt through one server may spend (a /state_ids may be slow to answer for a big room). */
const RESYNC_LIMITS: FetchLimits = { requests: 2_000, timeMs: 30 * 60_000, stateFetches: 200 };
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 5 * 60_000;

/**
 * Completes current state and the snapshot groups with the entries of `full` (the state before the join)
 * they lack, then places again the events placed since the join (recheck.ts) and clears the flag in the
 * commit that stores the outcome.
 */
async function completeAndRecheck(s: Services, ps: PartialStateRoom, full: StateMap, fetcher: RemoteRoomFetcher): Promise<void> {
  const roomId = ps.roomId;
  await s.rooms.lanes.run(roomId, async () => {
    let room = await loadRoom(s, roomId);
    const join = await s.rooms.events.get(ps.joinEventId);
    if (!room || !join) return;
    const stored = await s.rooms.events.getMany([...full.values()]);
    const changes = new Map<string, string>();
    for (const [k, id] of full) {
      const e = stored.get(id);
      if (!room.state.has(k) && e && e.rejectedReason === null) changes.set(k, id);
    }
    if (changes.size > 0) {
      const current = room;
      const at = current.position ?? (await s.rooms.events.streamIds.current());
      await s.storage.sql.transaction(async (tx) => {
        await s.rooms.store.changeCurrentState(tx, roomId, changes);
        await writeMemberships(s, tx, roomId, changes, new Map());
        await indexStateChanges(s, tx, current, changes);
        await s.rooms.stateGroups.completeSnapshots(tx, roomId, changes);
        // No new position: the notice carries the room's, and no snapshot (readers reload the room).
        announceCommit(s, tx, { notice: { position: at, roomId, eventIds: [] }, events: [] }, () => s.rooms.cache.delete(roomId));
      });
      room = await loadRoom(s, roomId);
      if (!room) return;
    }
    const plan = await recheckSinceJoin(s, room, join, { beforeJoin: full, stateAfterMissing: (id) => fetcher.stateAfter(id) });
    const rechecked = room;
    const at = rechecked.position ?? (await s.rooms.events.streamIds.current());
    await s.storage.sql.transaction(async (tx) => {
      await writeRecheck(s, tx, rechecked, plan);
      for (const hook of s.extensions.partialStateCompleted) await hook(s, tx, { room: ps, beforeJoin: full });
      await clearPartialState(s, tx, roomId);
      const restated = plan.changed.map((c) => c.event.eventId);
      announceCommit(s, tx, { notice: { position: at, roomId, eventIds: [], ...(restated.length > 0 ? { restated } : {}) }, events: [] }, () => s.rooms.cache.delete(roomId));
    });
    const rejected = plan.changed.filter((c) => c.rejectedReason !== null && c.event.rejectedReason === null);
    const accepted = plan.changed.filter((c) => c.rejectedReason === null && c.event.rejectedReason !== null);
    if (rejected.length > 0 || accepted.length > 0)
      s.log.warn({ roomId, rejected: rejected.map((c) => c.event.eventId), accepted: accepted.map((c) => c.event.eventId) }, "partial-state room: the full state decides otherwise of events received while partial");
  });
}

/** One attempt through `server`: the full state before the join fetched, then committed and rechecked. */
async function resyncThrough(s: Services, server: string, ps: PartialStateRoom): Promise<void> {
  const room = await loadRoom(s, ps.roomId);
  const join = await s.rooms.events.get(ps.joinEventId);
  if (!room || !join) throw new Error("the room or our join is gone");
  const fetcher = new RemoteRoomFetcher(s, room, server, RESYNC_LIMITS);
  const sets: StateMap[] = [];
  for (const prev of prevEventIds(join.pdu)) sets.push(await fetcher.stateAfter(prev));
  // (The fetched states hold no rejected event: stateAfter leaves them out.)
  const full =
    sets.length === 1
      ? sets[0]!
      : await resolveState({
          version: room.version,
          stateSets: sets,
          loadEvents: async (ids) => new Map([...(await s.rooms.events.getMany(ids))].map(([id, e]) => [id, e.pdu])),
        });
  await completeAndRecheck(s, ps, full, fetcher);
}

/** Resyncs one room until its state is complete (or the server stops). */
async function resyncRoom(s: Services, roomId: string): Promise<void> {
  const r = s.processState.partialStateResyncs;
  let delay = RETRY_MIN_MS;
  while (!r.stopped) {
    const ps = await partialStateOf(s, roomId);
    if (!ps) return;
    for (const server of ps.servers) {
      if (r.stopped) return;
      try {
        await resyncThrough(s, server, ps);
        s.log.info({ roomId, server }, "partial-state room: full state fetched");
        return;
      } catch (err) {
        s.log.warn({ roomId, server, err: (err as Error).message }, "partial-state room: could not fetch the full state through this server");
      }
    }
    await new Promise((resolve) => setTimeout(resolve, delay).unref?.());
    delay = Math.min(delay * 2, RETRY_MAX_MS);
  }
}

/** Starts the resync of a room joined with partial state (once per room at a time). */
export function resyncInBackground(s: Services, roomId: string): void {
  const r = s.processState.partialStateResyncs;
  if (r.stopped || r.rooms.has(roomId)) return;
  r.rooms.add(roomId);
  void resyncRoom(s, roomId)
    .catch((err: unknown) => s.log.error({ roomId, err }, "partial-state resync failed"))
    .finally(() => r.rooms.delete(roomId));
}

/** Background task: rooms still partial after a restart are resumed. */
export const resumePartialStateRooms: BackgroundTask = (s) => {
  const r = s.processState.partialStateResyncs;
  r.stopped = false;
  void partialStateRooms(s)
    .then((rooms) => {
      for (const ps of rooms) resyncInBackground(s, ps.roomId);
    })
    .catch((err: unknown) => s.log.error({ err }, "could not read the partial-state rooms"));
  return () => {
    r.stopped = true;
  };
};
