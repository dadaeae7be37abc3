// The waiting side of the notifier for long polls (/sync, /events) and anything else that waits for a
// user's streams: a Waiter starts listening BEFORE the request reads storage (so nothing committed in
// between is missed), keeps the notices that concern the user, and `until(token)` resolves as soon as a
// relevant stream moved past the token — or at the timeout, or when aborted. Notices carry positions
// only; the waiter then re-reads storage. No polling. ARCHITECTURE "Streams, tokens and live updates".
import type { Notifier, StreamNotice } from "../rooms/notifier.ts";
import type { SyncToken } from "./token.ts";

export class Waiter {
  private readonly seen: StreamNotice[] = [];
  private wake: (() => void) | undefined;
  private readonly off: () => void;
  /** Rooms whose events concern the user (joined rooms); set once known, may be replaced. */
  rooms: ReadonlySet<string> = new Set();

  constructor(private readonly notifier: Notifier, private readonly userId: string) {
    this.off = notifier.onStream((n) => {
      this.seen.push(n);
      if (this.seen.length > 1000) this.seen.splice(0, 500);
      this.wake?.();
    });
  }

  /** Does a notice concern this user: their own id, one of their rooms, or everyone (neither given)? */
  private concerns(n: StreamNotice): boolean {
    if (!n.userIds && !n.roomIds) return true;
    if (n.userIds?.includes(this.userId)) return true;
    return n.roomIds?.some((r) => this.rooms.has(r)) ?? false;
  }

  private pending(after: SyncToken): boolean {
    return this.seen.some((n) => n.position > after[n.stream] && this.concerns(n));
  }

  /**
   * Resolves true when a relevant stream moves past `after`, false at the timeout or when any of
   * `signals` aborts (several signals are listened to directly: AbortSignal.any costs more per call).
   */
  until(after: SyncToken, timeoutMs: number, signals?: AbortSignal | readonly AbortSignal[]): Promise<boolean> {
    const list = signals === undefined ? [] : Array.isArray(signals) ? (signals as readonly AbortSignal[]) : [signals as AbortSignal];
    if (this.pending(after)) return Promise.resolve(true);
    if (timeoutMs <= 0 || list.some((x) => x.aborted)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const unpark = this.notifier.park();
      const done = (woken: boolean) => {
        unpark();
        clearTimeout(timer);
        for (const x of list) x.removeEventListener("abort", onAbort);
        this.wake = undefined;
        resolve(woken);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      for (const x of list) x.addEventListener("abort", onAbort);
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
