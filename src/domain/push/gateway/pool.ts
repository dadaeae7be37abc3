// The push gateway sender: one queue per http pusher, fed from the notification records after the
// pusher's persisted position (pushers.last_stream_ordering), so a restart resumes where it stopped and
// nothing is sent twice. Commits only wake queues (never wait for them). A queue sends one request at a
// time, in order; a notification the user already read is skipped; a failure is retried with exponential
// backoff (1 s doubling to 1 h, giving up on a notification after 24 h of failures, as Synapse), and a
// pushkey the gateway rejects deletes the pusher. A gateway that hangs or answers garbage holds up only
// its own queue. When the user reads, a badge-only update goes out if their count changed.
// Spec: Client-Server API "Push Notifications"; Push Gateway API.
import type { Agent } from "undici";
import type { Services } from "../../services.ts";
import type { PusherRow, PusherStore } from "../../store/pushers.ts";
import type { NotificationRow } from "../../store/push-notifications.ts";
import { OutboundIpPolicy } from "../../net/ip-ranges.ts";
import { outboundAgent } from "../../net/outbound-agent.ts";
import { postToGateway } from "./client.ts";
import { RetryingLoop } from "../../net/retrying-loop.ts";
import type { Fence } from "../../cluster/leases.ts";
import { badgeBody, badgeCount, notifyBody } from "./notify-body.ts";

const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60 * 60 * 1000;
const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
const BATCH = 20;
/** How long shutdown lets requests in flight finish before aborting them. */
const CLOSE_GRACE_MS = 2000;

const keyOf = (p: Pick<PusherRow, "userId" | "appId" | "pushkey">) => `${p.userId}\u0000${p.appId}\u0000${p.pushkey}`;

class PusherQueue extends RetryingLoop {
  private dirty = false;
  private badgeDirty = false;
  private backoffMs = 0;
  private lastBadge: number | undefined;

  constructor(private readonly pool: PusherPool, public row: PusherRow) {
    super();
  }

  poke(): void {
    this.dirty = true;
    this.kick();
  }

  pokeBadge(): void {
    this.badgeDirty = true;
    this.kick();
  }

  protected hasWork(): boolean {
    return this.dirty || this.badgeDirty;
  }

  protected failed(err: unknown): void {
    this.pool.s.log.warn({ err, pusher: this.row.appId }, "push queue error");
  }

  protected async run(): Promise<void> {
    while (!this.stopped && !this.backingOff && this.hasWork()) {
      if (this.dirty) {
        this.dirty = false;
        await this.drain();
      } else {
        this.badgeDirty = false;
        await this.sendBadge();
      }
    }
  }

  private async drain(): Promise<void> {
    const s = this.pool.s;
    for (;;) {
      const list = await s.push.notifications.list(this.row.userId, { after: this.row.lastStreamOrdering, limit: BATCH });
      if (list.length === 0) return;
      for (const n of list) {
        if (this.stopped) return;
        const outcome = await this.sendOne(n);
        if (outcome === "retry") {
          this.dirty = true;
          if (this.stopped) return;
          this.backoffMs = Math.min(Math.max(INITIAL_BACKOFF_MS, this.backoffMs * 2), MAX_BACKOFF_MS);
          this.retryAfter(this.backoffMs);
          return;
        }
        if (outcome === "gone") return this.pool.removed(this.row.userId, this.row.appId, this.row.pushkey);
        this.backoffMs = 0;
        this.row.lastStreamOrdering = n.streamOrdering;
        this.row.failingSince = null;
        if (!(await s.push.pushers.store.advance(this.row, n.streamOrdering, this.pool.fence))) return this.pool.removed(this.row.userId, this.row.appId, this.row.pushkey);
      }
    }
  }

