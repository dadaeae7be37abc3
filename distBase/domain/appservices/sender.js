import { APP_SERVICE_PREFIX, ServiceUnreachable } from "./client.js";
import { transactionBody } from "./transaction-body.js";
import { RetryingLoop } from "../net/retrying-loop.js";
/** Most items of each kind (events, ephemeral, to-device) in one transaction (as Synapse). */
export const MAX_ITEMS_PER_TRANSACTION = 100;
const FIRST_BACKOFF_MS = 2000;
const MAX_BACKOFF_MS = 512_000;
/** How long shutdown lets a request in flight finish before aborting it. */
const CLOSE_GRACE_MS = 2000;
class ServiceSender extends RetryingLoop {
    pool;
    as;
    dirty = false;
    backoffMs = 0;
    /** Requests that failed in a row (0 while the service is up). */
    failures = 0;
    /** Transactions the service accepted since start (for metrics and tests). */
    sent = 0;
    constructor(pool, as) {
        super();
        this.pool = pool;
        this.as = as;
    }
    /** New items were queued: send them unless the service is backing off. */
    poke() {
        this.dirty = true;
        this.kick();
    }
    /** Retries now, whatever the backoff (a ping reached the service). */
    retryNow() {
        this.cancelRetry();
        this.poke();
    }
    hasWork() {
        return this.dirty;
    }
    failed(err) {
        this.pool.s.log.warn({ err, appservice: this.as.id }, "application service queue error");
        this.scheduleRetry();
    }
    async run() {
        const { s, store } = this.pool;
        while (!this.stopped && !this.backingOff) {
            this.dirty = false;
            const txn = (await store.formedTxn(this.as.id)) ?? (await store.formTxn(this.as.id, MAX_ITEMS_PER_TRANSACTION));
            if (!txn)
                return;
            const body = await transactionBody(s, this.as, txn.rows);
            const failure = await this.put(txn.txnId, body);
            if (failure !== undefined) {
                if (this.stopped)
                    return;
                s.log.warn({ appservice: this.as.id, txnId: txn.txnId, reason: failure }, "application service transaction failed; retrying later");
                this.scheduleRetry();
                return;
            }
            await store.complete(this.as.id, txn.txnId);
            this.failures = 0;
            this.backoffMs = 0;
            this.sent++;
        }
    }
    /** Sends a transaction; undefined when the service accepted it, else why not. */
    async put(txnId, body) {
        try {
            const a = await this.pool.client.call(this.as, {
                method: "PUT",
                path: `${APP_SERVICE_PREFIX}/transactions/${encodeURIComponent(String(txnId))}`,
                body,
                signal: this.abort.signal,
            });
            return a.status >= 200 && a.status < 300 ? undefined : `status ${a.status}`;
        }
        catch (err) {
            if (err instanceof ServiceUnreachable)
                return err.message;
            throw err;
        }
    }
    scheduleRetry() {
        if (this.stopped)
            return;
        this.failures++;
        this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs === 0 ? FIRST_BACKOFF_MS : this.backoffMs * 2);
        this.retryAfter(this.backoffMs);
    }
}
/** Every service's sender loop (services without a URL have none: they receive no traffic). */
export class AppServiceSenders {
    s;
    store;
    client;
    senders = new Map();
    started = false;
    constructor(s, store, client) {
        this.s = s;
        this.store = store;
        this.client = client;
    }
    /** Starts a loop per service; each sends what its queue kept from before at once. */
    start() {
        this.started = true;
        for (const as of this.s.config.app_services) {
            if (as.url === null)
                continue;
            const sender = new ServiceSender(this, as);
            this.senders.set(as.id, sender);
            sender.poke();
        }
    }
    /** Items were queued for these services (called once their transaction committed). */
    wake(serviceIds) {
        if (!this.started)
            return;
        for (const id of serviceIds)
            this.senders.get(id)?.poke();
    }
    /** The service answered a ping: stop backing off (Synapse's force_retry). */
    retryNow(serviceId) {
        this.senders.get(serviceId)?.retryNow();
    }
    /** A sender's state (tests and metrics): failures in a row, transactions sent, whether it backs off. */
    status(serviceId) {
        const x = this.senders.get(serviceId);
        return x && { failures: x.failures, sent: x.sent, backingOff: x.backingOff };
    }
    async close() {
        await Promise.all([...this.senders.values()].map((x) => x.stop(CLOSE_GRACE_MS)));
        this.senders.clear();
    }
}
