// Cache invalidation messages: a writer announces "user X's tokens changed" and every cache holder drops
// what it kept. In one process this is an in-memory fan-out; with several processes (redis.enabled) the
// replication (src/domain/cluster/replication.ts) relays each local message to the others, which apply it
// with `applyRemote` (their listeners run, nothing is relayed back).

export type Invalidation =
  | { kind: "user_tokens"; userId: string }
  | { kind: "token"; tokenHash: string }
  | { kind: "profile"; userId: string }
  | { kind: "ignored_users"; userId: string }
  /** One-time / fallback key counts of these devices changed (only relayed between processes). */
  | { kind: "key_summaries"; userId: string; deviceIds: readonly string[] };

export class InvalidationBus {
  private readonly listeners = new Set<(m: Invalidation) => void>();
  /** Several processes: hands each local message to the other processes; resolves once sent. */
  private relay: ((m: Invalidation) => Promise<void>) | undefined;
  private readonly sending = new Set<Promise<void>>();

  subscribe(fn: (m: Invalidation) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  publish(m: Invalidation): void {
    for (const fn of this.listeners) fn(m);
    if (!this.relay) return;
    const sent = this.relay(m).finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }

  /** A message another process published: the listeners here run; it is not relayed again. */
  applyRemote(m: Invalidation): void {
    for (const fn of this.listeners) fn(m);
  }

  /** Several processes: `fn` sends each local message to the others (cluster/replication.ts). */
  relayTo(fn: ((m: Invalidation) => Promise<void>) | undefined): void {
    this.relay = fn;
  }

  /**
   * Resolves once every message published so far reached the other processes' Redis connection (at once
   * with one process): a logout answers after its token is dropped everywhere.
   */
  async delivered(): Promise<void> {
    if (this.sending.size > 0) await Promise.all([...this.sending]);
  }
}
