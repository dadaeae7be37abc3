import { requireJoined } from "./set-typing.js";
export class LiveTyping {
    s;
    r;
    roomId;
    last;
    constructor(s, r, roomId) {
        this.s = s;
        this.r = r;
        this.roomId = roomId;
    }
    /** Starts reading (M_FORBIDDEN unless `r` is joined to the room). */
    static async start(s, r, roomId) {
        await requireJoined(s, r.userId, roomId);
        return new LiveTyping(s, r, roomId);
    }
    /** Whether a stream notice may change this room's typing list. */
    concerns(n) {
        return n.stream === "typing" && (n.roomIds?.includes(this.roomId) ?? false);
    }
    /** The typing users if the list changed since the last call (the first call always answers); none once the reader left. */
    async next() {
        const member = await this.s.rooms.store.membership(this.roomId, this.r.userId);
        if (member?.membership !== "join")
            return undefined;
        const userIds = this.s.typing.typingIn(this.roomId);
        const key = JSON.stringify(userIds);
        if (key === this.last)
            return undefined;
        this.last = key;
        return userIds;
    }
}
