import { requireJoined } from "../typing/set-typing.js";
export class LiveReceipts {
    s;
    r;
    roomId;
    last;
    constructor(s, r, roomId, last) {
        this.s = s;
        this.r = r;
        this.roomId = roomId;
        this.last = last;
    }
    /** Starts reading at the stream's current position (M_FORBIDDEN unless `r` is joined to the room). */
    static async start(s, r, roomId) {
        await requireJoined(s, r.userId, roomId);
        return new LiveReceipts(s, r, roomId, await s.receipts.currentPosition());
    }
    concerns(n) {
        return n.stream === "receipts" && n.position > this.last && ((n.roomIds?.includes(this.roomId) ?? false) || (n.userIds?.includes(this.r.userId) ?? false));
    }
    /** Every receipt up to where reading started. */
    backlog() {
        return this.s.receipts.inRooms([this.roomId], undefined, this.last, this.r.userId);
    }
    /** The receipts after the last read, up to `position` or further (none once the reader left). */
    async next(position) {
        if (position <= this.last)
            return [];
        const member = await this.s.rooms.store.membership(this.roomId, this.r.userId);
        const upTo = Math.max(position, await this.s.receipts.currentPosition());
        const rows = member?.membership === "join" ? await this.s.receipts.inRooms([this.roomId], this.last, upTo, this.r.userId) : [];
        this.last = upTo;
        return rows;
    }
}
