import { AuthContext, stateMapKey, userPowerLevel } from "../auth/index.js";
import { parsePowerLevel } from "../auth/power-levels.js";
import { isPlainObject } from "../events/types.js";
import { stateKeyOf } from "../store/state-groups.js";
export class RoomPushState {
    local;
    remoteJoined;
    powerLevels;
    room;
    constructor(
    /** Local joined members → display name in the room. */
    local, 
    /** Remote joined members (only to keep the joined member count right as they come and go). */
    remoteJoined, powerLevels, room) {
        this.local = local;
        this.remoteJoined = remoteJoined;
        this.powerLevels = powerLevels;
        this.room = room;
    }
    levels;
    /** Joined members, local and remote (room_member_count). */
    get joinedCount() {
        return this.local.size + this.remoteJoined.size;
    }
    clone() {
        return new RoomPushState(new Map(this.local), new Set(this.remoteJoined), this.powerLevels, this.room);
    }
    /** Power: the user's level and the level a `notifications` key requires (default 50). */
    power() {
        if (this.levels)
            return this.levels;
        const state = new Map([[stateMapKey("m.room.create", ""), this.room.createEvent]]);
        if (this.powerLevels)
            state.set(stateMapKey("m.room.power_levels", ""), this.powerLevels);
        const ctx = new AuthContext(this.room.createEvent, state, this.room.version, { createEvent: this.room.createEvent });
        const notifications = this.powerLevels?.content.notifications;
        const version = this.room.version;
        const users = new Map();
        return (this.levels = {
            user: (u) => {
                let n = users.get(u);
                if (n === undefined)
                    users.set(u, (n = userPowerLevel(ctx, u)));
                return n;
            },
            notification: (key) => (isPlainObject(notifications) && Object.hasOwn(notifications, key) ? (parsePowerLevel(notifications[key], version) ?? 50) : 50),
        });
    }
    /** Moves the state past one event of the room (member and power level events change it). */
    apply(e, isLocal) {
        if (e.state_key === undefined)
            return {};
        if (e.type === "m.room.power_levels" && e.state_key === "") {
            this.powerLevels = e;
            this.levels = undefined;
            return {};
        }
        if (e.type !== "m.room.member")
            return {};
        const user = e.state_key;
        const c = e.content;
        const wasJoined = this.local.has(user) || this.remoteJoined.has(user);
        const nowJoined = c.membership === "join";
        if (isLocal(user)) {
            if (nowJoined)
                this.local.set(user, typeof c.displayname === "string" ? c.displayname : undefined);
            else
                this.local.delete(user);
        }
        else if (nowJoined)
            this.remoteJoined.add(user);
        else
            this.remoteJoined.delete(user);
        if (isLocal(user) && nowJoined && !wasJoined)
            return { joined: user };
        if (isLocal(user) && wasJoined && !nowJoined)
            return { left: user };
        return {};
    }
}
/**
 * The room's state before `batch` (events being committed in `tx`): from memory, else from the
 * memberships table read in the transaction, with the rows the batch already changed taken back to the
 * member event each first replaced.
 */
export async function roomStateBefore(s, tx, room, batch) {
    const cached = s.push.rooms.get(room.roomId);
    if (cached)
        return cached;
    const rows = await tx.all(`SELECT user_id, membership, displayname FROM room_memberships WHERE room_id = ? AND membership = 'join'`, [room.roomId]);
    const joined = new Map(rows.map((r) => [r.user_id, r.displayname ?? undefined]));
    const firstChange = new Map();
    for (const e of batch)
        if (e.pdu.type === "m.room.member" && e.pdu.state_key !== undefined && !firstChange.has(e.pdu.state_key))
            firstChange.set(e.pdu.state_key, e);
    const previous = await s.rooms.events.getMany([...firstChange.values()].map((e) => e.replacesState).filter((x) => !!x));
    for (const [user, e] of firstChange) {
        joined.delete(user);
        const prev = e.replacesState ? previous.get(e.replacesState)?.pdu : undefined;
        const c = prev?.content;
        if (c?.membership === "join")
            joined.set(user, typeof c.displayname === "string" ? c.displayname : undefined);
    }
    const plId = room.state.get(stateKeyOf("m.room.power_levels", ""));
    const pl = plId ? (await s.rooms.events.get(plId))?.pdu : undefined;
    const suffix = `:${s.config.server_name}`;
    const local = new Map();
    const remote = new Set();
    for (const [u, name] of joined) {
        if (u.endsWith(suffix))
            local.set(u, name);
        else
            remote.add(u);
    }
    return new RoomPushState(local, remote, pl, room);
}
