// What each local member of an upgraded room takes along to the replacement room: the room in their
// m.direct lists, their tags of it, and their push rules for it (the room rule, and rules matching its
// room_id), as Synapse's copy_user_state_on_room_upgrade — when a local user upgrades the room, and when
// this server joins another server's replacement of a room it is in (with the directory listing and the
// local aliases) — and, beyond Synapse (its issue #19199), when a room is upgraded by hand: a tombstone
// (local or received) naming a replacement room this server is in, whose create event names the old
// room as its predecessor. Copying twice changes nothing (what the new room has already is kept). Best
// effort per user: one user's failure is logged, the upgrade or join stands.
// Spec: Client-Server API "Room Upgrades" (server behaviour, "other user-specific data"), "Direct
// Messaging", "Room Tagging", "Push Rules".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { isPlainObject } from "../events/types.ts";
import { writeAccountData } from "../account-data/account-data.ts";
import { getRuleset, putRule } from "../push/rules-api.ts";
import { currentStateEvent, loadRoom } from "./room-cache.ts";
import { hostInRoom } from "../federation/membership/residency.ts";
import type { CommitListener } from "../consumers/commit-feed.ts";
import { inTimeline } from "../store/events.ts";

/**
 * After this server joined `roomId` through another server: when the room's create event names a
 * predecessor this server is still in, and that room's tombstone names `roomId` (the new room's word
 * alone is not taken), its local members' state follows, its directory listing and local aliases move
 * (as Synapse's transfer_room_state_on_room_upgrade on a remote join). Never fails the join.
 */
export async function transferFromPredecessor(s: Services, roomId: string): Promise<void> {
  try {
    const room = await loadRoom(s, roomId);
    const predecessor = room?.createEvent.content.predecessor;
    const oldRoomId = isPlainObject(predecessor) ? predecessor.room_id : undefined;
    if (typeof oldRoomId !== "string" || oldRoomId === roomId) return;
    const old = await loadRoom(s, oldRoomId);
    if (!old || !(await hostInRoom(s, oldRoomId))) return;
    const tombstone = await currentStateEvent(s, old, "m.room.tombstone");
    if (tombstone?.content.replacement_room !== roomId) return;
    await copyUserStateOnUpgrade(s, oldRoomId, roomId);
    const wasPublic = (await s.rooms.store.getRoom(oldRoomId))?.isPublic ?? false;
    await s.storage.sql.transaction(async (tx) => {
      if (wasPublic) {
        await s.rooms.store.setPublic(oldRoomId, false, tx);
        await s.rooms.store.setPublic(roomId, true, tx);
      }
      await s.directory.moveAliases(tx, oldRoomId, roomId);
    });
  } catch (err) {
    s.log.warn({ err, roomId }, "joining an upgraded room: could not carry over its predecessor's user state");
  }
}

/**
 * A tombstone committed by this process: when its replacement room is one this server is in and names
 * the tombstoned room as its predecessor (a manual upgrade: the new room made with createRoom, then the
 * tombstone sent), the old room's local members' state follows, in the background. Declared in src/main.ts.
 */
export const carryOverOnTombstone: CommitListener = (s, c) => {
  if (!c.snapshot) return; // another process wrote it: that process acts
  for (const e of c.events) {
    if (!inTimeline(e) || e.pdu.type !== "m.room.tombstone" || e.pdu.state_key !== "") continue;
    const replacement = e.pdu.content.replacement_room;
    if (typeof replacement !== "string" || replacement === e.roomId) continue;
    carryOver(s, e.roomId, replacement).catch((err: unknown) => s.log.warn({ err, roomId: e.roomId, replacement }, "tombstone: could not carry the members' user state over to the replacement room"));
  }
};

async function carryOver(s: Services, oldRoomId: string, newRoomId: string): Promise<void> {
  const room = await loadRoom(s, newRoomId);
  const predecessor = room?.createEvent.content.predecessor;
  if (!room || !isPlainObject(predecessor) || predecessor.room_id !== oldRoomId || !(await hostInRoom(s, newRoomId))) return;
  const old = await loadRoom(s, oldRoomId);
  if ((old && (await currentStateEvent(s, old, "m.room.tombstone")))?.content.replacement_room !== newRoomId) return;
  await copyUserStateOnUpgrade(s, oldRoomId, newRoomId);
}

// One copy into a room at a time: /upgrade's own and the one its tombstone sets off (carryOverOnTombstone)
// run one after the other, the second finding everything there already.
export function copyUserStateOnUpgrade(s: Services, oldRoomId: string, newRoomId: string): Promise<void> {
  return s.rooms.upgradeCopies.run(newRoomId, () => copyUserState(s, oldRoomId, newRoomId));
}

async function copyUserState(s: Services, oldRoomId: string, newRoomId: string): Promise<void> {
  const local = `:${s.config.server_name}`;
  const users = (await s.rooms.store.membersOf(oldRoomId)).filter((m) => m.membership === "join" && m.userId.endsWith(local)).map((m) => m.userId);
  for (const userId of users) {
    try {
      await copyDirect(s, userId, oldRoomId, newRoomId);
      const tags = await s.accountData.get(userId, oldRoomId, "m.tag");
      if (tags && isPlainObject(tags.tags) && Object.keys(tags.tags).length > 0 && !(await s.accountData.get(userId, newRoomId, "m.tag"))) await writeAccountData(s, userId, newRoomId, "m.tag", tags);
      await copyPushRules(s, userId, oldRoomId, newRoomId);
    } catch (err) {
      s.log.warn({ err, userId, oldRoomId, newRoomId }, "upgrade: could not copy a user's tags, m.direct or push rules");
    }
  }
}

async function copyDirect(s: Services, userId: string, oldRoomId: string, newRoomId: string): Promise<void> {
  const direct = await s.accountData.get(userId, "", "m.direct");
  if (!direct) return;
  let changed = false;
  const next: Record<string, unknown> = {};
  for (const [other, rooms] of Object.entries(direct)) {
    if (Array.isArray(rooms) && rooms.includes(oldRoomId) && !rooms.includes(newRoomId)) {
      next[other] = [...rooms, newRoomId];
      changed = true;
    } else next[other] = rooms;
  }
  if (changed) await writeAccountData(s, userId, "", "m.direct", next);
}

async function copyPushRules(s: Services, userId: string, oldRoomId: string, newRoomId: string): Promise<void> {
  const ruleset = await getRuleset(s, userId);
  const as: Requester = { userId, deviceId: null, isGuest: false, isAdmin: false, accessTokenId: null };
  const has = (kind: "room" | "override" | "underride") => ruleset[kind].some((r) => r.rule_id === newRoomId);
  for (const rule of ruleset.room) {
    if (rule.rule_id === oldRoomId && rule.enabled && !has("room")) await putRule(s, as, "room", newRoomId, { actions: rule.actions }, {});
  }
  for (const kind of ["override", "underride"] as const) {
    for (const rule of ruleset[kind]) {
      if (rule.default || !rule.enabled || has(kind) || !rule.conditions?.some((c) => c.key === "room_id" && c.pattern === oldRoomId)) continue;
      const conditions = rule.conditions.map((c) => (c.key === "room_id" && c.pattern === oldRoomId ? { ...c, pattern: newRoomId } : c));
      await putRule(s, as, kind, newRoomId, { actions: rule.actions, conditions }, {});
    }
  }
}
