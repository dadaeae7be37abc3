import { OutboundIpPolicy } from "../../net/ip-ranges.js";
import { outboundAgent } from "../../net/outbound-agent.js";
import { postToGateway } from "./client.js";
import { RetryingLoop } from "../../net/retrying-loop.js";
import { badgeBody, badgeCount, notifyBody } from "./notify-body.js";
const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60 * 60 * 1000;
const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
const BATCH = 20;
/** How long shutdown lets requests in flight finish before aborting them. */
const CLOSE_GRACE_MS = 2000;
const keyOf = (p) => `${p.userId}\u0000${p.appId}\u0000${p.pushkey}`;
class PusherQueue extends RetryingLoop {
    pool;
    row;
    dirty = false;
    badgeDirty = false;
    backoffMs = 0;
    lastBadge;
    constructor(pool, row) {
        super();
        this.pool = pool;
        this.row = row;
    }
    poke() {
        this.dirty = true;
        this.kick();
    }
    pokeBadge() {
        this.badgeDirty = true;
        this.kick();
    }
    hasWork() {
        return this.dirty || this.badgeDirty;
    }
    failed(err) {
        this.pool.s.log.warn({ err, pusher: this.row.appId }, "push queue error");
    }
    async run() {
        while (!this.stopped && !this.backingOff && this.hasWork()) {
            if (this.dirty) {
                this.dirty = false;
                await this.drain();
            }
            else {
                this.badgeDirty = false;
                await this.sendBadge();
            }
        }
    }
    async drain() {
        const s = this.pool.s;
        for (;;) {
            const list = await s.push.notifications.list(this.row.userId, { after: this.row.lastStreamOrdering, limit: BATCH });
            if (list.length === 0)
                return;
            for (const n of list) {
                if (this.stopped)
                    return;
                const outcome = await this.sendOne(n);
                if (outcome === "retry") {
                    this.dirty = true;
                    if (this.stopped)
                        return;
                    this.backoffMs = Math.min(Math.max(INITIAL_BACKOFF_MS, this.backoffMs * 2), MAX_BACKOFF_MS);
                    this.retryAfter(this.backoffMs);
                    return;
                }
                if (outcome === "gone")
                    return this.pool.removed(this.row.userId, this.row.appId, this.row.pushkey);
                this.backoffMs = 0;
                this.row.lastStreamOrdering = n.streamOrdering;
                this.row.failingSince = null;
                if (!(await s.push.pushers.store.advance(this.row, n.streamOrdering)))
                    return this.pool.removed(this.row.userId, this.row.appId, this.row.pushkey);
            }
        }
    }
    /** Sends one notification: "sent" (or skipped), "retry" later, or "gone" (the pushkey was rejected). */
    async sendOne(n) {
        const s = this.pool.s;
        const read = (await s.push.notifications.readUpTo(this.row.userId, [n.roomId])).get(n.roomId);
        if (Math.max(read?.get("") ?? 0, read?.get(n.threadId) ?? 0) >= n.streamOrdering)
            return "sent";
        const event = await s.rooms.events.get(n.eventId);
        if (!event)
            return "sent";
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
        if (this.stopped)
            return "retry";
        const now = s.clock.now();
        if (this.row.failingSince === null) {
            this.row.failingSince = now;
            await s.push.pushers.store.setFailingSince(this.row, now);
        }
        s.log.warn({ appId: this.row.appId, userId: this.row.userId, reason: result.reason }, "push gateway request failed");
        return now - this.row.failingSince > GIVE_UP_AFTER_MS ? "sent" : "retry";
    }
    async sendBadge() {
        const s = this.pool.s;
        const badge = await badgeCount(s, this.row.userId);
        if (badge === this.lastBadge)
            return;
        const result = await postToGateway(this.pool.agent(), String(this.row.data.url), badgeBody(this.row, badge), this.abort.signal);
        if (result.ok)
            this.lastBadge = badge;
    }
}
export class PusherPool {
    s;
    store;
    queues = new Map();
    byUser = new Map();
    dispatcher;
    started = false;
    policy;
    constructor(s, store) {
        this.s = s;
        this.store = store;
        this.policy = new OutboundIpPolicy({ blacklist: s.config.ip_range_blacklist, whitelist: s.config.ip_range_whitelist });
    }
    agent() {
        return (this.dispatcher ??= outboundAgent(this.policy));
    }
    /** Starts a queue for every http pusher, each catching up from its stored position. */
    async start() {
        if (!this.s.config.push.enabled)
            return;
        this.started = true;
        for (const p of await this.store.all())
            this.upserted(p);
    }
    upserted(row) {
        if (!this.started || row.kind !== "http")
            return;
        const key = keyOf(row);
        const existing = this.queues.get(key);
        if (existing) {
            existing.row = { ...row, lastStreamOrdering: existing.row.lastStreamOrdering };
            return;
        }
        const q = new PusherQueue(this, row);
        this.queues.set(key, q);
        let set = this.byUser.get(row.userId);
        if (!set)
            this.byUser.set(row.userId, (set = new Set()));
        set.add(q);
        q.poke();
    }
    removed(userId, appId, pushkey) {
        const key = keyOf({ userId, appId, pushkey });
        const q = this.queues.get(key);
        if (!q)
            return;
        this.queues.delete(key);
        this.byUser.get(userId)?.delete(q);
        if (this.byUser.get(userId)?.size === 0)
            this.byUser.delete(userId);
        void q.stop(0);
    }
    /** Wakes the queues of the users `notified` says were notified (called when a commit settles). */
    wake(notified) {
        for (const [userId, queues] of this.byUser)
            if (notified(userId))
                for (const q of queues)
                    q.poke();
    }
    /** The user read something: their badge may have changed. */
    badge(userId) {
        for (const q of this.byUser.get(userId) ?? [])
            q.pokeBadge();
    }
    async close() {
        await Promise.all([...this.queues.values()].map((q) => q.stop(CLOSE_GRACE_MS)));
        this.queues.clear();
        this.byUser.clear();
        await this.dispatcher?.close().catch(() => { });
    }
}
