import { tryParseRoomId } from "../../ids.js";
import { remoteServersInRoom, serverOfUser } from "../room-servers.js";
import { serverAllowedInState } from "../server-acl.js";
import { loadRoom } from "../../rooms/room-cache.js";
/** How long a remote user's typing lasts without news from their server (Synapse's FEDERATION_TIMEOUT). */
export const REMOTE_TYPING_TIMEOUT_MS = 60_000;
/** A local user still typing is re-announced this often (Synapse's FEDERATION_PING_INTERVAL). */
export const FEDERATION_PING_INTERVAL_MS = 40_000;
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
/** Local typing changes to the remote servers of the room (declared in src/main.ts, `background`). */
export const typingToFederation = (s) => {
    // The latest state per room and user: an announcement sends the state current when its servers are known.
    const latest = new Map();
    const lastPing = new Map();
    const announce = (roomId, userId) => {
        const key = `${roomId}\u0000${userId}`;
        remoteServersInRoom(s, roomId)
            .then((destinations) => {
            const typing = latest.get(key);
            if (typing === undefined)
                return;
            if (!typing)
                latest.delete(key);
            if (destinations.length > 0)
                s.federationSender.sendTyping(destinations, roomId, userId, typing);
        })
            .catch((err) => s.log.warn({ err, roomId }, "could not send a typing notification over federation"));
    };
    const local = (userId) => serverOfUser(userId) === s.config.server_name;
    s.typing.onChange(({ roomId, userId, typing }) => {
        if (!local(userId))
            return;
        const key = `${roomId}\u0000${userId}`;
        latest.set(key, typing);
        if (typing)
            lastPing.set(key, s.clock.now());
        else
            lastPing.delete(key);
        announce(roomId, userId);
    });
    s.typing.onRenew((roomId, userId) => {
        if (!local(userId))
            return;
        const key = `${roomId}\u0000${userId}`;
        const now = s.clock.now();
        if (now - (lastPing.get(key) ?? 0) < FEDERATION_PING_INTERVAL_MS)
            return;
        lastPing.set(key, now);
        latest.set(key, true);
        announce(roomId, userId);
    });
    return () => { };
};
/** Inbound m.typing (declared in src/main.ts, `eduHandlers`). */
export const typingEduHandler = {
    type: "m.typing",
    async handle(s, origin, content) {
        if (!isObject(content))
            return;
        const { room_id: roomId, user_id: userId, typing } = content;
        if (typeof roomId !== "string" || !tryParseRoomId(roomId) || typeof userId !== "string" || typeof typing !== "boolean") {
            s.log.debug({ origin }, "malformed m.typing EDU dropped");
            return;
        }
        if (serverOfUser(userId) !== origin) {
            s.log.info({ origin, userId }, "m.typing EDU for a user of another server dropped");
            return;
        }
        if ((await s.rooms.store.membership(roomId, userId))?.membership !== "join")
            return;
        const room = await loadRoom(s, roomId);
        if (room && !(await serverAllowedInState(s, room.state, origin)))
            return; // the room's ACL denies the server
        if (typing)
            s.typing.start(roomId, userId, REMOTE_TYPING_TIMEOUT_MS);
        else
            s.typing.stop(roomId, userId);
    },
};
