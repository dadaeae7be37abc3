// What /sync (and GET /keys/changes) read of E2EE: device-list changes between two positions, one-time
// key counts, unused fallback key algorithms, and the current positions of the device-list and
// to-device streams. To-device delivery itself is `toDeviceFor` / `ackToDevice` in to-device.ts.
// Spec: Client-Server API "Extensions to /sync" (End-to-End Encryption), "GET /keys/changes".
import type { Services } from "../services.ts";
import { parseJson } from "./json.ts";

/**
 * Positions bounding a device-list window. `deviceLists` is the device-list stream; `events` the room
 * events stream (membership changes make users start or stop sharing rooms). Without `events` on
 * either end, membership changes are not looked at.
 */
export interface DeviceListPositions {
  deviceLists: number;
  events?: number;
}

/**
 * Users `userId` should re-fetch keys of, and users they no longer share any room with, between `from`
 * (exclusive) and `to` (inclusive):
 * - changed: users sharing a joined room with `userId` (themselves included) whose devices or
 *   cross-signing keys changed in the window; users who newly share a room with them through a
 *   membership change in the window (they joined, or `userId` joined their room: then `userId` too, as
 *   Synapse lists every member of a newly joined room); users invited to
 *   or knocking on their rooms in the window (clients encrypt for them too; as Synapse); and users
 *   whose master key `userId` signed (changes only they hear of).
 * - left: users who left, or whose room `userId` left (or was banned from), in the window and share no
 *   room with them now. Being invited somewhere changes nothing until `userId` joins.
 * A handful of queries whatever the number of rooms and users.
 */
export async function deviceListChanges(s: Services, userId: string, from: DeviceListPositions, to: DeviceListPositions): Promise<{ changed: string[]; left: string[] }> {
  // Reads the two windows first: a sync where neither moved for this user costs one or two reads.
  const changedDevices = to.deviceLists > from.deviceLists ? await s.e2ee.deviceListChangedUsers(userId, from.deviceLists, to.deviceLists) : [];
  let joined: readonly string[] = [];
  let events: { roomId: string; stateKey: string; json: string }[] = [];
  if (from.events !== undefined && to.events !== undefined && to.events > from.events) {
    joined = await s.sync.streamCache.joinedRoomIds(s, userId);
    // Usually no member event moved in the user's rooms: the in-memory index of sync says so without a read.
    if (await s.sync.streamCache.memberEventsMaybeSince(s, joined, userId, from.events)) events = await s.e2ee.membershipEventsBetween(joined, userId, from.events, to.events);
  }
  if (changedDevices.length === 0 && events.length === 0) return { changed: [], left: [] };
  const sharing = await s.e2ee.usersSharingRoomsWith(userId);
  const changed = new Set<string>();
  for (const u of changedDevices) if (u === userId || sharing.has(u)) changed.add(u);
  const maybeLeft = new Set<string>();
  // Invited or knocking users of the user's rooms: clients encrypt for them too (as Synapse reports them).
  const newcomers = new Set<string>();
  if (events.length > 0) {
    const roomsIJoined = new Set<string>();
    const roomsILeft = new Set<string>();
    for (const e of events) {
      const membership = (parseJson(e.json).content as { membership?: unknown } | undefined)?.membership;
      const u = e.stateKey;
      if (u === userId) {
        if (membership === "join") roomsIJoined.add(e.roomId);
        else if (membership === "leave" || membership === "ban") roomsILeft.add(e.roomId);
      } else if (membership === "join") {
        changed.add(u);
        maybeLeft.delete(u);
      } else if (membership === "invite" || membership === "knock") {
        newcomers.add(u);
        maybeLeft.delete(u);
      } else if (membership === "leave" || membership === "ban") {
        maybeLeft.add(u);
        newcomers.delete(u);
      }
    }
    const joinedNow = new Set(joined);
    const members = await s.e2ee.joinedMembersOf([...roomsIJoined, ...roomsILeft]);
    // Every member of a room the user joined, the user too (their other devices learn of the new room; as Synapse).
    for (const room of roomsIJoined) if (joinedNow.has(room)) for (const u of members.get(room) ?? []) changed.add(u);
    for (const room of roomsILeft) if (!joinedNow.has(room)) for (const u of members.get(room) ?? []) maybeLeft.add(u);
  }
  for (const u of changed) if (u !== userId && !sharing.has(u)) changed.delete(u);
  for (const u of newcomers) changed.add(u);
  const left = [...maybeLeft].filter((u) => u !== userId && !sharing.has(u) && !changed.has(u));
  return { changed: [...changed].sort(), left: left.sort() };
}

/** Unclaimed one-time keys of the device per algorithm; `signed_curve25519` is always present. */
export async function oneTimeKeyCounts(s: Services, userId: string, deviceId: string): Promise<Record<string, number>> {
  return { signed_curve25519: 0, ...(await s.e2ee.oneTimeKeyCounts(userId, deviceId)) };
}

/** Algorithms of the device's fallback keys not yet used (`device_unused_fallback_key_types`). */
export function unusedFallbackKeyTypes(s: Services, userId: string, deviceId: string): Promise<string[]> {
  return s.e2ee.unusedFallbackAlgorithms(userId, deviceId);
}

export function currentDeviceListPosition(s: Services): number | Promise<number> {
  return s.e2ee.currentDeviceListPosition();
}

export function currentToDevicePosition(s: Services): number | Promise<number> {
  return s.e2ee.currentToDevicePosition();
}
