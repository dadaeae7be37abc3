// The copy this server keeps of a remote user's device list while they share a room with one of our
// users: applied from their server's m.device_list_update (when its prev_id continues the stream_id we
// hold) and m.signing_key_update EDUs, else resynced whole through GET /user/devices/{userId} — also when
// a local client asks for all of a user's keys and no copy is held (as Synapse). A resync that fails
// leaves the copy as it was (an unreachable server changes nothing here; the next update tries again).
// Every update moves our device-list stream for that user, so local users sharing a room see them in
// /sync `device_lists.changed` and re-query. A user no room here shares any more is no longer kept —
// whether they left or our last user sharing a room with them did — nor is one who joins a room here
// (updates may have been missed meanwhile). Updates of one user apply in order. The display names their
// server gives (device_display_name) are kept with the keys, as Synapse shows them.
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
import { cachedDeviceListTimes, cachedDeviceLists, deleteRemoteDeviceKeys, dropCachedDeviceList, replaceRemoteDeviceKeys, setCachedStreamId, unsharedCopiesIn } from "./remote-device-store.ts";

export interface DeviceListUpdate {
  userId: string;
  deviceId: string;
  streamId: number;
  prevIds: number[];
  deleted: boolean;
  keys?: Json;
  /** The update carried keys that are not this device's keys in the spec's shape: none are kept for it. */
  unusableKeys?: boolean;
}

/** Most devices taken from one resync answer. */
const MAX_DEVICES = 1000;
const RESYNC_TIMEOUT_MS = 30_000;

/** Runs `fn` after the remote user's earlier updates (their queue's tail: Services.processState). */
function serialized(s: Services, userId: string, fn: () => Promise<void>): Promise<void> {
  const m = s.processState.remoteDeviceListQueues;
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
        if (u.deleted || u.unusableKeys) await deleteRemoteDeviceKeys(tx, u.userId, u.deviceId);
        else if (u.keys) await s.e2ee.setDeviceKeys(tx, u.userId, u.deviceId, canonicalJson(u.keys), now);
        await setCachedStreamId(tx, u.userId, u.streamId, now);
      });
      return;
    }
    if (!(await resync(s, origin, u.userId, RESYNC_TIMEOUT_MS)) && held === undefined)
      // Without a copy here, clients still hear of the change: their query goes to the user's server.
      await moveStream(s, u.userId, [""], async () => {});
  });
}

/**
 * Resyncs the device lists of remote users a local client asked all keys of, whose lists no copy here
 * holds: the client is then answered from the copy, and later queries too. Servers are asked at once,
 * each server's users one after the other (each in its user's queue) until `timeoutMs` is spent or the
 * server fails one; the users left are asked of their server in one /user/keys/query as before.
 */
export async function resyncForQuery(s: Services, userIds: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const byServer = new Map<string, string[]>();
  for (const u of userIds) {
    const server = serverOfUser(u);
    if (server) byServer.set(server, [...(byServer.get(server) ?? []), u]);
  }
  await Promise.all(
    [...byServer].map(async ([server, users]) => {
      for (const userId of users) {
        const left = deadline - Date.now();
        if (left <= 0) return;
        const done = serialized(s, userId, async () => {
          if ((await cachedDeviceLists(s.storage.sql, [userId])).has(userId) || !(await tracked(s, userId))) return;
          if (!(await resync(s, server, userId, Math.max(1, deadline - Date.now())))) throw new Error("resync failed");
        });
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((_, reject) => (timer = setTimeout(() => reject(new Error("too late")), left)));
        try {
          await Promise.race([done, late]);
        } catch {
          return;
        } finally {
          clearTimeout(timer);
          done.catch(() => {});
        }
      }
    }),
  );
}

/**
 * Fetches the user's whole device list from their server and replaces our copy; false (the copy left as
 * it was) when the server does not answer, or answers something invalid.
 */
