// The thread-subscriptions stream as MSC4308 serves it (Synapse 1.163, with msc4306_enabled): a user's
// latest subscription changes between two positions — `subscribed` / `unsubscribed` maps of room id →
// thread root → {automatic, bump_stamp} / {bump_stamp}, bump_stamp being the change's stream position —
// for the sliding-sync extension `io.element.msc4308.thread_subscriptions` and the backwards paginated
// GET /unstable/io.element.msc4308/thread_subscriptions (tokens `ts<position>`, as Synapse's). Also the
// in-process wake-up of a user's waiting sliding syncs when their subscriptions change.
import { EventEmitter } from "node:events";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { ThreadSubscriptionChange, ThreadSubscriptionStore } from "../store/thread-subscriptions.ts";
import type { Cancel } from "../sync/wait.ts";
import { readSlidingPos } from "../sync/sliding/pos.ts";

export interface ThreadSubscriptionUpdates {
  subscribed?: Record<string, Record<string, { automatic: boolean; bump_stamp: number }>>;
  unsubscribed?: Record<string, Record<string, { bump_stamp: number }>>;
}

/** Wakes a user's waiting readers when their subscriptions change (positions only). */
export class ThreadSubscriptionFeed {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  changed(userId: string, position: number): void {
    this.emitter.emit(userId, position);
  }

  /**
   * Starts listening for `userId`'s changes BEFORE the caller reads storage (so nothing committed in
   * between is missed); `until(after)` then resolves once a change above `after` was announced, at the
   * timeout, or when cancelled. Call `dispose()` when done.
   */
  watch(userId: string): { until(after: number, timeoutMs: number, cancels?: readonly Cancel[]): Promise<void>; dispose(): void } {
    let highest = -1;
    let wake: (() => void) | undefined;
    const on = (position: number) => {
      highest = Math.max(highest, position);
      wake?.();
    };
    this.emitter.on(userId, on);
    return {
      until: (after, timeoutMs, cancels = []) => {
        if (highest > after || timeoutMs <= 0 || cancels.some((c) => c.aborted)) return Promise.resolve();
        return new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            for (const off of offs) off();
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, timeoutMs);
          const offs = cancels.map((c) => c.onAbort(done));
          wake = () => {
            if (highest > after) done();
          };
        });
      },
      dispose: () => void this.emitter.off(userId, on),
    };
  }
}

export interface ThreadSubscriptionServices {
  store: ThreadSubscriptionStore;
  feed: ThreadSubscriptionFeed;
}

/** The client format of changes (the maps are left out when empty). */
export function formatChanges(changes: readonly ThreadSubscriptionChange[]): ThreadSubscriptionUpdates {
  const out: ThreadSubscriptionUpdates = {};
  for (const c of changes) {
    if (c.subscribed) ((out.subscribed ??= {})[c.roomId] ??= {})[c.eventId] = { automatic: c.automatic, bump_stamp: c.streamId };
    else ((out.unsubscribed ??= {})[c.roomId] ??= {})[c.eventId] = { bump_stamp: c.streamId };
  }
  return out;
}

/** `ts<position>` → position, or undefined when not such a token. */
export function parseThreadSubscriptionsToken(token: string): number | undefined {
  const m = /^ts(0|[1-9][0-9]{0,15})$/.exec(token);
  return m ? Number(m[1]) : undefined;
}

const MAX_LIMIT = 512;

/**
 * GET /unstable/io.element.msc4308/thread_subscriptions?dir=b[&from=][&to=][&limit=]: the requester's
 * latest changes from `from` (newest end, inclusive; default now) back to `to` (exclusive; a `ts` token
 * or a sliding-sync `pos`; default the start), at most `limit` (default 100, at most 512); `end` when
 * the page is full (there may be more before it).
 */
export async function paginateThreadSubscriptions(s: Services, r: Requester, q: { dir?: string; from?: string; to?: string; limit?: string }): Promise<ThreadSubscriptionUpdates & { end?: string }> {
  if (q.dir === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing string query parameter 'dir'", 400);
  if (q.dir !== "b") throw new MatrixError("M_INVALID_PARAM", "Query parameter 'dir' must be one of ['b']", 400);
  let limit = 100;
  if (q.limit !== undefined) {
    if (!/^[0-9]{1,9}$/.test(q.limit)) throw new MatrixError("M_INVALID_PARAM", "Query parameter 'limit' must be a non-negative integer", 400);
    limit = Math.min(Number(q.limit), MAX_LIMIT);
    if (limit <= 0) throw new MatrixError("M_INVALID_PARAM", "limit must be greater than 0", 400);
  }
  const store = s.threadSubscriptions.store;
  let to: number;
  if (q.from !== undefined) {
    const p = parseThreadSubscriptionsToken(q.from);
    if (p === undefined) throw new MatrixError("M_INVALID_PARAM", "`from` is not a valid token", 400);
    to = p;
  } else to = await store.currentPosition();
  let from = 0;
  if (q.to !== undefined) {
    const p = parseThreadSubscriptionsToken(q.to) ?? parseSlidingPos(q.to);
    if (p === undefined) throw new MatrixError("M_INVALID_PARAM", "`to` is not a valid token", 400);
    from = p;
  }
  const changes = await store.changes(r.userId, from, to, limit);
  const out: ThreadSubscriptionUpdates & { end?: string } = formatChanges(changes);
  if (changes.length === limit) out.end = `ts${changes[0]!.streamId - 1}`;
  return out;
}

/** A sliding-sync `pos` (sync/sliding/pos.ts): the thread-subscriptions position it holds. */
export function parseSlidingPos(pos: string): number | undefined {
  return readSlidingPos(pos)?.threadSubscriptions;
}
