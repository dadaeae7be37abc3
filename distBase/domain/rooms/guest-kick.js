import { inTimeline } from "../store/events.js";
import { currentStateEvent, loadRoom } from "./room-cache.js";
import { leaveRoom } from "./membership.js";
export const kickGuestsOnRevocation = (s, c) => {
    if (!c.snapshot)
        return; // another process wrote it: that process acts
    const revoked = c.events.some((e) => inTimeline(e) && e.pdu.type === "m.room.guest_access" && e.pdu.state_key === "" && e.pdu.content.guest_access !== "can_join");
    if (!revoked)
        return;
    kickGuests(s, c.notice.roomId).catch((err) => s.log.warn({ err, roomId: c.notice.roomId }, "could not make guests leave after guest access was revoked"));
};
async function kickGuests(s, roomId) {
    const room = await loadRoom(s, roomId);
    if (!room || (await currentStateEvent(s, room, "m.room.guest_access"))?.content.guest_access === "can_join")
        return;
    const local = `:${s.config.server_name}`;
    const members = (await s.rooms.store.membersOf(roomId)).filter((m) => (m.membership === "join" || m.membership === "invite") && m.userId.endsWith(local));
    for (const m of members) {
        const user = await s.users.get(m.userId);
        if (!user?.isGuest)
            continue;
        await leaveRoom(s, { userId: m.userId, deviceId: null, isGuest: true, isAdmin: false, accessTokenId: null }, roomId);
    }
}
