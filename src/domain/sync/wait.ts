// The waiting side of the notifier for long polls (/sync, /events) and anything else that waits for a
// user's streams: a Waiter starts listening BEFORE the request reads storage (so nothing committed in
// between is missed), keeps the notices that concern the user, and `until(token)` resolves as soon as a
// relevant stream moved past the token — or at the timeout, or when aborted. Notices carry positions
// only; the waiter then re-reads storage. No polling. ARCHITECTURE "Streams, tokens and live updates".
import type { Notifier, StreamNotice } from "../rooms/notifier.ts";
import type { SyncToken } from "./token.ts";

/**
 * What ends a wait early (the client went away, the server shuts down). Lighter than an AbortSignal,
 * which a long poll would otherwise build per request: an EventTarget, its listeners, their removal.
 */
export interface Cancel {
  readonly aborted: boolean;
  /** Calls `fn` once, when aborted; returns what stops listening. */
  onAbort(fn: () => void): () => void;
}

/** A Cancel that `abort()` ends. */
export class Canceller implements Cancel {
  private fns: Set<() => void> | undefined;
  aborted = false;

  onAbort(fn: () => void): () => void {
    if (this.aborted) return () => {};
    (this.fns ??= new Set()).add(fn);
    return () => void this.fns?.delete(fn);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const fns = this.fns;
    this.fns = undefined;
    for (const fn of fns ?? []) fn();
  }
}

export class Waiter {
  private readonly seen: StreamNotice[] = [];
  private wake: (() => void) | undefined;
  private readonly off: () => void;
  /** Rooms whose events concern the user (joined rooms); set once known, may be replaced. */
  rooms: ReadonlySet<string> = new Set();
  /** Users whose presence changes concern the user besides those naming them (the members of a room peeked into). */
  presenceOf: ReadonlySet<string> = new Set();

  constructor(private readonly notifier: Notifier, private readonly userId: string) {
    this.off = notifier.onStream((n) => {
      this.seen.push(n);
      if (this.seen.length > 1000) this.seen.splice(0, 500);
      this.wake?.();
    });
  }

  /** Does a notice concern this user: their own id, one of their rooms, a user whose presence they watch, or everyone (neither given)? */
  private concerns(n: StreamNotice): boolean {
    if (!n.userIds && !n.roomIds) return true;
    if (n.userIds?.includes(this.userId)) return true;
    if (n.stream === "presence" && this.presenceOf.size > 0 && n.userIds?.some((u) => this.presenceOf.has(u))) return true;
    return n.roomIds?.some((r) => this.rooms.has(r)) ?? false;
  }

  private pending(after: SyncToken): boolean {
    return this.seen.some((n) => n.position > after[n.stream] && this.concerns(n));
  }

  /** Resolves true when a relevant stream moves past `after`, false at the timeout or when any of `cancels` aborts. */
  until(after: SyncToken, timeoutMs: number, cancels: readonly Cancel[] = []): Promise<boolean> {
    if (this.pending(after)) return Promise.resolve(true);
    if (timeoutMs <= 0 || cancels.some((x) => x.aborted)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const unpark = this.notifier.park();
      const done = (woken: boolean) => {
        unpark();
        clearTimeout(timer);
        for (const off of offs) off();
        this.wake = undefined;
        resolve(woken);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      const offs = cancels.map((x) => x.onAbort(() => done(false)));
      this.wake = () => {
        if (this.pending(after)) done(true);
      };
    });
  }

  /** Forgets notices at or below `token` (after a read that covered them). */
  consumed(token: SyncToken): void {
    for (let i = this.seen.length - 1; i >= 0; i--) if (this.seen[i]!.position <= token[this.seen[i]!.stream]) this.seen.splice(i, 1);
  }

  dispose(): void {
    this.off();
    this.wake = undefined;
  }
}
