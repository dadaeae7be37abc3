// The transaction sender: one loop per application service, fed by its persistent queue
// (store/appservice-queue.ts). A loop sends one transaction at a time, in order: the oldest transaction
// already formed (a retry keeps its txn id and its content, also after a restart), else a new one of the
// oldest waiting items. A failure — an error status, no answer, a timeout — is retried after a backoff
// that doubles from 2 s to 512 s (Synapse's recoverer); a successful ping retries at once. Each service
// has its own loop, so a slow, failing or hanging service holds up nobody else, and nothing here is on
// the path of a local send: commits only wake loops. Spec: Application Service API "Pushing events".
import type { Services } from "../services.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";
import type { AppServiceQueueStore } from "../store/appservice-queue.ts";
import { APP_SERVICE_PREFIX, ServiceUnreachable, type AppServiceClient } from "./client.ts";
import { transactionBody } from "./transaction-body.ts";
import type { Fence } from "../cluster/leases.ts";
import { RetryingLoop } from "../net/retrying-loop.ts";

/** Most items of each kind (events, ephemeral, to-device) in one transaction (as Synapse). */
export const MAX_ITEMS_PER_TRANSACTION = 100;
const FIRST_BACKOFF_MS = 2000;
const MAX_BACKOFF_MS = 512_000;
/** How long shutdown lets a request in flight finish before aborting it. */
const CLOSE_GRACE_MS = 2000;

class ServiceSender extends RetryingLoop {
  private dirty = false;
  private backoffMs = 0;
  /** Requests that failed in a row (0 while the service is up). */
  failures = 0;
  /** Transactions the service accepted since start (for metrics and tests). */
  sent = 0;

  constructor(private readonly pool: AppServiceSenders, readonly as: AppServiceRegistration) {
    super();
  }

  /** New items were queued: send them unless the service is backing off. */
  poke(): void {
    this.dirty = true;
    this.kick();
  }

  /** Retries now, whatever the backoff (a ping reached the service). */
  retryNow(): void {
    this.cancelRetry();
    this.poke();
  }

  protected hasWork(): boolean {
    return this.dirty;
  }

  protected failed(err: unknown): void {
    this.pool.s.log.warn({ err, appservice: this.as.id }, "application service queue error");
    this.scheduleRetry();
  }

  protected async run(): Promise<void> {
    const { s, store } = this.pool;
    while (!this.stopped && !this.backingOff) {
      this.dirty = false;
      const txn = (await store.formedTxn(this.as.id)) ?? (await store.formTxn(this.as.id, MAX_ITEMS_PER_TRANSACTION, this.pool.fence));
      if (!txn) return;
      const body = await transactionBody(s, this.as, txn.rows);
      const failure = await this.put(txn.txnId, body);
      if (failure !== undefined) {
        if (this.stopped) return;
        s.log.warn({ appservice: this.as.id, txnId: txn.txnId, reason: failure }, "application service transaction failed; retrying later");
        this.scheduleRetry();
        return;
      }
      await store.complete(this.as.id, txn.txnId, this.pool.fence);
      this.failures = 0;
      this.backoffMs = 0;
      this.sent++;
    }
  }

  /** Sends a transaction; undefined when the service accepted it, else why not. */
  private async put(txnId: number, body: unknown): Promise<string | undefined> {
    try {
      const a = await this.pool.client.call(this.as, {
        method: "PUT",
        path: `${APP_SERVICE_PREFIX}/transactions/${encodeURIComponent(String(txnId))}`,
        body,
        signal: this.abort.signal,
      });
      return a.status >= 200 && a.status < 300 ? undefined : `status ${a.status}`;
    } catch (err) {
      if (err instanceof ServiceUnreachable) return err.message;
      throw err;
    }
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    this.failures++;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs === 0 ? FIRST_BACKOFF_MS : this.backoffMs * 2);
    this.retryAfter(this.backoffMs);
  }
}

/** Every service's sender loop (services without a URL have none: they receive no traffic). */
export class AppServiceSenders {
  private readonly senders = new Map<string, ServiceSender>();
  private started = false;
  /** The senders' lease check (cluster/leases.ts) when several instances may run them; else undefined. */
  fence: Fence | undefined;

  constructor(readonly s: Services, readonly store: AppServiceQueueStore, readonly client: AppServiceClient) {}

  /**
   * Starts a loop per service; each sends what its queue kept from before at once (a transaction formed
   * before, by this process or by a previous holder of the lease, goes again under its txn id).
   */
  start(fence?: Fence): void {
    this.fence = fence;
    this.started = true;
    for (const as of this.s.config.app_services) {
      if (as.url === null) continue;
      const sender = new ServiceSender(this, as);
      this.senders.set(as.id, sender);
      sender.poke();
    }
  }

  /** Items were queued for these services (called once their transaction committed). */
  wake(serviceIds: Iterable<string>): void {
    if (!this.started) return;
    for (const id of serviceIds) this.senders.get(id)?.poke();
  }

  /** The service answered a ping: stop backing off (Synapse's force_retry). */
  retryNow(serviceId: string): void {
    this.senders.get(serviceId)?.retryNow();
  }

  /** A sender's state (tests and metrics): failures in a row, transactions sent, whether it backs off. */
  status(serviceId: string): { failures: number; sent: number; backingOff: boolean } | undefined {
    const x = this.senders.get(serviceId);
    return x && { failures: x.failures, sent: x.sent, backingOff: x.backingOff };
  }

  async close(): Promise<void> {
    this.started = false;
    await Promise.all([...this.senders.values()].map((x) => x.stop(CLOSE_GRACE_MS)));
    this.senders.clear();
  }
}
