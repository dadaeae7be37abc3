// Typing over federation (Server-Server API "Typing Notifications", m.typing EDUs). Outbound: each change
// of a local user's typing (start, stop, time-out) goes to the remote servers in the room; a user still
// typing who says so again is re-announced every FEDERATION_PING_INTERVAL_MS so the receivers' timeout
// does not fire (Synapse's ping). Inbound: a remote server's m.typing for one of its own users who is
// joined to the room (in a room joined with partial state: a server its join named) starts (timing out after REMOTE_TYPING_TIMEOUT_MS unless renewed) or stops their
// typing in the typing stream, so local /sync and the GraphQL `typing` subscription show it.
import type { Services } from "../../services.ts";
import type { BackgroundTask } from "../../extensions.ts";
import type { EduHandler } from "../edu.ts";
import { tryParseRoomId } from "../../ids.ts";
import { remoteServersInRoom, serverOfUser } from "../room-servers.ts";
import { serverAllowedInState } from "../server-acl.ts";
import { inPartialStateRoom } from "../partial-state/flag.ts";
import { loadRoom } from "../../rooms/room-cache.ts";

/** How long a remote user's typing lasts without news from their server (Synapse's FEDERATION_TIMEOUT). */
export const REMOTE_TYPING_TIMEOUT_MS = 60_000;
/** A local user still typing is re-announced this often (Synapse's FEDERATION_PING_INTERVAL). */
export const FEDERATION_PING_INTERVAL_MS = 40_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Local typing changes to the remote servers of the room (declared in src/main.ts, `background`). */
export const typingToFederation: BackgroundTask = (s) => {
  // The latest state per room and user: an announcement sends the state current when its servers are known.
  const latest = new Map<string, boolean>();
  const lastPing = new Map<string, number>();
  const announce = (roomId: string, userId: string) => {
    const key = `${roomId}\u0000${userId}`;
    remoteServersInRoom(s, roomId)
      .then((destinations) => {
        const typing = latest.get(key);
        if (typing === undefined) return;
        if (!typing) latest.delete(key);
        if (destinations.length > 0) s.federationSender.sendTyping(destinations, roomId, userId, typing);
      })
      .catch((err: unknown) => s.log.warn({ err, roomId }, "could not send a typing notification over federation"));
  };
  const local = (userId: string) => serverOfUser(userId) === s.config.server_name;
  s.typing.onChange(({ roomId, userId, typing }) => {
    if (!local(userId)) return;
    const key = `${roomId}\u0000${userId}`;
    latest.set(key, typing);
    if (typing) lastPing.set(key, s.clock.now());
    else lastPing.delete(key);
    announce(roomId, userId);
  });
  s.typing.onRenew((roomId, userId) => {
    if (!local(userId)) return;
    const key = `${roomId}\u0000${userId}`;
    const now = s.clock.now();
    if (now - (lastPing.get(key) ?? 0) < FEDERATION_PING_INTERVAL_MS) return;
    lastPing.set(key, now);
    latest.set(key, true);
    announce(roomId, userId);
  });
  return () => {};
};

/** Inbound m.typing (declared in src/main.ts, `eduHandlers`). */
export const typingEduHandler: EduHandler = {
  type: "m.typing",
  async handle(s: Services, origin: string, content: unknown): Promise<void> {
    if (!isObject(content)) return;
    const { room_id: roomId, user_id: userId, typing } = content;
    if (typeof roomId !== "string" || !tryParseRoomId(roomId) || typeof userId !== "string" || typeof typing !== "boolean") {
      s.log.debug({ origin }, "malformed m.typing EDU dropped");
      return;
    }
    if (serverOfUser(userId) !== origin) {
      s.log.info({ origin, userId }, "m.typing EDU for a user of another server dropped");
      return;
    }
    // A joined user; in a room joined with partial state (members unknown), a user of a server in it.
    if ((await s.rooms.store.membership(roomId, userId))?.membership !== "join" && !(await inPartialStateRoom(s, roomId, origin))) return;
    const room = await loadRoom(s, roomId);
    if (room && !(await serverAllowedInState(s, room.state, origin))) return; // the room's ACL denies the server
    if (typing) s.typing.start(roomId, userId, REMOTE_TYPING_TIMEOUT_MS);
    else s.typing.stop(roomId, userId);
  },
};
