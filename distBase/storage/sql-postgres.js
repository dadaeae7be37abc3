// The raw-SQL layer's PostgreSQL side (src/storage/sql.ts says what the layer is): a pg pool, `?`
// placeholders rewritten to `$n`, int8 read as numbers. Imported only when the database is PostgreSQL, so a
// SQLite server never loads pg.
import pg from "pg";
import { checkStorableParams } from "../domain/text.js";
import { SettleHooks, withSettle } from "./sql.js";
import { toPgPlaceholders } from "./pg-placeholders.js";
import { LruCache } from "../domain/cache/lru.js";
const pgTypes = {
    getTypeParser(oid, format) {
        if (oid === 20)
            return (v) => Number(v); // int8: our ids and timestamps fit in 2^53
        return pg.types.getTypeParser(oid, format);
    },
};
/**
 * Server-side prepared statements for the writes run again and again (the send path's inserts and
 * deletes, position allocation): PostgreSQL then parses and analyses each once per connection instead of
 * at every call. Reads stay unnamed: a prepared statement may fall back to a generic plan, which a read
 * whose best plan depends on its parameters must not get. A text is named once it has run PREPARE_AFTER
 * times, and at most MAX_NAMED texts are (a name is never reused for another text: pg refuses that); the
 * texts that vary (IN lists of every length) mostly stay unnamed, so no connection holds an unbounded
 * number of statements.
 */
const PREPARE_AFTER = 20;
const MAX_NAMED = 300;
const runsOfText = new LruCache("pg_statement_runs", 2000);
const nameOfText = new Map();
const PREPARABLE = /^\s*(INSERT|UPDATE|DELETE|SELECT nextval\()/i;
function statementName(text) {
    const named = nameOfText.get(text);
    if (named !== undefined || nameOfText.size >= MAX_NAMED)
        return named;
    if (!PREPARABLE.test(text))
        return undefined;
    const runs = (runsOfText.get(text) ?? 0) + 1;
    if (runs < PREPARE_AFTER) {
        runsOfText.set(text, runs);
        return undefined;
    }
    runsOfText.delete(text);
    const name = `weft_${nameOfText.size + 1}`;
    nameOfText.set(text, name);
    return name;
}
class PgExecutor {
    client;
    dialect = "postgres";
    constructor(client) {
        this.client = client;
    }
    send(sql, params) {
        const text = toPgPlaceholders(sql);
        return this.client.query({ text, name: params.length > 0 ? statementName(text) : undefined, values: params, types: pgTypes });
    }
    q(sql, params) {
        checkStorableParams(params);
        return this.send(sql, params);
    }
    async run(sql, params = []) {
        return (await this.q(sql, params)).rowCount ?? 0;
    }
    async all(sql, params = []) {
        return (await this.q(sql, params)).rows;
    }
    async get(sql, params = []) {
        return (await this.q(sql, params)).rows[0];
    }
}
/**
 * A transaction's executor that pipelines queued writes: they go out at once (pg's pipeline mode), a
 * later read waits behind them on the connection as any query would, and COMMIT follows the last one.
 */
class PgTransaction extends PgExecutor {
    conn;
    pending = [];
    failure;
    /** The connection's socket while it is corked (see `cork`). */
    corked;
    constructor(conn) {
        super(conn);
        this.conn = conn;
    }
    /**
     * Holds the statements sent in this turn of the event loop and writes them to the socket together (one
     * write instead of one per statement: BEGIN, the lookups and nextval of a group commit; its writes and
     * COMMIT), at the end of the turn or at `flush`. A system call per statement costs more than a
     * statement's own work on a busy machine.
     */
    cork() {
        if (this.corked)
            return;
        const stream = this.conn.connection?.stream;
        if (!stream?.cork || !stream.uncork)
            return;
        stream.cork();
        this.corked = stream;
        setImmediate(() => this.flush());
    }
    /** Writes what is held (see `cork`). */
    flush() {
        const stream = this.corked;
        this.corked = undefined;
        stream?.uncork();
    }
    send(sql, params) {
        this.cork();
        return super.send(sql, params);
    }
    /** A statement without parameters (BEGIN, COMMIT), held with the others. */
    command(sql) {
        this.cork();
        return this.conn.query(sql);
    }
    queue = (sql, params = []) => {
        checkStorableParams(params);
        this.track(this.send(sql, params));
    };
    track(p) {
        this.pending.push(p.catch((err) => {
            this.failure ??= err;
        }));
    }
    /** Waits for every queued write; throws the first failure. */
    async settle() {
        await Promise.all(this.pending);
        this.pending.length = 0;
        if (this.failure !== undefined)
            throw this.failure;
    }
}
export function openPostgresSql(connectionString, max = 10) {
    // Pipeline mode: a query is written at once even while earlier ones await their answers, which only
    // happens where a transaction queues writes (PgTransaction); awaited queries run one by one as ever.
    const pool = new pg.Pool({ connectionString, max, pipeline: true });
    // An idle connection that breaks (PostgreSQL restarted, a network cut) is an 'error' on the pool: without
    // a listener Node would end the process. The pool drops that client; the next query opens a new one.
    pool.on("error", (err) => process.emitWarning(`PostgreSQL idle connection lost: ${err.message}`));
    const direct = new PgExecutor(pool);
    return {
        dialect: "postgres",
        run: (s, p) => direct.run(s, p),
        all: (s, p) => direct.all(s, p),
        get: (s, p) => direct.get(s, p),
        async transaction(fn) {
            const client = await pool.connect();
            const hooks = new SettleHooks();
            const tx = new PgTransaction(client);
            let out;
            try {
                // BEGIN goes out with the first statement; COMMIT right behind the last queued write. A failed
                // write aborts the transaction, and COMMIT then rolls it back: settle() throws that failure.
                tx.track(tx.command("BEGIN"));
                out = await fn(withSettle(tx, hooks));
                const committed = tx.command("COMMIT");
                tx.flush();
                committed.catch(() => { }); // awaited below, unless a queued write failed first
                await tx.settle();
                await committed;
            }
            catch (err) {
                tx.flush();
                await tx.settle().catch(() => { });
                await client.query("ROLLBACK").catch(() => { });
                client.release();
                hooks.run(false);
                throw tx.failure ?? err;
            }
            client.release();
            hooks.run(true);
            return out;
        },
        close: () => pool.end(),
    };
}
