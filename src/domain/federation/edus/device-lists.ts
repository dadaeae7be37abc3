// Device lists across servers (Server-Server API "Device Management", m.device_list_update and
// m.signing_key_update EDUs). Outbound: each change of a local user's devices on the device-list stream
// (a new, renamed or deleted device, new keys or signatures) goes to every server sharing a room with
// them as m.device_list_update (stream_id: the change's stream position; prev_id: the user's previous
// one), a change of their master or self-signing key as m.signing_key_update. Inbound: a server's
// updates of its own users who share a room with ours move our device-list stream (local /sync shows
// them in `device_lists.changed`) and keep our copy of their device list (remote-device-lists.ts) up to
// date, resyncing it through GET /user/devices when a prev_id shows a gap. As Synapse's DeviceListUpdater.
// Rooms joined with partial state: partial-state/device-lists.ts (updates noted meanwhile, and local
// changes to the servers that missed them, once complete).
import type { Services } from "../../services.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import type { BackgroundTask } from "../../extensions.ts";
import type { EduHandler } from "../edu.ts";
import { isPlainObject, type Json } from "../../e2ee/json.ts";
import { localKeys, crossSigningPublicKey } from "../../e2ee/query-keys.ts";
import { serverOfUser, serversSharingRoomsWith } from "../room-servers.ts";
import { isUserOf, remoteDeviceKeys } from "../e2ee/remote-key-shapes.ts";
import { lastDeviceListPositions, publicDeviceListRows } from "../e2ee/remote-device-store.ts";
import { signedDeviceKeys, servedDeviceName } from "../e2ee/serve-keys.ts";
import { notePendingRemoteUpdate } from "../partial-state/device-lists.ts";
import { applyDeviceListUpdate, applySigningKeyUpdate, type DeviceListUpdate } from "../e2ee/remote-device-lists.ts";

const isStreamId = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
/** Most prev_ids taken from one update (Synapse sends one or a few). */
const MAX_PREV_IDS = 100;

/** An EDU and the servers it goes to. */
interface Outgoing {
  destinations: ReadonlySet<string>;
  edu: { edu_type: string; content: Json & Record<string, unknown> };
}

/** The local users' changes in (from, to] as EDUs per destination. */
async function updatesBetween(s: Services, from: number, to: number): Promise<Outgoing[]> {
  const rows = (await publicDeviceListRows(s.storage.sql, from, to)).filter((r) => serverOfUser(r.userId) === s.config.server_name && r.deviceId !== "");
  if (rows.length === 0) return [];
  return edusOf(s, s.storage.sql, rows, from, await serversSharingRoomsWith(s, [...new Set(rows.map((r) => r.userId))]));
}

/**
 * Queues, in `tx`, the changes of `users` (local) in (from, to] for `destinations`, which missed them: the
 * latest change of each device (as Synapse's outbound pokes, one per device), or of the cross-signing
 * keys. Returns the destinations to wake once `tx` committed.
 */
export async function queueMissedDeviceListUpdates(
  s: Services,
  tx: SqlExecutor,
  from: number,
  to: number,
  users: ReadonlySet<string>,
  destinations: ReadonlySet<string>,
): Promise<Set<string>> {
  const latest = new Map<string, { streamId: number; userId: string; deviceId: string }>();
  for (const r of await publicDeviceListRows(tx, from, to)) if (users.has(r.userId) && r.deviceId !== "") latest.set(`${r.userId}\u0000${r.deviceId}`, r);
  const rows = [...latest.values()].sort((a, b) => a.streamId - b.streamId);
  const wake = new Set<string>();
  if (rows.length === 0 || destinations.size === 0) return wake;
  const outgoing = await edusOf(s, tx, rows, from, new Map([...users].map((u) => [u, destinations])));
  for (const o of outgoing) for (const d of await s.federationSender.queueDurableEdu(tx, o.destinations, o.edu)) wake.add(d);
  return wake;
}

