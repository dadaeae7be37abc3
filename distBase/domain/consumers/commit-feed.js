import { inTimeline } from "../store/events.js";
export class CommitFeed {
    s;
    listeners;
    constructor(s, listeners) {
        this.s = s;
        this.listeners = listeners;
    }
    /** Runs every listener on a commit (the writer calls this at the settle of its transaction). */
    publish(c) {
        for (const listen of this.listeners) {
            try {
                listen(this.s, c);
            }
            catch (err) {
                this.s.log.error({ err, roomId: c.notice.roomId, position: c.notice.position }, "a commit listener failed");
            }
        }
    }
    /** A notice from another writer: loads its events, then publishes it without a snapshot. */
    async receive(notice) {
        const found = await this.s.rooms.events.getMany(notice.eventIds);
        const events = notice.eventIds.map((id) => found.get(id)).filter((e) => e !== undefined);
        this.publish({ notice, events });
    }
}
/** The room cache and event cache follow commits: the writer's snapshot, or (another writer) a reload. */
export const updateRoomCaches = (s, c) => {
    if (c.snapshot)
        s.rooms.cache.set(c.notice.roomId, c.snapshot);
    else
        s.rooms.cache.delete(c.notice.roomId);
    for (const e of c.events)
        s.rooms.events.remember(e);
};
/**
 * Waiting readers hear of the commit's timeline events (positions only; they read the events themselves),
 * and the targets of out-of-band memberships of theirs. Backfilled history (negative positions, below
 * every token) is not news.
 */
export const notifyReaders = (s, c) => {
    for (const e of c.events) {
        if (!inTimeline(e) || e.streamOrdering < 0)
            continue;
        s.rooms.notifier.newEvent({ roomId: e.roomId, eventId: e.eventId, streamOrdering: e.streamOrdering, type: e.pdu.type, stateKey: e.pdu.state_key, sender: e.pdu.sender });
    }
    const members = c.notice.outOfBandMembers;
    if (members && members.length > 0)
        s.rooms.notifier.notify({ stream: "events", position: c.notice.position, userIds: members });
};
