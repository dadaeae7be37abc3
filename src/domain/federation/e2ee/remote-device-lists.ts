// The copy this server keeps of a remote user's device list while they share a room with one of our
// users: applied from their server's m.device_list_update (when its prev_id continues the stream_id we
// hold) and m.signing_key_update EDUs, else resynced whole through GET /user/devices/{userId}. Every
// update moves our device-list stream for that user, so local users sharing a room see them in /sync
// `device_lists.changed` and re-query. A user no room here shares any more is no longer kept, nor is one
// who joins a room here (updates may have been missed meanwhile). Updates of one user apply in order.
// Spec: Server-Server API "Device Management"; Client-Server API "Tracking the device list for a user".
import type { Services } from "../../services.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import type { CommitListener } from "../../consumers/commit-feed.ts";
import { canonicalJson } from "../../canonical-json.ts";
import { fedPath } from "../../../federation/client.ts";
import { isPlainObject, type Json } from "../../e2ee/json.ts";
import { announceDeviceListChange, recordDeviceListChange } from "../../e2ee/device-lists.ts";
import { serverOfUser } from "../room-servers.ts";
import { remoteCrossSigning, signedByMaster, validCrossSigningKey, remoteDeviceKeys } from "./remote-key-shapes.ts";
import { cachedDeviceLists, deleteRemoteDeviceKeys, dropCachedDeviceList, replaceRemoteDeviceKeys, setCachedStreamId } from "./remote-device-store.ts";

export interface DeviceListUpdate {
  userId: string;
  deviceId: string;
  streamId: number;
  prevIds: number[];
  deleted: boolean;
  keys?: Json;
}

/** Most devices taken from one resync answer. */
const MAX_DEVICES = 1000;
const RESYNC_TIMEOUT_MS = 30_000;

/** Per server process: the tail of each remote user's queue of updates (applied one at a time). */
const queues = new WeakMap<Services, Map<string, Promise<void>>>();

function serialized(s: Services, userId: string, fn: () => Promise<void>): Promise<void> {
  let m = queues.get(s);
  if (!m) queues.set(s, (m = new Map()));
  const next = (m.get(userId) ?? Promise.resolve()).then(fn, fn);
  m.set(userId, next);
  const tail = next.catch(() => {});
  void tail.then(() => {
    if (m.get(userId) === next) m.delete(userId);
  });
  return next;
}

/** Whether one of our users shares a joined room with `userId` (we track their device list then). */
async function tracked(s: Services, userId: string): Promise<boolean> {
  for (const u of await s.e2ee.usersSharingRoomsWith(userId)) if (serverOfUser(u) === s.config.server_name) return true;
  return false;
}

/** Applies `apply` and records a change of the remote user's devices on our stream in one transaction; announces it. */
async function moveStream(s: Services, userId: string, deviceIds: readonly string[], apply: (tx: SqlExecutor) => Promise<void>): Promise<void> {
  const pos = await s.storage.sql.transaction(async (tx) => {
    await apply(tx);
    return recordDeviceListChange(s, tx, userId, deviceIds);
  });
  await announceDeviceListChange(s, userId, pos);
}

export function applyDeviceListUpdate(s: Services, origin: string, u: DeviceListUpdate): Promise<void> {
  return serialized(s, u.userId, async () => {
    if (!(await tracked(s, u.userId))) {
      if ((await cachedDeviceLists(s.storage.sql, [u.userId])).size > 0) await s.storage.sql.transaction((tx) => dropCachedDeviceList(tx, u.userId));
      return;
    }
    const held = (await cachedDeviceLists(s.storage.sql, [u.userId])).get(u.userId);
    if (held !== undefined && u.streamId <= held) {
      // Seen already (a resync covered it), or the stream going backwards: nothing changes.
      s.log.info({ origin, userId: u.userId, streamId: u.streamId, held }, "m.device_list_update not after the stream_id held dropped");
      return;
    }
    if (held !== undefined && u.prevIds.every((p) => p <= held)) {
      const now = s.clock.now();
      await moveStream(s, u.userId, [u.deviceId], async (tx) => {
        if (u.deleted) await deleteRemoteDeviceKeys(tx, u.userId, u.deviceId);
        else if (u.keys) await s.e2ee.setDeviceKeys(tx, u.userId, u.deviceId, canonicalJson(u.keys), now);
        await setCachedStreamId(tx, u.userId, u.streamId, now);
      });
      return;
    }
    await resync(s, origin, u.userId);
  });
}

