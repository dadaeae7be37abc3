// GET /sync (spec: Client-Server API "Syncing"): a loop over the stream providers. It reads the current
// token (every stream's position), lets each provider add the user's data between `since` and that
// token, and returns when anything was added, on an initial or full-state sync, or when the timeout
// passes; otherwise it waits on the notifier (wait.ts) for one of the user's streams to move and reads
// again. ARCHITECTURE "Streams, tokens and live updates".
//
// How a capability plugs into sync (typing, receipts, presence, to-device, device lists, push rules):
//  1. Keep its data with an integer position per change (a table column from a sequence/allocator like
//     src/domain/store/ids.ts, or an in-memory counter for typing) and expose the current position.
//  2. Write a provider in src/domain/sync/providers/<stream>.ts implementing SyncProvider (types.ts):
//     `current(s)` and `collect(ctx, from, to)`, adding to ctx.result — per-room parts only for rooms in
//     ctx.joinedRooms, via ctx.joinedRoom(roomId).ephemeral / .account_data; top-level parts
//     (to_device, device_lists, presence ...) directly. Return true only if it added a change: that is
//     what ends a long poll. Data sent with every response (device_one_time_keys_count,
//     device_unused_fallback_key_types) is written on every call but returns false.
//  3. Declare it in src/main.ts (`syncProviders`): it replaces the placeholder in that stream's slot
//     (registry.ts). The token format does not change.
//  4. After each committed change, `s.rooms.notifier.notify({ stream, position, userIds?, roomIds? })`
//     naming the users (to-device, device lists, account data) or rooms (typing, receipts) concerned:
//     waiting /sync requests of those users (members of those rooms) wake up. A notice naming neither
//     wakes everyone. GraphQL subscriptions listen on the same notifier (src/graphql/subscriptions.ts).
//  5. `set_presence` reaches the `presenceSetters` declared in src/main.ts (the presence capability's).
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { MatrixError } from "../errors.ts";
import type { SyncFilter } from "../filters/sync-filter.ts";
import { Waiter, type Cancel } from "./wait.ts";
import { STREAMS, formatSyncToken, parseSyncToken, type SyncToken } from "./token.ts";
import type { JoinedRoomResult, SyncContext, SyncResult } from "./types.ts";
import type { StreamName } from "../rooms/notifier.ts";

export type StateAfterKey = "state_after" | "org.matrix.msc4222.state_after";

export interface SyncRequest {
  since?: string;
  timeoutMs: number;
  fullState: boolean;
  filter: SyncFilter;
  setPresence?: string;
  /**
   * The state at the timeline's end instead of its start, under this name instead of `state`: spec v1.16's
   * `use_state_after` answers `state_after`; MSC4222's unstable `org.matrix.msc4222.use_state_after`
   * answers `org.matrix.msc4222.state_after` (Synapse's names).
   */
  stateAfterKey?: StateAfterKey;
  /**
   * Aborted when the client goes away; or a function making it, called only if the request comes to
   * wait (most answers under load are immediate: nothing is built for them).
   */
  cancel?: Cancel | (() => Cancel);
  /**
   * Whether `since` acknowledges the to-device messages before it (deletes them), as a client's /sync since
   * does (the default). A live reader's later reads run from its own last position, which the client has
   * not confirmed receiving: they acknowledge nothing (live-sync.ts).
   */
  acknowledgeToDevice?: boolean;
}

export type SyncResponse = { next_batch: string } & SyncResult;

export const MAX_SYNC_TIMEOUT_MS = 10 * 60 * 1000;

function emptyResult(): SyncResult {
  return { rooms: { join: {}, invite: {}, knock: {}, leave: {} }, account_data: { events: [] }, presence: { events: [] } };
}

/** A fresh context for the providers (also sliding sync's extensions: sliding/extensions.ts). */
export function newContext(s: Services, r: Requester, req: SyncRequest, since: SyncToken | undefined, to: SyncToken): SyncContext {
  const result = emptyResult();
  return {
    s,
    requester: r,
    filter: req.filter,
    since,
    to,
    fullState: req.fullState,
    stateAfter: req.stateAfterKey !== undefined,
    acknowledgeToDevice: req.acknowledgeToDevice ?? true,
    result,
    joinedRooms: new Set(),
    presenceOf: new Set(),
    newlyJoinedRooms: new Set(),
    partialJoinedRooms: new Set(),
    joinedRoom(roomId: string): JoinedRoomResult {
      return (result.rooms.join[roomId] ??= {
        state: { events: [] },
        timeline: { events: [], limited: false, prev_batch: `s${to.events}` },
        ephemeral: { events: [] },
        account_data: { events: [] },
      });
    },
  };
}

