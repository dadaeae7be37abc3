// Repository of the transactions other servers sent us (received_transactions): the answer each got, so
// that a retry of the same (origin, txn_id) is answered from here, and their expiry after a day.
// Spec: Server-Server API "Transactions" (a transaction id is unique per origin).
import type { Sql } from "../../storage/sql.ts";

export class ReceivedTransactionStore {
  constructor(private readonly sql: Sql) {}

  /** The answer stored for this transaction, if it was processed. */
  async response(origin: string, txnId: string): Promise<unknown | undefined> {
    const r = await this.sql.get<{ response: string }>(`SELECT response FROM received_transactions WHERE origin = ? AND txn_id = ?`, [origin, txnId]);
    return r ? JSON.parse(r.response) : undefined;
  }

  /** Records the answer of a processed transaction (a concurrent record of the same one is kept as is). */
  async record(origin: string, txnId: string, response: unknown, now: number): Promise<void> {
    const json = JSON.stringify(response);
    await this.sql.run(
      `INSERT INTO received_transactions (origin, txn_id, response, received_ts) VALUES (?, ?, ?, ?) ON CONFLICT (origin, txn_id) DO NOTHING`,
      [origin, txnId, json, now],
    );
  }

  /** Forgets transactions received before `before` (ms). Returns how many. */
  async expire(before: number): Promise<number> {
    return this.sql.run(`DELETE FROM received_transactions WHERE received_ts < ?`, [before]);
  }
}
