import { collectOnce } from "./sync.js";
import { formatSyncToken, parseSyncToken } from "./token.js";
export class LiveSync {
    s;
    r;
    filter;
    last;
    rooms = new Set();
    /** Until the first read the joined rooms are unknown: every notice counts. */
    primed = false;
    constructor(s, r, filter, since) {
        this.s = s;
        this.r = r;
        this.filter = filter;
        this.last = since !== undefined ? parseSyncToken(since) : undefined;
    }
    /** Does this notice possibly concern the reader, past what it already received? */
    concerns(n) {
        if (!this.primed)
            return true;
        if (n.kind === "event") {
            if (this.last && n.n.streamOrdering <= this.last.events)
                return false;
            return this.rooms.has(n.n.roomId) || (n.n.type === "m.room.member" && n.n.stateKey === this.r.userId);
        }
        const notice = n.n;
        if (this.last && notice.position <= this.last[notice.stream])
            return false;
        if (!notice.userIds && !notice.roomIds)
            return true;
        return (notice.userIds?.includes(this.r.userId) ?? false) || (notice.roomIds?.some((id) => this.rooms.has(id)) ?? false);
    }
    /** The delta since the last token (the initial sync the first time without one), or undefined when empty. */
    async next() {
        const initial = this.last === undefined;
        const { ctx, added } = await collectOnce(this.s, this.r, { timeoutMs: 0, fullState: false, filter: this.filter }, this.last);
        this.rooms = ctx.joinedRooms;
        this.primed = true;
        this.last = ctx.to;
        return added || initial ? { next_batch: formatSyncToken(ctx.to), ...ctx.result } : undefined;
    }
}
