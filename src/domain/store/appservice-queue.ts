// Repository of the application services' persistent queues (appservice_queue, appservice_state), over
// raw SQL. A queue holds, per service and in order of id, the room events, ephemeral data and to-device
// messages its transactions still have to carry; forming a transaction stamps rows with the next txn id,
// so a retry (after a failure or a restart) resends exactly those rows under the same id.
// Spec: Application Service API "Pushing events".
import type { Param, Sql, SqlExecutor } from "../../storage/sql.ts";
import type { Fence } from "../cluster/leases.ts";

export type QueueKind = "event" | "ephemeral" | "to_device";

export interface QueueItem {
  serviceId: string;
  kind: QueueKind;
  /** Set for kind "event". */
  eventId?: string;
  /** The JSON to send, for "ephemeral" and "to_device". */
  content?: string;
}

export interface QueuedRow extends QueueItem {
  id: number;
}

export interface FormedTxn {
  txnId: number;
  rows: QueuedRow[];
}

interface Row {
  id: number | string;
  service_id: string;
  kind: string;
  event_id: string | null;
  content: string | null;
}

const toQueued = (r: Row): QueuedRow => ({
  id: Number(r.id),
  serviceId: r.service_id,
  kind: r.kind as QueueKind,
  ...(r.event_id !== null ? { eventId: r.event_id } : {}),
  ...(r.content !== null ? { content: r.content } : {}),
});

const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");
/** Rows per multi-row INSERT (5 parameters each: well under SQLite's variable limit). */
const INSERT_CHUNK = 150;

export class AppServiceQueueStore {
  constructor(private readonly sql: Sql) {}

  /** Appends items to their services' queues (inside the caller's transaction), keeping their order. */
  async enqueue(tx: SqlExecutor, items: readonly QueueItem[]): Promise<void> {
    for (let i = 0; i < items.length; i += INSERT_CHUNK) {
      const chunk = items.slice(i, i + INSERT_CHUNK);
      const params: Param[] = [];
      for (const it of chunk) params.push(it.serviceId, it.kind, it.eventId ?? null, it.content ?? null, null);
      await tx.run(
        `INSERT INTO appservice_queue (service_id, kind, event_id, content, txn_id) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
        params,
      );
    }
  }

  /** The oldest transaction formed and not yet accepted, with its rows in order (a retry sends it again). */
  async formedTxn(serviceId: string): Promise<FormedTxn | undefined> {
    const top = await this.sql.get<{ t: number | string | null }>(`SELECT MIN(txn_id) AS t FROM appservice_queue WHERE service_id = ? AND txn_id IS NOT NULL`, [serviceId]);
    if (top?.t === null || top?.t === undefined) return undefined;
    const txnId = Number(top.t);
    const rows = await this.sql.all<Row>(`SELECT id, service_id, kind, event_id, content FROM appservice_queue WHERE service_id = ? AND txn_id = ? ORDER BY id`, [serviceId, txnId]);
    return { txnId, rows: rows.map(toQueued) };
  }

  /**
   * Forms the next transaction from the oldest unsent rows (at most `limit` of each kind) under the next
   * txn id, in one database transaction; undefined when the queue is empty.
   */
  async formTxn(serviceId: string, limit: number, fence?: Fence): Promise<FormedTxn | undefined> {
    return this.sql.transaction(async (tx) => {
      await fence?.(tx);
      const picked: Row[] = [];
      for (const kind of ["event", "ephemeral", "to_device"] as const) {
        picked.push(
          ...(await tx.all<Row>(
            `SELECT id, service_id, kind, event_id, content FROM appservice_queue WHERE service_id = ? AND txn_id IS NULL AND kind = ? ORDER BY id LIMIT ?`,
            [serviceId, kind, limit],
          )),
        );
      }
      if (picked.length === 0) return undefined;
      const state = await tx.get<{ last_txn_id: number | string }>(`SELECT last_txn_id FROM appservice_state WHERE service_id = ?`, [serviceId]);
      const txnId = Number(state?.last_txn_id ?? 0) + 1;
      if (state) await tx.run(`UPDATE appservice_state SET last_txn_id = ? WHERE service_id = ?`, [txnId, serviceId]);
      else await tx.run(`INSERT INTO appservice_state (service_id, last_txn_id) VALUES (?, ?)`, [serviceId, txnId]);
      const ids = picked.map((r) => Number(r.id));
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        await tx.run(`UPDATE appservice_queue SET txn_id = ? WHERE id IN (${marks(chunk.length)})`, [txnId, ...chunk]);
      }
      return { txnId, rows: picked.map(toQueued).sort((a, b) => a.id - b.id) };
    });
  }

  /** The service accepted the transaction: its rows leave the queue. */
  async complete(serviceId: string, txnId: number, fence?: Fence): Promise<void> {
    const remove = (x: SqlExecutor) => x.run(`DELETE FROM appservice_queue WHERE service_id = ? AND txn_id = ?`, [serviceId, txnId]);
    if (!fence) {
      await remove(this.sql);
      return;
    }
    await this.sql.transaction(async (tx) => {
      await fence(tx);
      await remove(tx);
    });
  }

  /** How many items wait for the service (formed into a transaction or not). */
  async pending(serviceId: string): Promise<number> {
    const r = await this.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM appservice_queue WHERE service_id = ?`, [serviceId]);
    return Number(r?.n ?? 0);
  }
}
