import { appendEvent } from "./append.js";
import { currentStateEvent } from "./room-cache.js";
import { leaveRoom, memberContentFor } from "./membership.js";
export async function updateMemberEvents(s, change) {
    for (const roomId of await s.rooms.store.roomsOfUser(change.userId, "join")) {
        try {
            await appendEvent(s, roomId, async (room) => {
                const current = await currentStateEvent(s, room, "m.room.member", change.userId);
                const content = { ...(current?.content ?? {}), ...(await memberContentFor(s, change.userId, "join")) };
                if (!change.profile.displayname)
                    delete content.displayname;
                if (!change.profile.avatar_url)
                    delete content.avatar_url;
                delete content.reason;
                return { type: "m.room.member", stateKey: change.userId, sender: change.userId, content };
            });
        }
        catch (err) {
            s.log.warn({ err, roomId, userId: change.userId }, "could not update the member event after a profile change");
        }
    }
}
export async function leaveAllRooms(s, userId) {
    const requester = { userId, deviceId: null, isGuest: false, isAdmin: false, accessTokenId: null };
    for (const membership of ["join", "invite", "knock"]) {
        for (const roomId of await s.rooms.store.roomsOfUser(userId, membership)) {
            try {
                await leaveRoom(s, requester, roomId);
            }
            catch (err) {
                s.log.warn({ err, roomId, userId }, "could not leave a room on deactivation");
            }
        }
    }
}
