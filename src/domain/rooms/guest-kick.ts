// Guests leave a room when it stops admitting them: once an m.room.guest_access event other than
// `can_join` is committed (local or received), every local guest joined to or invited into the room
// leaves it — by their own leave event, so no power level is needed (as Synapse's kick_guest_users).
// Run by the writing process after the commit settles, in the background. Spec: Client-Server API
// "Guest access" (m.room.guest_access).
import type { Services } from "../services.ts";
import type { CommitListener } from "../consumers/commit-feed.ts";
import { inTimeline } from "../store/events.ts";
import { currentStateEvent, loadRoom } from "./room-cache.ts";
import { leaveRoom } from "./membership.ts";

export const kickGuestsOnRevocation: CommitListener = (s, c) => {
  if (!c.snapshot) return; // another process wrote it: that process acts
  const revoked = c.events.some((e) => inTimeline(e) && e.pdu.type === "m.room.guest_access" && e.pdu.state_key === "" && e.pdu.content.guest_access !== "can_join");
  if (!revoked) return;
  kickGuests(s, c.notice.roomId).catch((err: unknown) => s.log.warn({ err, roomId: c.notice.roomId }, "could not make guests leave after guest access was revoked"));
};

async function kickGuests(s: Services, roomId: string): Promise<void> {
  const room = await loadRoom(s, roomId);
  if (!room || (await currentStateEvent(s, room, "m.room.guest_access"))?.content.guest_access === "can_join") return;
  const local = `:${s.config.server_name}`;
  const members = (await s.rooms.store.membersOf(roomId)).filter((m) => (m.membership === "join" || m.membership === "invite") && m.userId.endsWith(local));
  for (const m of members) {
    const user = await s.users.get(m.userId);
    if (!user?.isGuest) continue;
    await leaveRoom(s, { userId: m.userId, deviceId: null, isGuest: true, isAdmin: false, accessTokenId: null }, roomId);
  }
}
