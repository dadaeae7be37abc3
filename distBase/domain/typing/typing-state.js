// The typing stream (spec: Client-Server API "Typing Notifications"): who is typing in which room, held in
// memory with an expiry per user, and an integer stream position that moves on every change — a user
// starting, stopping, or timing out (the expiry moves the stream too, so waiting syncs hear of it).
// Single process: the state and its position live in this process and restart at 0 (a sync token from
// before a restart reads as "from scratch"). With several workers one writer would own the stream and
// bridge its positions through the notifier (PostgreSQL LISTEN/NOTIFY), as Synapse's typing writer does.
export class TypingState {
    now;
    maxRooms;
    pos = 0;
    rooms = new Map();
    listeners = [];
    /** The newest position of a room record dropped while empty: such rooms may have changed up to it. */
    droppedUpTo = 0;
    renewals = [];
    constructor(now = Date.now, 
    /** Room records kept; past it, rooms nobody types in are forgotten (caches.global_factor scales it). */
    maxRooms = 10_000) {
        this.now = now;
        this.maxRooms = maxRooms;
    }
    get position() {
        return this.pos;
    }
    /** Called after every change (start, stop, expiry) with the room and the new position. */
    onChange(fn) {
        this.listeners.push(fn);
    }
    /** Called when someone already typing says so again (no change, so the stream stays; federation re-announces). */
    onRenew(fn) {
        this.renewals.push(fn);
    }
    changed(roomId, room, userId, typing) {
        // The entry stays when it empties: its position tells incremental syncs the room's typing list emptied.
        room.position = ++this.pos;
        for (const fn of this.listeners)
            fn({ roomId, position: room.position, userId, typing });
    }
    room(roomId) {
        let r = this.rooms.get(roomId);
        if (!r) {
            if (this.rooms.size >= this.maxRooms)
                this.forgetIdleRooms();
            this.rooms.set(roomId, (r = { users: new Map(), position: 0 }));
        }
        return r;
    }
    /** Drops the records of rooms nobody is typing in, remembering the newest position dropped. */
    forgetIdleRooms() {
        for (const [id, r] of this.rooms) {
            if (r.users.size > 0)
                continue;
            this.droppedUpTo = Math.max(this.droppedUpTo, r.position);
            this.rooms.delete(id);
        }
    }
    /** Marks `userId` typing in `roomId` for `timeoutMs`. Moves the stream only if they were not typing already. */
    start(roomId, userId, timeoutMs) {
        const room = this.room(roomId);
        const prev = room.users.get(userId);
        if (prev)
            clearTimeout(prev.timer);
        const timer = setTimeout(() => this.expire(roomId, userId), timeoutMs);
        timer.unref();
        room.users.set(userId, { expires: this.now() + timeoutMs, timer });
        if (!prev)
            this.changed(roomId, room, userId, true);
        else
            for (const fn of this.renewals)
                fn(roomId, userId);
    }
    /** Marks `userId` as no longer typing; moves the stream if they were. */
    stop(roomId, userId) {
        const room = this.rooms.get(roomId);
        const prev = room?.users.get(userId);
        if (!room || !prev)
            return;
        clearTimeout(prev.timer);
        room.users.delete(userId);
        this.changed(roomId, room, userId, false);
    }
    expire(roomId, userId) {
        const room = this.rooms.get(roomId);
        if (!room?.users.has(userId))
            return;
        room.users.delete(userId);
        this.changed(roomId, room, userId, false);
    }
    /** The users typing in `roomId` now. */
    typingIn(roomId) {
        return [...(this.rooms.get(roomId)?.users.keys() ?? [])];
    }
    /** Position of the last change in `roomId` (0: never; for a forgotten record, the newest dropped). */
    roomPosition(roomId) {
        return this.rooms.get(roomId)?.position ?? this.droppedUpTo;
    }
    /** Rooms that changed after `after` (all rooms with someone typing when `after` is undefined), among `rooms`. */
    changedRooms(rooms, after) {
        const out = [];
        const scan = (roomId, r) => {
            if (after === undefined ? r.users.size > 0 : r.position > after)
                out.push(roomId);
        };
        if (rooms.size < this.rooms.size) {
            for (const id of rooms) {
                const r = this.rooms.get(id);
                if (r)
                    scan(id, r);
            }
        }
        else
            for (const [id, r] of this.rooms)
                if (rooms.has(id))
                    scan(id, r);
        // A forgotten room may have emptied after `after`: report it (an empty typing list) to be safe.
        if (after !== undefined && after < this.droppedUpTo)
            for (const id of rooms)
                if (!this.rooms.has(id))
                    out.push(id);
        return out;
    }
    /** Stops every expiry timer (shutdown). */
    close() {
        for (const r of this.rooms.values())
            for (const u of r.users.values())
                clearTimeout(u.timer);
        this.rooms.clear();
    }
}
