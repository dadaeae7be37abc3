// Prometheus metrics (`enable_metrics`, Synapse's option), through prom-client with a registry per server:
// HTTP requests by route pattern, method and status with latency histograms, open /sync long polls and
// GraphQL WebSockets, events persisted, database query time, the named caches' hits and sizes, the
// federation sender's per-destination queues and backoff, received events refused by rule, delegated authentication's token
// introspection requests, and Node's process metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Services } from "../domain/services.ts";
import type { Commit } from "../domain/consumers/commit-feed.ts";
import type { QueueState } from "../federation/sender/sender.ts";
import type { LruCache } from "../domain/cache/lru.ts";

/** Which database client ran a query: the raw SQL layer (src/storage/sql.ts) or Prisma. */
export type QueryClient = "sql" | "prisma";

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const QUERY_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests = new Counter({ name: "weft_http_requests_total", help: "HTTP requests answered, by route pattern, method and status", labelNames: ["method", "route", "status"] as const, registers: [this.registry] });
  private readonly httpDuration = new Histogram({ name: "weft_http_request_duration_seconds", help: "Time from a request's arrival to its answer, by route pattern, method and status", labelNames: ["method", "route", "status"] as const, buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private readonly httpInFlight = new Gauge({ name: "weft_http_requests_in_flight", help: "HTTP requests being handled", registers: [this.registry] });
  private readonly syncConnections = new Gauge({ name: "weft_sync_connections", help: "Open client /sync requests (long polls included)", registers: [this.registry] });
  private readonly queryDuration = new Histogram({ name: "weft_db_query_duration_seconds", help: "Database query time, by client (sql: the raw layer, prisma) and operation", labelNames: ["client", "operation"] as const, buckets: QUERY_BUCKETS, registers: [this.registry] });
  private readonly eventsPersisted = new Counter({ name: "weft_events_persisted_total", help: "Room events committed, by origin (local: sent by this server's users)", labelNames: ["origin"] as const, registers: [this.registry] });
  /** Histogram children by label key: observing through a child skips hashing the labels each time. */
  private readonly queryChildren = new Map<string, Histogram.Internal<"client" | "operation">>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  requestStarted(sync: boolean): void {
    this.httpInFlight.inc();
    if (sync) this.syncConnections.inc();
  }

  requestEnded(sync: boolean, labels: { method: string; route: string; status: string }, seconds: number): void {
    this.httpInFlight.dec();
    if (sync) this.syncConnections.dec();
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  observeQuery(client: QueryClient, operation: string, seconds: number): void {
    const key = `${client}\u0000${operation}`;
    let child = this.queryChildren.get(key);
    if (!child) {
      child = this.queryDuration.labels(client, operation);
      this.queryChildren.set(key, child);
    }
    child.observe(seconds);
  }

  /** A commit listener (src/main.ts): counts the committed events by origin. */
  readonly countCommit = (s: Services, c: Commit): void => {
    const suffix = `:${s.config.server_name}`;
    let local = 0;
    for (const e of c.events) if (e.pdu.sender.endsWith(suffix)) local++;
    if (local > 0) this.eventsPersisted.inc({ origin: "local" }, local);
    if (c.events.length > local) this.eventsPersisted.inc({ origin: "remote" }, c.events.length - local);
  };

  /** Metrics read from the running services at each scrape: caches, the federation sender, WebSockets. */
  watch(s: Services, websocketClients: () => number): void {
    const registers = [this.registry];
    // The named caches (src/domain/cache), read at each scrape.
    type CacheValue = (c: LruCache<unknown, unknown>) => number | undefined;
    const eachCache = (value: CacheValue, put: (name: string, v: number) => void) => {
      for (const c of s.caches.all()) {
        const v = value(c);
        if (v !== undefined) put(c.name, v);
      }
    };
    const cacheGauge = (name: string, help: string, value: CacheValue) =>
      new Gauge({ name, help, labelNames: ["name"] as const, registers, collect() {
        this.reset();
        eachCache(value, (n, v) => this.set({ name: n }, v));
      } });
    const cacheCounter = (name: string, help: string, value: CacheValue) =>
      new Counter({ name, help, labelNames: ["name"] as const, registers, collect() {
        this.reset();
        eachCache(value, (n, v) => this.inc({ name: n }, v));
      } });
    cacheGauge("weft_cache_size", "Entries held by a named cache", (c) => c.size);
    cacheGauge("weft_cache_max_size", "Entries a named cache may hold (after caches.global_factor / per_cache_factors)", (c) => c.capacity);
    cacheGauge("weft_cache_weight_bytes", "Approximate bytes held by a named cache that weighs its entries", (c) => (c.weighted ? c.weight : undefined));
    cacheCounter("weft_cache_hits_total", "Lookups a named cache answered", (c) => c.hits);
    cacheCounter("weft_cache_misses_total", "Lookups a named cache could not answer", (c) => c.misses);
    // Delegated authentication (MSC3861): token introspection requests by outcome (Synapse's
    // synapse_api_auth_delegated_introspection_response, as counters).
    const introspections = (name: string, help: string, value: (v: { count: number; seconds: number }) => number) =>
      new Counter({ name, help, labelNames: ["code"] as const, registers, collect() {
        this.reset();
        for (const [code, v] of s.oauthDelegation?.introspectionStats ?? []) this.inc({ code }, value(v));
      } });
    introspections("weft_token_introspection_requests_total", "Token introspection requests to the delegated authorization server, by status (ERR: no answer)", (v) => v.count);
    introspections("weft_token_introspection_seconds_total", "Time spent in token introspection requests, by status", (v) => v.seconds);
    // Remote events refused, by the rule that refused them (domain/federation/refusals.ts).
    new Counter({ name: "weft_federation_rejected_events_total", help: "Received federation events rejected, soft-failed, dropped or kept redacted, by rule", labelNames: ["reason"] as const, registers, collect() {
      this.reset();
      for (const [reason, n] of s.processState.refusedEvents) this.inc({ reason }, n);
    } });
    new Gauge({ name: "weft_graphql_ws_connections", help: "Open GraphQL WebSocket connections (graphql-ws)", registers, collect() {
      this.set(websocketClients());
    } });

    // The federation sender: one read of its queues per scrape, shared by the metrics below.
    let pending: Promise<QueueState[]> | undefined;
    const destinations = () => (pending ??= s.federationSender.queueStates().finally(() => setImmediate(() => (pending = undefined))));
    const perDestination = (name: string, help: string, value: (d: QueueState) => number) =>
      new Gauge({ name, help, labelNames: ["destination"] as const, registers, async collect() {
        const list = await destinations();
        this.reset();
        for (const d of list) this.set({ destination: d.destination }, value(d));
      } });
    perDestination("weft_federation_destination_queued_pdus", "PDUs queued for a destination server", (d) => d.queuedPdus);
    perDestination("weft_federation_destination_pending_edus", "EDUs waiting for a destination server", (d) => d.pendingEdus);
    perDestination("weft_federation_destination_down", "1 while a destination server is backing off after failures", (d) => (d.down ? 1 : 0));
    perDestination("weft_federation_destination_retry_interval_seconds", "A destination's current retry interval (0 when it is up)", (d) => d.retryInterval / 1000);
    perDestination("weft_federation_destination_next_attempt_timestamp_seconds", "When the next attempt to a backing-off destination may go (0: when there is something to send)", (d) => d.nextAttemptTs / 1000);
    new Counter({ name: "weft_federation_transactions_sent_total", help: "Transactions sent to a destination server since start", labelNames: ["destination"] as const, registers, async collect() {
      const list = await destinations();
      this.reset();
      for (const d of list) this.inc({ destination: d.destination }, d.transactionsSent);
    } });
  }
}