async function resync(s: Services, origin: string, userId: string, timeoutMs: number): Promise<boolean> {
  let answer: unknown;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    answer = await s.federation.getJson(origin, fedPath`/_matrix/federation/v1/user/devices/${userId}`, undefined, { timeoutMs, signal: abort.signal });
  } catch (err) {
    s.log.info({ origin, userId, err: err instanceof Error ? err.message : String(err) }, "device list resync failed: the copy held (if any) stays as it was");
    return false;
  } finally {
    clearTimeout(timer);
  }
  const parsed = parseDevices(answer, userId);
  if (!parsed) {
    s.log.info({ origin, userId }, "invalid device list answer dropped");
    return false;
  }
  const now = s.clock.now();
  await moveStream(s, userId, [""], async (tx) => {
    await replaceRemoteDeviceKeys(tx, userId, parsed.devices, now);
    await tx.run(`DELETE FROM e2e_cross_signing_keys WHERE user_id = ?`, [userId]);
    if (parsed.master) await s.e2ee.setCrossSigningKey(tx, userId, "master", canonicalJson(parsed.master), now);
    if (parsed.selfSigning) await s.e2ee.setCrossSigningKey(tx, userId, "self_signing", canonicalJson(parsed.selfSigning), now);
    await setCachedStreamId(tx, userId, parsed.streamId, now);
  });
  return true;
}

/** A GET /user/devices answer about `userId`, checked: only valid keys are kept. */
function parseDevices(answer: unknown, userId: string): { streamId: number; devices: Map<string, string>; master?: Json; selfSigning?: Json } | undefined {
  if (!isPlainObject(answer) || answer.user_id !== userId || !Array.isArray(answer.devices) || answer.devices.length > MAX_DEVICES) return undefined;
  const streamId = answer.stream_id;
  if (typeof streamId !== "number" || !Number.isSafeInteger(streamId) || streamId < 0) return undefined;
  const devices = new Map<string, string>();
  for (const d of answer.devices) {
    if (!isPlainObject(d) || typeof d.device_id !== "string" || d.device_id === "") continue;
    const keys = remoteDeviceKeys(d.keys, userId, d.device_id, d.device_display_name);
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
 * Copies that may miss updates from now on (declared in src/main.ts, `commitListeners`) are dropped:
 * those of a remote user joining a room here (updates may have been missed while no room was shared),
 * and — when a local user leaves a room — those of its remote members no local user shares a room with
 * any more (their server stops telling us; when one of ours meets them again, they are resynced, as
 * Synapse marks such lists unsubscribed). Queries go to their server until a resync builds a new copy.
 */
export const forgetRejoinedDeviceLists: CommitListener = (s, c) => {
  const joined = new Set<string>();
  let localLeft = false;
  for (const e of c.events) {
    const p = e.pdu;
    if (p.type !== "m.room.member" || typeof p.state_key !== "string" || e.outlier || e.rejectedReason !== null) continue;
    const membership = (p.content as { membership?: unknown }).membership;
    const server = serverOfUser(p.state_key);
    if (membership === "join" && server && server !== s.config.server_name) joined.add(p.state_key);
    if ((membership === "leave" || membership === "ban") && server === s.config.server_name) localLeft = true;
  }
  if (joined.size === 0 && !localLeft) return;
  const roomId = c.notice.roomId;
  const committed = s.clock.now();
  void (async () => {
    const stale = new Set((await cachedDeviceLists(s.storage.sql, [...joined])).keys());
    if (localLeft) for (const u of await unsharedCopiesIn(s.storage.sql, roomId)) stale.add(u);
    for (const userId of stale)
      await serialized(s, userId, async () => {
        // A copy written since (a resync that already saw this commit) has missed nothing: it stays.
        const written = (await cachedDeviceListTimes(s.storage.sql, [userId])).get(userId);
        if (written !== undefined && written < committed) await s.storage.sql.transaction((tx) => dropCachedDeviceList(tx, userId));
      });
  })().catch((err: unknown) => s.log.warn({ err }, "could not drop copies of remote device lists"));
};