/** Fetches the user's whole device list from their server and replaces our copy (dropped if that fails). */
async function resync(s: Services, origin: string, userId: string): Promise<void> {
  let answer: unknown;
  try {
    answer = await s.federation.getJson(origin, fedPath`/_matrix/federation/v1/user/devices/${userId}`, undefined, { timeoutMs: RESYNC_TIMEOUT_MS });
  } catch (err) {
    s.log.info({ origin, userId, err: err instanceof Error ? err.message : String(err) }, "device list resync failed: keys of this user will be asked of their server");
    answer = undefined;
  }
  const parsed = parseDevices(answer, userId);
  if (!parsed) {
    if (answer !== undefined) s.log.info({ origin, userId }, "invalid device list answer dropped");
    // Clients still hear of the change and query; without a copy here, their query goes to the server.
    await moveStream(s, userId, [""], (tx) => dropCachedDeviceList(tx, userId));
    return;
  }
  const now = s.clock.now();
  await moveStream(s, userId, [""], async (tx) => {
    await replaceRemoteDeviceKeys(tx, userId, parsed.devices, now);
    await tx.run(`DELETE FROM e2e_cross_signing_keys WHERE user_id = ?`, [userId]);
    if (parsed.master) await s.e2ee.setCrossSigningKey(tx, userId, "master", canonicalJson(parsed.master), now);
    if (parsed.selfSigning) await s.e2ee.setCrossSigningKey(tx, userId, "self_signing", canonicalJson(parsed.selfSigning), now);
    await setCachedStreamId(tx, userId, parsed.streamId, now);
  });
}

/** A GET /user/devices answer about `userId`, checked: only valid keys are kept. */
function parseDevices(answer: unknown, userId: string): { streamId: number; devices: Map<string, string>; master?: Json; selfSigning?: Json } | undefined {
  if (!isPlainObject(answer) || answer.user_id !== userId || !Array.isArray(answer.devices) || answer.devices.length > MAX_DEVICES) return undefined;
  const streamId = answer.stream_id;
  if (typeof streamId !== "number" || !Number.isSafeInteger(streamId) || streamId < 0) return undefined;
  const devices = new Map<string, string>();
  for (const d of answer.devices) {
    if (!isPlainObject(d) || typeof d.device_id !== "string" || d.device_id === "") continue;
    const keys = remoteDeviceKeys(d.keys, userId, d.device_id);
    if (keys) devices.set(d.device_id, canonicalJson(keys));
  }
  return { streamId, devices, ...remoteCrossSigning(userId, answer.master_key, answer.self_signing_key) };
}

/**
 * A user's new master and/or self-signing key: stored when we keep their device list (a self-signing key
 * only when signed by the master key, the new one or the one we hold); either way the stream moves.
 */
export function applySigningKeyUpdate(s: Services, userId: string, master: unknown, selfSigning: unknown): Promise<void> {
  return serialized(s, userId, async () => {
    if (!(await tracked(s, userId))) return;
    if (master !== undefined && validCrossSigningKey(master, userId, "master") === undefined) return void s.log.info({ userId }, "m.signing_key_update with an invalid master key dropped");
    const held = (await cachedDeviceLists(s.storage.sql, [userId])).has(userId);
    const now = s.clock.now();
    await moveStream(s, userId, [""], async (tx) => {
      if (!held) return;
      let masterPub = master !== undefined ? validCrossSigningKey(master, userId, "master") : undefined;
      if (masterPub === undefined) {
        const stored = (await s.e2ee.crossSigningKeysOf([userId], tx)).get(userId)?.get("master");
        masterPub = stored ? validCrossSigningKey(JSON.parse(stored), userId, "master") : undefined;
      }
      if (master !== undefined) {
        await s.e2ee.setCrossSigningKey(tx, userId, "master", canonicalJson(master), now);
        // A new master key: the old self-signing key is no longer signed by it.
        if (selfSigning === undefined) await tx.run(`DELETE FROM e2e_cross_signing_keys WHERE user_id = ? AND key_type = 'self_signing'`, [userId]);
      }
      if (selfSigning !== undefined && masterPub !== undefined && validCrossSigningKey(selfSigning, userId, "self_signing") !== undefined && signedByMaster(selfSigning as Json, userId, masterPub))
        await s.e2ee.setCrossSigningKey(tx, userId, "self_signing", canonicalJson(selfSigning), now);
    });
  });
}

/**
 * A remote user joining a room here (declared in src/main.ts, `commitListeners`): the copy of their device
 * list may have missed updates while no room was shared, so it is dropped; queries go to their server
 * until an update from it builds a new copy.
 */
export const forgetRejoinedDeviceLists: CommitListener = (s, c) => {
  const joined = new Set<string>();
  for (const e of c.events) {
    const p = e.pdu;
    if (p.type !== "m.room.member" || typeof p.state_key !== "string" || e.outlier || e.rejectedReason !== null) continue;
    if ((p.content as { membership?: unknown }).membership !== "join") continue;
    const server = serverOfUser(p.state_key);
    if (server && server !== s.config.server_name) joined.add(p.state_key);
  }
  if (joined.size === 0) return;
  void (async () => {
    const held = await cachedDeviceLists(s.storage.sql, [...joined]);
    for (const userId of held.keys()) await serialized(s, userId, () => s.storage.sql.transaction((tx) => dropCachedDeviceList(tx, userId)));
  })().catch((err: unknown) => s.log.warn({ err }, "could not drop copies of remote device lists"));
};