/** The EDUs of the stream rows `rows` (changes after `from`), each to its user's servers. */
async function edusOf(
  s: Services,
  ex: SqlExecutor,
  rows: readonly { streamId: number; userId: string; deviceId: string }[],
  from: number,
  servers: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<Outgoing[]> {
  const users = [...new Set(rows.map((r) => r.userId))];
  const concerned = users.filter((u) => (servers.get(u)?.size ?? 0) > 0);
  if (concerned.length === 0) return [];
  const [names, keys, before] = await Promise.all([
    s.e2ee.deviceNames(concerned),
    localKeys(s, "", new Map(concerned.map((u) => [u, []]))),
    lastDeviceListPositions(ex, concerned, from),
  ]);
  const prev = new Map(before);
  const signingSent = new Set<string>();
  const out: Outgoing[] = [];
  for (const r of rows) {
    const destinations = servers.get(r.userId);
    if (!destinations || destinations.size === 0) continue;
    const prevId = prev.get(r.userId);
    prev.set(r.userId, r.streamId);
    const master = keys.master_keys[r.userId];
    const ssk = keys.self_signing_keys[r.userId];
    if ((master && crossSigningPublicKey(master) === r.deviceId) || (ssk && crossSigningPublicKey(ssk) === r.deviceId)) {
      if (signingSent.has(r.userId)) continue;
      signingSent.add(r.userId);
      const content: Json & Record<string, unknown> = { user_id: r.userId };
      if (master) content.master_key = master;
      if (ssk) content.self_signing_key = ssk;
      out.push({ destinations, edu: { edu_type: "m.signing_key_update", content } });
      continue;
    }
    const content: Json & Record<string, unknown> = { user_id: r.userId, device_id: r.deviceId, stream_id: r.streamId, prev_id: prevId ? [prevId] : [] };
    if (!names.has(`${r.userId}\u0000${r.deviceId}`)) content.deleted = true;
    else {
      const k = keys.device_keys[r.userId]?.[r.deviceId];
      if (k) content.keys = signedDeviceKeys(k);
      const name = servedDeviceName(s, names.get(`${r.userId}\u0000${r.deviceId}`));
      if (name) content.device_display_name = name;
    }
    out.push({ destinations, edu: { edu_type: "m.device_list_update", content } });
  }
  return out;
}

/** The stored position of the device-list sender on the device_lists stream. */
const POSITION = { consumer: "federation_device_lists", stream: "device_lists" } as const;
/** How soon a failed pass (storage trouble) is tried again. */
const RETRY_MS = 5_000;

/**
 * Local device-list changes to the servers sharing rooms (declared in src/main.ts, `background`). Its
 * position is persisted with the EDUs it queues (one transaction), so changes made while the server was
 * down or restarting are sent once it is back, each once. A server without a stored position starts
 * from now (changes from before federation sending was ever on are not sent).
 */
export const deviceListsToFederation: BackgroundTask = (s) => {
  if (!s.config.send_federation) return () => {};
  let sent: number | undefined;
  let running = false;
  let again = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const run = async () => {
    if (retry) clearTimeout(retry);
    retry = undefined;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const to = await s.e2ee.currentDeviceListPosition();
        if (sent === undefined) {
          sent = await s.consumerPositions.get(POSITION.consumer, POSITION.stream);
          if (sent === undefined) {
            await s.storage.sql.transaction((tx) => s.consumerPositions.set(tx, POSITION.consumer, POSITION.stream, to));
            sent = to;
          }
        }
        if (to > sent && !stopped) {
          const from = sent;
          const outgoing = await updatesBetween(s, from, to);
          const wake = await s.storage.sql.transaction(async (tx) => {
            const servers = new Set<string>();
            for (const o of outgoing) for (const d of await s.federationSender.queueDurableEdu(tx, o.destinations, o.edu)) servers.add(d);
            await s.consumerPositions.set(tx, POSITION.consumer, POSITION.stream, to);
            return servers;
          });
          sent = to;
          s.federationSender.wake(wake);
        }
      } while (again && !stopped);
    } catch (err) {
      s.log.warn({ err }, "could not send device list updates over federation; retrying");
      if (!stopped) retry = setTimeout(() => void run(), RETRY_MS).unref();
    } finally {
      running = false;
    }
  };
  void run();
  const off = s.rooms.notifier.onStream((n) => {
    if (n.stream === "device_lists" && !stopped) void run();
  });
  return () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    off();
  };
};

/**
 * Reads an m.device_list_update, or undefined when it is malformed. Keys that are not the device's keys
 * in the spec's shape leave it an update of the stream all the same (as Synapse takes it), of a device
 * with no keys this server can serve: dropping it would lose its place in the stream.
 */
function parseUpdate(content: unknown): DeviceListUpdate | undefined {
  if (!isPlainObject(content)) return undefined;
  const { user_id: userId, device_id: deviceId, stream_id: streamId, prev_id: prevIds = [], deleted = false, keys, device_display_name: name } = content;
  if (typeof userId !== "string" || typeof deviceId !== "string" || deviceId === "" || !isStreamId(streamId)) return undefined;
  if (!Array.isArray(prevIds) || prevIds.length > MAX_PREV_IDS || !prevIds.every(isStreamId) || typeof deleted !== "boolean") return undefined;
  const given = keys !== undefined && keys !== null;
  if (given && deleted) return undefined;
  const checked = given ? remoteDeviceKeys(keys, userId, deviceId, name) : undefined;
  return { userId, deviceId, streamId, prevIds, deleted, keys: checked, unusableKeys: given && !checked };
}

/** Inbound m.device_list_update (declared in src/main.ts, `eduHandlers`). */
export const deviceListEduHandler: EduHandler = {
  type: "m.device_list_update",
  async handle(s: Services, origin: string, content: unknown): Promise<void> {
    const update = parseUpdate(content);
    if (!update) {
      s.log.info({ origin }, "malformed m.device_list_update EDU dropped");
      return;
    }
    if (!isUserOf(update.userId, origin)) {
      s.log.info({ origin, userId: update.userId }, "m.device_list_update EDU for a user of another server dropped");
      return;
    }
    // Members of a room joined with partial state are unknown until it completes: noted for then.
    await notePendingRemoteUpdate(s, update.userId, update.deviceId);
    await applyDeviceListUpdate(s, origin, update);
  },
};

/** Inbound m.signing_key_update (declared in src/main.ts, `eduHandlers`). */
export const signingKeyEduHandler: EduHandler = {
  type: "m.signing_key_update",
  async handle(s: Services, origin: string, content: unknown): Promise<void> {
    if (!isPlainObject(content) || typeof content.user_id !== "string") {
      s.log.info({ origin }, "malformed m.signing_key_update EDU dropped");
      return;
    }
    if (!isUserOf(content.user_id, origin)) {
      s.log.info({ origin, userId: content.user_id }, "m.signing_key_update EDU for a user of another server dropped");
      return;
    }
    await applySigningKeyUpdate(s, content.user_id, content.master_key, content.self_signing_key);
  },
};
