// Repository of pushers (POST /pushers/set, GET /pushers): one row per (user, app_id, pushkey), with the
// position of the last notification its queue handled and since when sending has been failing.
// Spec: Client-Server API "Pushers".
import type { Sql, SqlExecutor } from "../../storage/sql.ts";
import type { Fence } from "../cluster/leases.ts";

export interface PusherRow {
  userId: string;
  appId: string;
  pushkey: string;
  kind: string;
  appDisplayName: string;
  deviceDisplayName: string;
  profileTag: string | null;
  lang: string;
  data: Record<string, unknown>;
  deviceId: string | null;
  pushkeyTs: number;
  lastStreamOrdering: number;
  failingSince: number | null;
}

interface Row {
  user_id: string;
  app_id: string;
  pushkey: string;
  kind: string;
  app_display_name: string;
  device_display_name: string;
  profile_tag: string | null;
  lang: string;
  data: string;
  device_id: string | null;
  pushkey_ts: number | string;
  last_stream_ordering: number | string;
  failing_since: number | string | null;
}

const toRow = (r: Row): PusherRow => ({
  userId: r.user_id,
  appId: r.app_id,
  pushkey: r.pushkey,
  kind: r.kind,
  appDisplayName: r.app_display_name,
  deviceDisplayName: r.device_display_name,
  profileTag: r.profile_tag,
  lang: r.lang,
  data: JSON.parse(r.data) as Record<string, unknown>,
  deviceId: r.device_id,
  pushkeyTs: Number(r.pushkey_ts),
  lastStreamOrdering: Number(r.last_stream_ordering),
  failingSince: r.failing_since === null ? null : Number(r.failing_since),
});

export class PusherStore {
  constructor(private readonly sql: Sql) {}

  async ofUser(userId: string): Promise<PusherRow[]> {
    return (await this.sql.all<Row>(`SELECT * FROM pushers WHERE user_id = ? ORDER BY app_id, pushkey`, [userId])).map(toRow);
  }

  async all(): Promise<PusherRow[]> {
    return (await this.sql.all<Row>(`SELECT * FROM pushers`)).map(toRow);
  }

  async get(userId: string, appId: string, pushkey: string): Promise<PusherRow | undefined> {
    const r = await this.sql.get<Row>(`SELECT * FROM pushers WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [userId, appId, pushkey]);
    return r ? toRow(r) : undefined;
  }

  /**
   * Creates or replaces the pusher (keeping the queue position of an existing one) and, unless `append`,
   * deletes the pushers of other users with the same app_id and pushkey; returns those deleted.
   */
  async set(p: PusherRow, append: boolean): Promise<PusherRow[]> {
    return this.sql.transaction(async (tx) => {
      const removed = append ? [] : (await tx.all<Row>(`SELECT * FROM pushers WHERE app_id = ? AND pushkey = ? AND user_id <> ?`, [p.appId, p.pushkey, p.userId])).map(toRow);
      if (!append) await tx.run(`DELETE FROM pushers WHERE app_id = ? AND pushkey = ? AND user_id <> ?`, [p.appId, p.pushkey, p.userId]);
      const fields = [p.kind, p.appDisplayName, p.deviceDisplayName, p.profileTag, p.lang, JSON.stringify(p.data), p.deviceId, p.pushkeyTs];
      const n = await tx.run(
        `UPDATE pushers SET kind = ?, app_display_name = ?, device_display_name = ?, profile_tag = ?, lang = ?, data = ?, device_id = ?, pushkey_ts = ?
         WHERE user_id = ? AND app_id = ? AND pushkey = ?`,
        [...fields, p.userId, p.appId, p.pushkey],
      );
      if (n === 0)
        await tx.run(
          `INSERT INTO pushers (kind, app_display_name, device_display_name, profile_tag, lang, data, device_id, pushkey_ts, user_id, app_id, pushkey, last_stream_ordering, failing_since)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
          [...fields, p.userId, p.appId, p.pushkey, p.lastStreamOrdering],
        );
      return removed;
    });
  }

  async delete(userId: string, appId: string, pushkey: string): Promise<boolean> {
    return (await this.sql.run(`DELETE FROM pushers WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [userId, appId, pushkey])) > 0;
  }

  /** Deletes the pushers set up from these devices (or every pusher of the user); returns them. */
  async deleteOf(userId: string, deviceIds?: readonly string[]): Promise<PusherRow[]> {
    const all = await this.ofUser(userId);
    const gone = deviceIds ? all.filter((p) => p.deviceId !== null && deviceIds.includes(p.deviceId)) : all;
    for (const p of gone) await this.delete(p.userId, p.appId, p.pushkey);
    return gone;
  }

  /** Moves the queue position (and clears failing_since); false when the pusher is gone. */
  /**
   * Moves a pusher's position past a delivered notification; false when the pusher is gone. Under a lease
   * (cluster/leases.ts) `fence` runs in the same transaction: a holder that lost the lease moves nothing.
   */
  async advance(p: Pick<PusherRow, "userId" | "appId" | "pushkey">, position: number, fence?: Fence): Promise<boolean> {
    const update = async (x: SqlExecutor) => (await x.run(`UPDATE pushers SET last_stream_ordering = ?, failing_since = NULL WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [position, p.userId, p.appId, p.pushkey])) > 0;
    if (!fence) return update(this.sql);
    return this.sql.transaction(async (tx) => {
      await fence(tx);
      return update(tx);
    });
  }

  async setFailingSince(p: Pick<PusherRow, "userId" | "appId" | "pushkey">, since: number | null): Promise<void> {
    await this.sql.run(`UPDATE pushers SET failing_since = ? WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [since, p.userId, p.appId, p.pushkey]);
  }
}
