// A user's server notices room (Synapse's ServerNoticesManager): made by the system user on the first
// notice — private_chat, users_default -10 so the user cannot send in it, named and described as
// configured, never encrypted by default, tagged m.server_notice for the user — and found again for every
// later one: the room the system user is joined to where the user is invited, joined, or left (a user
// who left is invited back to the same room, so notices never spawn new rooms). A reused room follows the
// configuration: the system user's display name and avatar, the room's name, avatar and topic.
import type { Services } from "../services.ts";
import type { ServerNoticesSection } from "../../config/server-notices.ts";
import { actingAs } from "../admin/join.ts";
import { createRoom } from "../rooms/create-room.ts";
import { inviteUser, joinRoom } from "../rooms/membership.ts";
import { sendStateEvent } from "../rooms/send.ts";
import { currentStateEvent, loadRoom } from "../rooms/room-cache.ts";
import { setTag } from "../account-data/account-data.ts";
import { RoomBatchReads } from "../store/rooms.ts";

export const SERVER_NOTICE_TAG = "m.server_notice";

/** The system user's join content: its configured display name and avatar. */
function systemMemberContent(c: ServerNoticesSection): Record<string, unknown> {
  const content: Record<string, unknown> = { membership: "join" };
  if (c.system_mxid_display_name !== undefined) content.displayname = c.system_mxid_display_name;
  if (c.system_mxid_avatar_url !== undefined) content.avatar_url = c.system_mxid_avatar_url;
  return content;
}

/** The user's notice room if there is one: joined or invited first, then one they left. */
async function existingRoom(s: Services, c: ServerNoticesSection, userId: string): Promise<string | undefined> {
  const mine: string[] = [];
  for (const m of ["join", "invite", "leave"]) mine.push(...(await s.rooms.store.roomsOfUser(userId, m)));
  if (mine.length === 0) return undefined;
  const system = new Set((await new RoomBatchReads(s.storage.sql).roomsWithMembership(c.system_mxid, mine)).filter((r) => r.membership === "join").map((r) => r.roomId));
  return mine.find((id) => system.has(id));
}

/** Brings a reused room in line with the configuration (Synapse's _update_notice_user_profile_if_changed, _update_room_info). */
async function refresh(s: Services, c: ServerNoticesSection, roomId: string): Promise<void> {
  const system = actingAs(c.system_mxid, true);
  const room = await loadRoom(s, roomId);
  if (!room) return;
  const member = (await currentStateEvent(s, room, "m.room.member", c.system_mxid))?.content ?? {};
  if (member.displayname !== c.system_mxid_display_name || member.avatar_url !== c.system_mxid_avatar_url) {
    const { membership: _m, ...profile } = systemMemberContent(c);
    await joinRoom(s, system, roomId, {}, profile);
  }
  for (const [type, key, want] of [["m.room.name", "name", c.room_name], ["m.room.avatar", "url", c.room_avatar_url], ["m.room.topic", "topic", c.room_topic]] as const) {
    const have = (await currentStateEvent(s, room, type))?.content[key];
    if (have === want || (!have && !want)) continue;
    await sendStateEvent(s, system, roomId, type, "", { [key]: want ?? "" });
  }
}

async function createNoticeRoom(s: Services, c: ServerNoticesSection, userId: string): Promise<string> {
  const { room_id: roomId } = await createRoom(
    s,
    actingAs(c.system_mxid, true),
    {
      preset: "private_chat",
      power_level_content_override: { users_default: -10 },
      ...(c.room_name ? { name: c.room_name } : {}),
      ...(c.room_topic ? { topic: c.room_topic } : {}),
      ...(c.room_avatar_url ? { initial_state: [{ type: "m.room.avatar", state_key: "", content: { url: c.room_avatar_url } }] } : {}),
    },
    { creatorMemberContent: systemMemberContent(c), withoutExtensionState: true },
  );
  await setTag(s, actingAs(userId), userId, roomId, SERVER_NOTICE_TAG, {});
  s.log.info({ userId, roomId }, "created a server notices room");
  return roomId;
}

/**
 * The user's notice room, made if there is none, with the user invited to it unless they are in it or
 * invited already (joined too, with auto_join). One at a time per user, so one room is ever made.
 */
export async function noticeRoomFor(s: Services, c: ServerNoticesSection, userId: string): Promise<string> {
  return s.rooms.lanes.run(`server-notices ${userId}`, async () => {
    let roomId = await existingRoom(s, c, userId);
    if (roomId) await refresh(s, c, roomId);
    else roomId = await createNoticeRoom(s, c, userId);
    const membership = (await s.rooms.store.membership(roomId, userId))?.membership;
    if (membership !== "join" && membership !== "invite") {
      await inviteUser(s, actingAs(c.system_mxid, true), roomId, { user_id: userId });
      if (c.auto_join) await joinRoom(s, actingAs(userId), roomId);
    }
    return roomId;
  });
}