/** Runs every provider once over (since, now]; returns the context and whether anything was added. */
export async function collectOnce(s: Services, r: Requester, req: SyncRequest, since: SyncToken | undefined): Promise<{ ctx: SyncContext; added: boolean }> {
  const ctx = newContext(s, r, req, since, await s.sync.currentToken(s, since));
  let added = false;
  for (const p of s.sync.providers()) if (await p.collect(ctx, since?.[p.stream], ctx.to[p.stream])) added = true;
  for (const d of s.sync.decorators) await d(ctx);
  return { ctx, added };
}

/**
 * Runs only the providers of `streams` over (since, to], reading per-room data for `rooms` (taken as the
 * joined rooms): for a read that takes the room events itself (the legacy /events stream). No decorators.
 */
export async function collectStreams(s: Services, r: Requester, filter: SyncFilter, since: SyncToken, to: SyncToken, rooms: ReadonlySet<string>, streams: readonly StreamName[]): Promise<SyncContext> {
  const ctx = newContext(s, r, { timeoutMs: 0, fullState: false, filter }, since, to);
  for (const roomId of rooms) ctx.joinedRooms.add(roomId);
  for (const p of s.sync.providers()) if (streams.includes(p.stream)) await p.collect(ctx, since[p.stream], to[p.stream]);
  return ctx;
}

/** The answer: with `use_state_after`, each room's `state` goes under the name asked for. */
function response(ctx: SyncContext, stateAfterKey: StateAfterKey | undefined): SyncResponse {
  if (stateAfterKey) {
    for (const room of [...Object.values(ctx.result.rooms.join), ...Object.values(ctx.result.rooms.leave)] as unknown as Record<string, unknown>[]) {
      room[stateAfterKey] = room.state;
      delete room.state;
    }
  }
  return { next_batch: formatSyncToken(ctx.to), ...ctx.result };
}

export async function sync(s: Services, r: Requester, req: SyncRequest): Promise<SyncResponse> {
  const since = req.since !== undefined ? parseSyncToken(req.since) : undefined;
  // Spec: without `set_presence` the client is marked online by syncing.
  const setPresence = req.setPresence ?? "online";
  if (!["online", "offline", "unavailable"].includes(setPresence)) throw new MatrixError("M_INVALID_PARAM", "set_presence must be online, offline or unavailable", 400);
  for (const set of s.extensions.presenceSetters) await set(s, r, setPresence as "online" | "offline" | "unavailable");
  const deadline = Date.now() + Math.min(Math.max(req.timeoutMs, 0), MAX_SYNC_TIMEOUT_MS);
  let cancels: Cancel[] | undefined;
  const cancelsOf = () => (cancels ??= [s.sync.shuttingDown, ...(req.cancel ? [typeof req.cancel === "function" ? req.cancel() : req.cancel] : [])]);
  // Listening starts before the first read: a change committed while reading still wakes the wait.
  const waiter = new Waiter(s.rooms.notifier, r.userId);
  try {
    // A long poll from the current position (a client's next poll after an answer) has nothing to read
    // yet: it waits first, and the providers run once it is woken or times out (that answer then carries
    // what every answer does, e.g. the one-time key counts). The rooms it listens to are all the user's
    // joined rooms: a notice of one the providers would not show only makes it read and wait again.
    if (since !== undefined && !req.fullState && deadline > Date.now()) {
      const now = await s.sync.currentToken(s, since);
      if (STREAMS.every((name) => now[name] === since[name]) && !cancelsOf().some((x) => x.aborted)) {
        waiter.rooms = new Set(await s.sync.streamCache.joinedRoomIds(s, r.userId));
        await waiter.until(now, deadline - Date.now(), cancelsOf());
      }
    }
    for (;;) {
      const { ctx, added } = await collectOnce(s, r, req, since);
      waiter.rooms = ctx.joinedRooms;
      const remaining = deadline - Date.now();
      if (added || since === undefined || req.fullState || remaining <= 0 || cancelsOf().some((x) => x.aborted)) return response(ctx, req.stateAfterKey);
      waiter.consumed(ctx.to);
      if (!(await waiter.until(ctx.to, remaining, cancelsOf()))) return response(ctx, req.stateAfterKey);
    }
  } finally {
    waiter.dispose();
  }
}
