import { isAppServiceUser, isInNamespace } from "../accounts/appservices.js";
/** The services that receive traffic (a service whose url is null receives none). */
export function reachableServices(s) {
    return s.config.app_services.filter((as) => as.url !== null);
}
/** Interest in a set of rooms, read in two queries (aliases, joined members) for the whole set. */
export class RoomInterest {
    s;
    aliases;
    members;
    constructor(s, aliases, members) {
        this.s = s;
        this.aliases = aliases;
        this.members = members;
    }
    static async load(s, roomIds) {
        const ids = [...new Set(roomIds)];
        if (ids.length === 0)
            return new RoomInterest(s, new Map(), new Map());
        const [aliases, members] = await Promise.all([s.directory.aliasesOfRooms(ids), s.rooms.store.joinedMembersOf(ids)]);
        return new RoomInterest(s, aliases, members);
    }
    /** Whether `as` is interested in the room (its id, an alias, a joined local member). */
    interested(as, roomId) {
        if (isInNamespace(as, "rooms", roomId))
            return true;
        if ((this.aliases.get(roomId) ?? []).some((a) => isInNamespace(as, "aliases", a)))
            return true;
        return (this.members.get(roomId) ?? []).some((u) => isAppServiceUser(this.s.config, as, u));
    }
}
/** Whether `as` wants an event of a room `rooms` knows. */
export function wantsEvent(s, as, e, rooms) {
    if (isAppServiceUser(s.config, as, e.pdu.sender))
        return true;
    if (e.pdu.type === "m.room.member" && typeof e.pdu.state_key === "string" && isAppServiceUser(s.config, as, e.pdu.state_key))
        return true;
    return rooms.interested(as, e.roomId);
}
/**
 * Whether `as` may see a user's presence: the user is one of its own, or shares a room it is interested
 * in (`rooms` covers the user's joined rooms, `roomsOfUser` lists them).
 */
export function wantsPresence(s, as, userId, roomsOfUser, rooms) {
    return isAppServiceUser(s.config, as, userId) || roomsOfUser.some((roomId) => rooms.interested(as, roomId));
}
