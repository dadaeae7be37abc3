// What rooms do when an account changes (as Synapse does): a new display name or avatar is written into
// the member event of every room the user is joined to, and a deactivated user leaves every room
// (joined, invited or knocking). Declared in src/main.ts (`profileChanged`, `deactivated`).
import type { Services } from "../services.ts";
import type { ProfileChange } from "../profile/profile.ts";
import { appendEvent } from "./append.ts";
import { currentStateEvent } from "./room-cache.ts";
import { leaveRoom, memberContentFor } from "./membership.ts";
import type { EventDraft } from "./build-event.ts";

export async function updateMemberEvents(s: Services, change: ProfileChange): Promise<void> {
  for (const roomId of await s.rooms.store.roomsOfUser(change.userId, "join")) {
    try {
      await appendEvent(s, roomId, async (room): Promise<EventDraft | { alreadyDone: never }> => {
        const current = await currentStateEvent(s, room, "m.room.member", change.userId);
        const content = { ...(current?.content ?? {}), ...(await memberContentFor(s, change.userId, "join")) };
        if (!change.profile.displayname) delete content.displayname;
        if (!change.profile.avatar_url) delete content.avatar_url;
        delete content.reason;
        return { type: "m.room.member", stateKey: change.userId, sender: change.userId, content };
      });
    } catch (err) {
      s.log.warn({ err, roomId, userId: change.userId }, "could not update the member event after a profile change");
    }
  }
}

export async function leaveAllRooms(s: Services, userId: string): Promise<void> {
  const requester = { userId, deviceId: null, isGuest: false, isAdmin: false, accessTokenId: null };
  for (const membership of ["join", "invite", "knock"]) {
    for (const roomId of await s.rooms.store.roomsOfUser(userId, membership)) {
      try {
        await leaveRoom(s, requester, roomId);
      } catch (err) {
        s.log.warn({ err, roomId, userId }, "could not leave a room on deactivation");
      }
    }
  }
}
