// Cache invalidation messages: a writer announces "user X's tokens changed" and every cache holder drops
// what it kept. In one process this is an in-memory fan-out; across workers it is bridged (PostgreSQL
// LISTEN/NOTIFY) by the worker setup, which subscribes here and republishes remote messages.

export type Invalidation =
  | { kind: "user_tokens"; userId: string }
  | { kind: "token"; tokenHash: string }
  | { kind: "profile"; userId: string }
  | { kind: "ignored_users"; userId: string };

export class InvalidationBus {
  private readonly listeners = new Set<(m: Invalidation) => void>();
  subscribe(fn: (m: Invalidation) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  publish(m: Invalidation): void {
    for (const fn of this.listeners) fn(m);
  }
}
