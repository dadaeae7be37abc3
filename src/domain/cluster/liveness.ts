// Whether another writer process is alive, as PostgreSQL sees it. A stream's position on a reader is the
// minimum over its writers (store/ids.ts), so a writer that died — SIGKILL, a crash — would hold every
// reader's position back for good, and every process would stop seeing new events, not only the dead
// writer's rooms. Each writer therefore holds a session-level advisory lock, keyed by its instance name, on a
// connection of its own for as long as it runs: PostgreSQL drops it the moment the connection goes, which
// is when the process goes, and with it every transaction the process had open (they roll back: none of
// its in-flight positions can commit any more). A reader that has not heard from a writer for a while asks
// `pg_locks` whether that lock is still held; when it is not, the writer is retired (replication.ts): its
// positions stop bounding the reader's, until the writer speaks again after a restart. A clean shutdown
// says so itself (a `retire` message) and then releases the lock.
// Spec: none (process architecture; README "Scaling out").
import { createHash } from "node:crypto";
import pg from "pg";
import type { Services } from "../services.ts";

/** The first key of every Weft writer's advisory lock (the second is the instance's). */
const LOCK_SPACE = 0x57656674 | 0; // "Weft"

/** The lock's second key for `instance` of `server` (32 bits of a SHA-256). */
function lockKey(server: string, instance: string): number {
  return createHash("sha256").update(`${server}\0${instance}`).digest().readInt32BE(0);
}

export class WriterLiveness {
  private client: pg.Client | undefined;

  constructor(private readonly s: Services) {}

  /** Takes this process's lock (PostgreSQL only; a no-op elsewhere). */
  async hold(): Promise<void> {
    const db = this.s.config.database;
    if (db.provider !== "postgres") return;
    const client = new pg.Client({ connectionString: db.url, application_name: `weft ${this.s.instanceName} liveness` });
    client.on("error", (err) => this.s.log.error({ err }, "replication: the liveness connection to PostgreSQL failed; other processes may take this writer for dead"));
    await client.connect();
    await client.query("SELECT pg_advisory_lock($1, $2)", [LOCK_SPACE, lockKey(this.s.config.server_name, this.s.instanceName)]);
    this.client = client;
  }

  /** Whether `instance`'s lock is held (its process is connected to the database). */
  async alive(instance: string): Promise<boolean> {
    if (this.s.config.database.provider !== "postgres") return true;
    const row = await this.s.storage.sql.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = (CAST(? AS int))::oid AND objid = (CAST(? AS int))::oid AND objsubid = 2`,
      [LOCK_SPACE, lockKey(this.s.config.server_name, instance)],
    );
    return Number(row?.n ?? 0) > 0;
  }

  /** Releases the lock (a clean shutdown, after the `retire` message went out). */
  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
