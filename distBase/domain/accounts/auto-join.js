import { createRoom } from "../rooms/create-room.js";
import { inviteUser, joinRoom } from "../rooms/membership.js";
import { makeUserId, parseRoomAlias } from "../ids.js";
const acting = (userId, isGuest = false) => ({ userId, deviceId: null, isGuest, isAdmin: false, accessTokenId: null });
async function resolveLocal(s, alias) {
    for (const resolve of s.extensions.aliasResolvers) {
        const id = await resolve(s, alias);
        if (id)
            return id;
    }
    return undefined;
}
/** The account that creates missing rooms: auto_join_mxid_localpart's (registered on first use). */
async function roomCreator(s) {
    const localpart = s.config.auto_join_mxid_localpart;
    if (localpart === undefined)
        return undefined;
    const userId = makeUserId(localpart, s.config.server_name);
    if (!(await s.users.exists(userId))) {
        await s.db.$transaction((tx) => s.users.create(tx, { userId, passwordHash: null, displayname: localpart }, s.clock.now()));
    }
    return userId;
}
async function isFirstRealUser(s) {
    const n = await s.db.user.count({ where: { isGuest: false, appserviceId: null, OR: [{ userType: null }, { userType: { not: "support" } }] } });
    return n <= 1;
}
export const autoJoinRooms = async (s, account) => {
    const c = s.config;
    if (c.auto_join_rooms.length === 0 || account.appserviceId !== undefined)
        return;
    if (account.isGuest && !c.auto_join_rooms_for_guests)
        return;
    const user = acting(account.userId, account.isGuest);
    for (const target of c.auto_join_rooms) {
        try {
            let roomId = target.startsWith("!") ? target : await resolveLocal(s, target);
            if (roomId === undefined && target.startsWith("#") && c.autocreate_auto_join_rooms && parseRoomAlias(target).serverName === c.server_name) {
                const creator = (await roomCreator(s)) ?? ((await isFirstRealUser(s)) && !account.isGuest ? account.userId : undefined);
                if (creator !== undefined) {
                    roomId = (await createRoom(s, acting(creator), {
                        preset: c.autocreate_auto_join_room_preset,
                        visibility: c.autocreate_auto_join_room_preset === "public_chat" ? "public" : "private",
                        room_alias_name: parseRoomAlias(target).localpart,
                        creation_content: c.autocreate_auto_join_rooms_federated ? {} : { "m.federate": false },
                    })).room_id;
                    if (creator !== account.userId && c.autocreate_auto_join_room_preset !== "public_chat")
                        await inviteUser(s, acting(creator), roomId, { user_id: account.userId });
                }
            }
            if (roomId === undefined && target.startsWith("#"))
                roomId = target; // another server's alias: joinRoom asks it
            if (roomId === undefined)
                continue;
            await joinRoom(s, user, roomId); // the creator is joined already: a no-op for them
        }
        catch (err) {
            s.log.warn({ err, room: target, userId: account.userId }, "could not auto-join a room");
        }
    }
};
