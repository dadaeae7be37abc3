// Repository of presence (presence): one row per user — local users, and remote users their servers told
// us of (m.presence EDUs) — with their state, status message, activity times, and the presence stream
// position of their last change. Writes are serialized in this
// process so positions commit in order. Raw SQL: sync reads it. Spec: Client-Server API "Presence".
import type { Sql } from "../../storage/sql.ts";
import { idAllocator, WrittenMax, type IdAllocator } from "./ids.ts";
import { KeyedLanes } from "../rooms/lanes.ts";
import { LruCache } from "../cache/lru.ts";

export type PresenceState = "online" | "unavailable" | "offline";

export interface PresenceRow {
  userId: string;
  state: PresenceState;
  statusMsg: string | null;
  lastActiveTs: number;
  lastUserSyncTs: number;
  currentlyActive: boolean;
  streamId: number;
  /** A remote user's: when their server last told us of them (0 or absent for local users). */
  lastFederationUpdateTs?: number;
}

interface Row {
  user_id: string;
  state: string;
  status_msg: string | null;
  last_active_ts: number | string;
  last_user_sync_ts: number | string;
  currently_active: boolean | number;
  stream_id: number | string;
  last_federation_update_ts: number | string;
}

const CHUNK = 500;
const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

function toRow(r: Row): PresenceRow {
  return {
    userId: r.user_id,
    state: r.state as PresenceState,
    statusMsg: r.status_msg,
    lastActiveTs: Number(r.last_active_ts),
    lastUserSyncTs: Number(r.last_user_sync_ts),
    currentlyActive: Boolean(r.currently_active),
    streamId: Number(r.stream_id),
    lastFederationUpdateTs: Number(r.last_federation_update_ts ?? 0),
  };
}

export class PresenceStore {
  private readonly streamIds: IdAllocator;
  private readonly position: WrittenMax;
  private readonly lane = new KeyedLanes();
  /** Rows by user (null: no row), kept in step by `update`, the only writer: every /sync reads its user's row. */
  private readonly rows: LruCache<string, PresenceRow | null>;

  constructor(
    private readonly sql: Sql,
    rows: LruCache<string, PresenceRow | null> = new LruCache("presence_rows", 50_000),
  ) {
    this.rows = rows;
    this.streamIds = idAllocator(sql, "presence", "stream_id", "presence_stream_seq");
    this.position = new WrittenMax(async () => Number((await sql.get<{ m: number | string | null }>(`SELECT MAX(stream_id) AS m FROM presence`))?.m ?? 0));
  }

  currentPosition(): number | Promise<number> {
    return this.position.current();
  }

  /** Another process wrote these users' presence at `position` (cluster/replication.ts): forget their rows. */
  writtenElsewhere(position: number, userIds: readonly string[]): void {
    this.writes++;
    for (const u of userIds) this.rows.delete(u);
    this.position.advance(position);
  }

  async get(userId: string): Promise<PresenceRow | undefined> {
    const hit = this.rows.get(userId);
    if (hit !== undefined) return hit ?? undefined;
    const writes = this.writes;
    const r = await this.sql.get<Row>(`SELECT * FROM presence WHERE user_id = ?`, [userId]);
    const row = r ? toRow(r) : undefined;
    // Writes run in the lane and refresh the entry after commit; a read that raced any write is not kept.
    if (writes === this.writes && this.writing === 0) this.rows.set(userId, row ?? null);
    return row;
  }
  private writes = 0;
  private writing = 0;

