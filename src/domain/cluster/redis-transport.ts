// The Redis pub/sub link between Weft processes (only with `redis.enabled`): two connections (Redis
// gives a subscribed connection to nothing else), one channel per server, JSON messages naming their
// sender; a process ignores its own. Reconnects with backoff (50 ms doubling to 2 s); an outage is logged
// once when it starts and once when it ends, never per message. Messages published while Redis is
// unreachable are dropped, not queued: every process catches up from PostgreSQL once it is back
// (`onConnected`, called after each (re)subscription). Spec: none (Synapse uses Redis pub/sub likewise).
import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import type { RedisConfig } from "../../config/workers.ts";
import { parseMessage, replicationChannel, type ReplicationMessage } from "./messages.ts";

export interface TransportHandlers {
  /** A message from another process, in the order Redis delivered it. */
  message(m: ReplicationMessage): void;
  /** Subscribed (first time or after an outage): `afterOutage` when the link was lost before. */
  connected(afterOutage: boolean): void;
}

/** Backoff of reconnection attempts: 50 ms, doubling, at most 2 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(2000, 50 * 2 ** Math.min(attempt, 6));
}

export class RedisTransport {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;
  private everConnected = false;
  private down = false;
  private closed = false;
  /** Messages dropped while Redis was unreachable (metrics, logs). */
  dropped = 0;

  constructor(cfg: RedisConfig, serverName: string, private readonly instance: string, private readonly log: Logger, private readonly on: TransportHandlers) {
    this.channel = replicationChannel(serverName);
    const options: RedisOptions = {
      ...(cfg.path ? { path: cfg.path } : { host: cfg.host, port: cfg.port }),
      ...(cfg.password !== undefined ? { password: cfg.password } : {}),
      ...(cfg.dbid !== undefined ? { db: cfg.dbid } : {}),
      ...(cfg.use_tls ? { tls: {} } : {}),
      connectionName: `weft-${instance}`,
      retryStrategy: reconnectDelay,
      // Nothing waits for Redis: what cannot be sent now is caught up from PostgreSQL.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResubscribe: false,
      lazyConnect: true,
    };
    this.pub = new Redis(options);
    this.sub = new Redis(options);
    for (const c of [this.pub, this.sub]) {
      c.on("error", (err: Error) => this.lost(err));
      c.on("close", () => this.lost());
    }
    this.sub.on("message", (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const m = parseMessage(text);
      if (m && m.from !== this.instance) this.on.message(m);
    });
    this.sub.on("ready", () => void this.subscribe());
  }

  /** Connects both links; resolves once subscribed, or at once if Redis is not reachable yet (it keeps trying). */
  async start(): Promise<void> {
    const first = new Promise<void>((resolve) => {
      this.whenSubscribed = resolve;
      setTimeout(resolve, 2000).unref();
    });
    this.pub.connect().catch(() => {});
    this.sub.connect().catch(() => {});
    await first;
  }

  private whenSubscribed: (() => void) | undefined;

  private async subscribe(): Promise<void> {
    try {
      await this.sub.subscribe(this.channel);
    } catch (err) {
      this.lost(err as Error);
      return;
    }
    const afterOutage = this.down || this.everConnected;
    if (this.down) this.log.info({ dropped: this.dropped }, "replication: Redis connection back; catching up from PostgreSQL");
    this.down = false;
    this.everConnected = true;
    this.whenSubscribed?.();
    this.whenSubscribed = undefined;
    this.on.connected(afterOutage);
  }

  private lost(err?: Error): void {
    if (this.closed || this.down) return;
    this.down = true;
    this.log.warn({ err: err?.message }, "replication: Redis connection lost; retrying with backoff, other processes' changes are read from PostgreSQL when it is back");
  }

  /** Whether the link is up now (publishes are dropped while it is not). */
  get up(): boolean {
    return !this.down && this.everConnected && this.pub.status === "ready";
  }

  /** Publishes a message; resolves once Redis took it (or at once when it could not: it is dropped). */
  async publish(m: ReplicationMessage): Promise<void> {
    if (this.pub.status !== "ready") {
      this.dropped++;
      return;
    }
    try {
      await this.pub.publish(this.channel, JSON.stringify(m));
    } catch {
      this.dropped++;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pub.disconnect();
    this.sub.disconnect();
  }
}
