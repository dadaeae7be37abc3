import { tryParseServerName } from "../../domain/ids.js";
import { isDown, retryAt, upState } from "./backoff.js";
import { DestinationQueue, CATCH_UP_KEEP_PER_ROOM } from "./destination-queue.js";
import { SenderStore } from "./store.js";
import { aclOfState, serverAllowedByAcl } from "../../domain/federation/server-acl.js";
import { joinedServersOfState, withPartialStateServers } from "../../domain/federation/room-servers.js";
/** How often destinations that are down have their queues trimmed (bounded storage in long outages). */
const TRIM_INTERVAL_MS = 10 * 60_000;
export class FederationSender {
    s;
    store;
    queues = new Map();
    abort = new AbortController();
    stopping = false;
    trimTimer;
    txnBase = Date.now();
    txnSeq = 0;
    constructor(s) {
        this.s = s;
        this.store = new SenderStore(s.storage.sql);
    }
    get stopped() {
        return this.stopping;
    }
    /** Wakes every destination with PDUs still queued (after a restart), and starts the periodic trim. */
    async start() {
        this.trimTimer = setInterval(() => void this.trimDown(), TRIM_INTERVAL_MS);
        this.trimTimer.unref();
        // Destinations backing off are known in memory from the start (remoteIsUp reads no rows).
        for (const row of await this.store.downDestinations())
            this.queue(row.destination)?.prime(row);
        this.wake(await this.store.destinationsWithQueue());
    }
    async stop() {
        this.stopping = true;
        if (this.trimTimer)
            clearInterval(this.trimTimer);
        this.abort.abort();
        await Promise.all([...this.queues.values()].map((q) => q.idle()));
    }
    /** Whether anything is ever sent to `destination` (sending on, not us, a server name). */
    sends(destination) {
        return this.s.config.send_federation && destination !== this.s.config.server_name && tryParseServerName(destination) !== undefined;
    }
    queue(destination) {
        if (!this.sends(destination))
            return undefined;
        let q = this.queues.get(destination);
        if (!q) {
            const self = this;
            q = new DestinationQueue({
                s: this.s,
                store: this.store,
                signal: this.abort.signal,
                nextTxnId: () => `${self.txnBase}_${++self.txnSeq}`,
                get stopped() {
                    return self.stopping;
                },
            }, destination);
            this.queues.set(destination, q);
        }
        return q;
    }
    /** PDUs were queued for these destinations (or they may be back): send. */
    wake(destinations) {
        if (this.stopping)
            return;
        for (const d of destinations)
            this.queue(d)?.wake();
    }
    /**
     * Sends a member event a remote server completed through us (send_join / send_leave) to the other
     * servers in the room, on that server's behalf, as the resident server does (spec "Joining Rooms": "the
     * membership event sent to other servers by the resident server"; Synapse's send_on_behalf_of): the
     * event's own server is left out, as are we. Queued durably like our own events.
     */
    async sendOnBehalfOf(origin, event) {
        if (!this.s.config.send_federation || this.stopping || event.stateGroup === null)
            return;
        const state = (await this.s.rooms.stateGroups.getMany([event.stateGroup])).get(event.stateGroup);
        if (!state)
            return;
        const acl = await aclOfState(this.s, state);
        const destinations = (await withPartialStateServers(this.s, event.roomId, await joinedServersOfState(this.s, event.roomId, state))).filter((d) => d !== origin && d !== this.s.config.server_name && (!acl || serverAllowedByAcl(acl, d)));
        if (destinations.length === 0)
            return;
        const rows = destinations.map((destination) => ({ destination, streamOrdering: event.streamOrdering, roomId: event.roomId, eventId: event.eventId }));
        await this.s.storage.sql.transaction((tx) => this.store.enqueue(tx, rows));
        this.wake(destinations);
    }
    withEdus(destinations, add) {
        if (this.stopping)
            return;
        for (const d of destinations) {
            const q = this.queue(d);
            if (!q)
                continue;
            add(q);
            q.wake();
        }
    }
    sendTyping(destinations, roomId, userId, typing) {
        this.withEdus(destinations, (q) => q.edus.addTyping(roomId, userId, typing));
    }
    sendReceipts(destinations, receipts) {
        this.withEdus(destinations, (q) => receipts.forEach((r) => q.edus.addReceipt(r)));
    }
    sendPresence(destinations, updates) {
        this.withEdus(destinations, (q) => updates.forEach((p) => q.edus.addPresence(p)));
    }
    /** Any other EDU, as given, held in memory (lost on a restart). */
    sendEdu(destinations, edu) {
        this.withEdus(destinations, (q) => q.edus.addOther(edu));
    }
    /**
     * Queues an EDU that must arrive (device list and signing key updates, to-device messages) in the
     * producer's transaction `tx`: kept in storage until each destination acknowledged it, across
     * restarts and outages. Returns the destinations to `wake` once `tx` committed.
     */
    async queueDurableEdu(tx, destinations, edu) {
        const targets = [...new Set(destinations)].filter((d) => this.sends(d));
        if (targets.length > 0)
            await this.store.enqueueEdu(tx, targets, edu, this.s.clock.now());
        return targets;
    }
    /** queueDurableEdu in a transaction of its own, then sends. */
    async sendDurableEdu(destinations, edu) {
        const targets = await this.s.storage.sql.transaction((tx) => this.queueDurableEdu(tx, destinations, edu));
        this.wake(targets);
    }
    /**
     * A signed request from `origin` arrived: if we had it marked down, it is up — reset its backoff and
     * send what waits (Synapse does the same). Cheap when it was not down.
     */
    remoteIsUp(origin) {
        if (this.stopping)
            return;
        const q = this.queues.get(origin);
        if (!q?.current || !isDown(q.current))
            return;
        q.markUp().catch((err) => this.s.log.warn({ err, origin }, "could not reset a destination's backoff"));
    }
    /** Trims the queues of destinations that are down to their newest PDUs per room. */
    async trimDown() {
        const down = [...this.queues.values()].filter((q) => q.current && isDown(q.current)).map((q) => q.destination);
        try {
            const dropped = await this.store.trim(CATCH_UP_KEEP_PER_ROOM, down);
            if (dropped > 0)
                this.s.log.info({ dropped, destinations: down.length }, "federation queues of unreachable destinations trimmed");
        }
        catch (err) {
            this.s.log.warn({ err }, "trimming federation queues failed");
        }
    }
    /** One destination's state: backoff (persisted), PDUs queued, EDUs pending, next attempt. */
    async describe(destination) {
        const row = (await this.store.getDestination(destination)) ?? this.queues.get(destination)?.current;
        const queued = (await this.store.queueSizes([destination])).get(destination) ?? 0;
        const durableEdus = (await this.store.eduQueueSizes([destination])).get(destination) ?? 0;
        if (!row && queued === 0 && durableEdus === 0 && !this.queues.has(destination))
            return undefined;
        const st = this.stateOf(row ?? upState(destination), queued);
        return { ...st, pendingEdus: st.pendingEdus + durableEdus };
    }
    /** The state of several destinations as stored (admin listing). */
    async describeMany(rows) {
        const sizes = await this.store.queueSizes(rows.map((r) => r.destination));
        return rows.map((r) => this.stateOf(r, sizes.get(r.destination) ?? 0));
    }
    /** The state with the EDUs held in memory (describe and queueStates add the durable ones). */
    stateOf(row, queued) {
        return { ...row, down: isDown(row), nextAttemptTs: retryAt(row), queuedPdus: queued, pendingEdus: this.queues.get(row.destination)?.edus.size ?? 0 };
    }
    /** Every destination this process has a queue for (all with PDUs queued, from start): metrics. */
    async queueStates() {
        const queues = [...this.queues.values()];
        const names = queues.map((q) => q.destination);
        const [sizes, durable] = await Promise.all([this.store.queueSizes(names), this.store.eduQueueSizes(names)]);
        return queues.map((q) => {
            const st = this.stateOf(q.current ?? upState(q.destination), sizes.get(q.destination) ?? 0);
            return { ...st, pendingEdus: st.pendingEdus + (durable.get(q.destination) ?? 0), transactionsSent: q.sent };
        });
    }
    /** Transactions sent to `destination` since start (tests and metrics). */
    transactionsSent(destination) {
        return this.queues.get(destination)?.sent ?? 0;
    }
}
/** The sender runs with the server (declared in src/main.ts): started at boot, stopped before storage closes. */
export const federationSending = (s) => {
    s.federationSender.start().catch((err) => s.log.error({ err }, "the federation sender could not start"));
    return () => s.federationSender.stop();
};