  /**
   * Read-modify-write of one user's presence, one at a time: `update(current)` returns the new row (without
   * stream id) or undefined to leave it. Returns the written row with its new position, or undefined.
   */
  async update(userId: string, update: (current: PresenceRow | undefined) => Omit<PresenceRow, "streamId"> | undefined): Promise<PresenceRow | undefined> {
    return this.lane.run("presence", async () => {
      const next = update(await this.get(userId));
      if (!next) return undefined;
      this.writes++;
      this.writing++;
      this.rows.delete(userId);
      const pos = await this.sql.transaction(async (tx) => {
        const id = await this.streamIds.next(tx);
        const vals = [next.state, next.statusMsg, next.lastActiveTs, next.lastUserSyncTs, next.currentlyActive, id, next.lastFederationUpdateTs ?? 0];
        const changed = await tx.run(
          `UPDATE presence SET state = ?, status_msg = ?, last_active_ts = ?, last_user_sync_ts = ?, currently_active = ?, stream_id = ?, last_federation_update_ts = ? WHERE user_id = ?`,
          [...vals, userId],
        );
        if (changed === 0)
          await tx.run(`INSERT INTO presence (state, status_msg, last_active_ts, last_user_sync_ts, currently_active, stream_id, last_federation_update_ts, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [...vals, userId]);
        return id;
      }).finally(() => {
        this.writes++;
        this.writing--;
      });
      this.position.advance(pos);
      const row = { ...next, lastFederationUpdateTs: next.lastFederationUpdateTs ?? 0, streamId: pos };
      this.rows.set(userId, row);
      return row;
    });
  }

  /** Presence rows of these users changed in (after, upTo] (all when `after` is undefined). One query per 500 users. */
  async ofUsers(userIds: readonly string[], after: number | undefined, upTo: number): Promise<PresenceRow[]> {
    const out: PresenceRow[] = [];
    const ids = [...userIds];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const rows = await this.sql.all<Row>(`SELECT * FROM presence WHERE user_id IN (${marks(chunk.length)}) AND stream_id > ? AND stream_id <= ? ORDER BY stream_id`, [...chunk, after ?? 0, upTo]);
      for (const r of rows) out.push(toRow(r));
    }
    return out;
  }

  /** Users changed in (after, upTo], whoever they are (an incremental sync's candidates). */
  async changed(after: number, upTo: number): Promise<PresenceRow[]> {
    const rows = await this.sql.all<Row>(`SELECT * FROM presence WHERE stream_id > ? AND stream_id <= ? ORDER BY stream_id`, [after, upTo]);
    return rows.map(toRow);
  }

  /** Online users of `serverName` idle since before `ts` (the idle sweep's candidates: remote servers sweep their own). */
  async idleOnline(ts: number, serverName: string): Promise<string[]> {
    const rows = await this.sql.all<{ user_id: string }>(`SELECT user_id FROM presence WHERE state = 'online' AND last_active_ts < ? AND user_id LIKE ?`, [ts, `%:${serverName}`]);
    return rows.map((r) => r.user_id);
  }

  /** Users not offline, whoever they are (the federation presence ping picks the local ones). */
  async notOffline(): Promise<PresenceRow[]> {
    return (await this.sql.all<Row>(`SELECT * FROM presence WHERE state <> 'offline'`)).map(toRow);
  }

  /** Remote users not offline whose server has not told us of them since `ts`. */
  async staleRemote(ts: number): Promise<string[]> {
    const rows = await this.sql.all<{ user_id: string }>(`SELECT user_id FROM presence WHERE state <> 'offline' AND last_federation_update_ts > 0 AND last_federation_update_ts < ?`, [ts]);
    return rows.map((r) => r.user_id);
  }

  /** Notes that remote users' servers told us of them at `ts`, their presence unchanged (no stream move). */
  async touchFederationUpdate(userIds: readonly string[], ts: number): Promise<void> {
    if (userIds.length === 0) return;
    await this.lane.run("presence", async () => {
      this.writes++; // a read racing this write does not cache what it read
      for (let i = 0; i < userIds.length; i += CHUNK) {
        const chunk = userIds.slice(i, i + CHUNK);
        await this.sql.run(`UPDATE presence SET last_federation_update_ts = ? WHERE user_id IN (${marks(chunk.length)})`, [ts, ...chunk]);
      }
      for (const id of userIds) {
        const hit = this.rows.get(id);
        if (hit) this.rows.set(id, { ...hit, lastFederationUpdateTs: ts });
      }
    });
  }
}
