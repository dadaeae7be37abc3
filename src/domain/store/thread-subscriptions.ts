// Repository of thread subscriptions (thread_subscriptions; MSC4306, MSC4308): per local user and thread
// root, subscribed or not, automatic or manual, where an unsubscription stood in the room (its highest
// stream position and depth), and the row's position on the thread-subscriptions stream (stream_id, each
// change moves it). Read-then-write in one transaction; a change that changes nothing writes nothing.
// Raw SQL: push evaluation reads a thread's subscribers inside the event commit.
import type { Sql, SqlExecutor } from "../../storage/sql.ts";
import { idAllocator, type IdAllocator } from "./ids.ts";

export interface ThreadSubscriptionRow {
  subscribed: boolean;
  automatic: boolean;
  /** The room's highest stream position and depth when the user unsubscribed (null while subscribed). */
  unsubscribedAtStream: number | null;
  unsubscribedAtDepth: number | null;
}

/** Where an event stands in its room: its stream position (negative when backfilled) and depth. */
export interface EventOrdering {
  stream: number;
  depth: number;
}

/** One change on the stream, for MSC4308's readers. */
export interface ThreadSubscriptionChange {
  streamId: number;
  roomId: string;
  eventId: string;
  subscribed: boolean;
  automatic: boolean;
}

/** What a subscribe asked for did: a new stream position, nothing (already so), or a refusal. */
export type SubscribeOutcome = number | "unchanged" | "conflict";

type Raw = { subscribed: boolean | number; automatic: boolean | number; unsubscribed_at_stream: number | string | null; unsubscribed_at_depth: number | string | null };
const num = (v: number | string | null) => (v === null ? null : Number(v));

/**
 * Synapse's rule: an automatic subscription after an unsubscription is skipped when the unsubscription
 * already covered its cause event — by stream position, or by depth when the cause was backfilled.
 */
export function unsubscriptionCovers(unsub: { stream: number | null; depth: number | null }, cause: EventOrdering): boolean {
  if (unsub.stream !== null && unsub.stream >= 0 && cause.stream > 0 && unsub.stream >= cause.stream) return true;
  return cause.stream < 0 && unsub.depth !== null && unsub.depth >= cause.depth;
}

export class ThreadSubscriptionStore {
  readonly streamIds: IdAllocator;
  constructor(private readonly sql: Sql) {
    this.streamIds = idAllocator(sql, "thread_subscriptions", "stream_id", "thread_subscriptions_stream_seq");
  }

  /** The stream's persisted-up-to position. */
  currentPosition(): number | Promise<number> {
    return this.streamIds.now();
  }

  private async read(db: SqlExecutor, userId: string, roomId: string, eventId: string): Promise<ThreadSubscriptionRow | undefined> {
    const r = await db.get<Raw>(
      `SELECT subscribed, automatic, unsubscribed_at_stream, unsubscribed_at_depth FROM thread_subscriptions WHERE user_id = ? AND room_id = ? AND event_id = ?`,
      [userId, roomId, eventId],
    );
    return r && { subscribed: !!r.subscribed, automatic: !!r.automatic, unsubscribedAtStream: num(r.unsubscribed_at_stream), unsubscribedAtDepth: num(r.unsubscribed_at_depth) };
  }

  get(userId: string, roomId: string, eventId: string): Promise<ThreadSubscriptionRow | undefined> {
    return this.read(this.sql, userId, roomId, eventId);
  }

  /**
   * Subscribes (manually when `cause` is undefined, else automatically because of that event). A manual
   * subscription is kept over a new automatic one; an automatic one is refused when an unsubscription
   * covers its cause.
   */
  subscribe(userId: string, roomId: string, eventId: string, cause: EventOrdering | undefined): Promise<SubscribeOutcome> {
    const automatic = cause !== undefined;
    return this.sql.transaction(async (tx) => {
      const row = await this.read(tx, userId, roomId, eventId);
      if (row?.subscribed && (!row.automatic || automatic)) return "unchanged";
      if (row && !row.subscribed && cause && unsubscriptionCovers({ stream: row.unsubscribedAtStream, depth: row.unsubscribedAtDepth }, cause)) return "conflict";
      const id = await this.streamIds.next(tx);
      if (row)
        await tx.run(
          `UPDATE thread_subscriptions SET subscribed = ?, automatic = ?, unsubscribed_at_stream = NULL, unsubscribed_at_depth = NULL, stream_id = ? WHERE user_id = ? AND room_id = ? AND event_id = ?`,
          [true, automatic, id, userId, roomId, eventId],
        );
      else
        await tx.run(`INSERT INTO thread_subscriptions (user_id, room_id, event_id, subscribed, automatic, stream_id) VALUES (?, ?, ?, ?, ?, ?)`, [
          userId,
          roomId,
          eventId,
          true,
          automatic,
          id,
        ]);
      return id;
    });
  }

  /** Unsubscribes, remembering the room's highest stream position and depth now; the new position, or undefined when not subscribed. */
  unsubscribe(userId: string, roomId: string, eventId: string): Promise<number | undefined> {
    return this.sql.transaction(async (tx) => {
      const row = await this.read(tx, userId, roomId, eventId);
      if (!row?.subscribed) return undefined;
      const id = await this.streamIds.next(tx);
      const at = await tx.get<{ s: number | string | null; d: number | string | null }>(`SELECT MAX(stream_ordering) AS s, MAX(depth) AS d FROM events WHERE room_id = ?`, [roomId]);
      await tx.run(
        `UPDATE thread_subscriptions SET subscribed = ?, unsubscribed_at_stream = ?, unsubscribed_at_depth = ?, stream_id = ? WHERE user_id = ? AND room_id = ? AND event_id = ?`,
        [false, num(at?.s ?? null) ?? 0, num(at?.d ?? null) ?? 0, id, userId, roomId, eventId],
      );
      return id;
    });
  }

  /** The local users subscribed to each of these threads of a room, in one query (push evaluation). */
  async subscribersOf(db: SqlExecutor, roomId: string, rootIds: readonly string[]): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>(rootIds.map((id) => [id, new Set<string>()]));
    if (rootIds.length === 0) return out;
    const rows = await db.all<{ event_id: string; user_id: string }>(
      `SELECT event_id, user_id FROM thread_subscriptions WHERE room_id = ? AND event_id IN (${rootIds.map(() => "?").join(", ")}) AND subscribed = ?`,
      [roomId, ...rootIds, true],
    );
    for (const r of rows) out.get(r.event_id)?.add(r.user_id);
    return out;
  }

  /** A user's latest changes with from < stream_id <= to, the `limit` latest ones, oldest first. */
  async changes(userId: string, from: number, to: number, limit: number): Promise<ThreadSubscriptionChange[]> {
    const rows = await this.sql.all<{ stream_id: number | string; room_id: string; event_id: string; subscribed: boolean | number; automatic: boolean | number }>(
      `SELECT stream_id, room_id, event_id, subscribed, automatic FROM thread_subscriptions WHERE user_id = ? AND stream_id > ? AND stream_id <= ? ORDER BY stream_id DESC LIMIT ?`,
      [userId, from, to, limit],
    );
    return rows.reverse().map((r) => ({ streamId: Number(r.stream_id), roomId: r.room_id, eventId: r.event_id, subscribed: !!r.subscribed, automatic: !!r.automatic }));
  }

  /** Forgets every subscription of a user (deactivation). */
  async deleteUser(userId: string): Promise<void> {
    await this.sql.run(`DELETE FROM thread_subscriptions WHERE user_id = ?`, [userId]);
  }
}