  /** Sends one notification: "sent" (or skipped), "retry" later, or "gone" (the pushkey was rejected). */
  private async sendOne(n: NotificationRow): Promise<"sent" | "retry" | "gone"> {
    const s = this.pool.s;
    const read = (await s.push.notifications.readUpTo(this.row.userId, [n.roomId])).get(n.roomId);
    if (Math.max(read?.get("") ?? 0, read?.get(n.threadId) ?? 0) >= n.streamOrdering) return "sent";
    const event = await s.rooms.events.get(n.eventId);
    if (!event) return "sent";
    const badge = await badgeCount(s, this.row.userId);
    const body = await notifyBody(s, this.row, n, event, badge);
    const result = await postToGateway(this.pool.agent(), String(this.row.data.url), body, this.abort.signal);
    if (result.ok) {
      this.lastBadge = badge;
      if (result.rejected.includes(this.row.pushkey)) {
        s.log.info({ appId: this.row.appId, userId: this.row.userId }, "pushkey rejected by the push gateway: pusher removed");
        await s.push.pushers.store.delete(this.row.userId, this.row.appId, this.row.pushkey);
        return "gone";
      }
      return "sent";
    }
    if (this.stopped) return "retry";
    const now = s.clock.now();
    if (this.row.failingSince === null) {
      this.row.failingSince = now;
      await s.push.pushers.store.setFailingSince(this.row, now);
    }
    s.log.warn({ appId: this.row.appId, userId: this.row.userId, reason: result.reason }, "push gateway request failed");
    return now - this.row.failingSince > GIVE_UP_AFTER_MS ? "sent" : "retry";
  }

  private async sendBadge(): Promise<void> {
    const s = this.pool.s;
    const badge = await badgeCount(s, this.row.userId);
    if (badge === this.lastBadge) return;
    const result = await postToGateway(this.pool.agent(), String(this.row.data.url), badgeBody(this.row, badge), this.abort.signal);
    if (result.ok) this.lastBadge = badge;
  }

}

export class PusherPool {
  private readonly queues = new Map<string, PusherQueue>();
  private readonly byUser = new Map<string, Set<PusherQueue>>();
  private dispatcher: Agent | undefined;
  private started = false;
  /** The pushers' lease check (cluster/leases.ts) when several instances may run them; else undefined. */
  fence: Fence | undefined;
  readonly policy: OutboundIpPolicy;

  constructor(readonly s: Services, readonly store: PusherStore) {
    this.policy = new OutboundIpPolicy({ blacklist: s.config.ip_range_blacklist, whitelist: s.config.ip_range_whitelist });
  }

  agent(): Agent {
    return (this.dispatcher ??= outboundAgent(this.policy));
  }

  /**
   * Starts a queue for every http pusher, each catching up from its stored position (positions advance
   * under `fence` when the pushers run under a lease).
   */
  async start(fence?: Fence): Promise<void> {
    if (!this.s.config.push.enabled) return;
    this.fence = fence;
    this.started = true;
    for (const p of await this.store.all()) this.upserted(p);
  }

  upserted(row: PusherRow): void {
    if (!this.started || row.kind !== "http") return;
    const key = keyOf(row);
    const existing = this.queues.get(key);
    if (existing) {
      existing.row = { ...row, lastStreamOrdering: existing.row.lastStreamOrdering };
      return;
    }
    const q = new PusherQueue(this, row);
    this.queues.set(key, q);
    let set = this.byUser.get(row.userId);
    if (!set) this.byUser.set(row.userId, (set = new Set()));
    set.add(q);
    q.poke();
  }

  removed(userId: string, appId: string, pushkey: string): void {
    const key = keyOf({ userId, appId, pushkey });
    const q = this.queues.get(key);
    if (!q) return;
    this.queues.delete(key);
    this.byUser.get(userId)?.delete(q);
    if (this.byUser.get(userId)?.size === 0) this.byUser.delete(userId);
    void q.stop(0);
  }

  /** Wakes the queues of the users `notified` says were notified (called when a commit settles). */
  wake(notified: (userId: string) => boolean): void {
    for (const [userId, queues] of this.byUser) if (notified(userId)) for (const q of queues) q.poke();
  }

  /** The user read something: their badge may have changed. */
  badge(userId: string): void {
    for (const q of this.byUser.get(userId) ?? []) q.pokeBadge();
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.stop(CLOSE_GRACE_MS)));
    this.queues.clear();
    this.byUser.clear();
    this.started = false;
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined; // a later start (the pushers' lease taken again) makes a new one
    await dispatcher?.close().catch(() => {});
  }
}
