// Send-to-device messaging: PUT /sendToDevice queues messages for devices of local users (`*` = every
// device of the user), idempotent per (sender, sending device, txnId); each message gets a position on
// the to-device stream. /sync reads a device's inbox with `toDeviceFor` and removes delivered messages
// with `ackToDevice` once the client's next since-token is past them. Content is relayed unchanged.
// Messages for users of other servers go to their servers as m.direct_to_device EDUs (one per server and
// request: src/domain/federation/edus/to-device.ts). Requests from one sending device are queued in the
// order they arrive: clients send several at once (matrix-js-sdk's Rust crypto sends a verification's
// m.key.verification.mac and .done in parallel) and the receiver's state machine needs them in that order.
// Spec: Client-Server API "Send-to-Device messaging".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseUserId } from "../ids.ts";
import { canonicalJson } from "../canonical-json.ts";
import { isPlainObject, objectField, type Json } from "./json.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import { queueToRemoteDevices } from "../federation/edus/to-device.ts";

export interface ToDeviceMessage {
  sender: string;
  type: string;
  content: Json;
}

/** A message for one device of a local user (`*`: each of their devices). */
export interface LocalToDevice {
  userId: string;
  deviceId: string;
  /** Canonical JSON. */
  content: string;
}

/**
 * Queues messages from `sender` for local devices in one transaction, unless `claim` (run first in the
 * same transaction) says they were queued already: `*` expands to the user's devices now, messages to
 * unknown devices are dropped (as Synapse does), a device named explicitly gets that message rather than
 * the one sent to `*`. Wakes the recipients' syncs. Returns whether the claim succeeded.
 */
export async function queueLocalToDevice(s: Services, sender: string, eventType: string, local: readonly LocalToDevice[], claim: (tx: SqlExecutor) => Promise<boolean>): Promise<boolean> {
  const devicesOf = new Map<string, Set<string>>();
  for (const u of new Set(local.map((m) => m.userId))) devicesOf.set(u, new Set(await s.sessions.deviceIds(u)));
  const now = s.clock.now();
  const result = await s.storage.sql.transaction(async (tx) => {
    if (!(await claim(tx))) return undefined;
    const out: { userId: string; position: number }[] = [];
    const seen = new Set<string>();
    const ordered = [...local.filter((m) => m.deviceId !== "*"), ...local.filter((m) => m.deviceId === "*")];
    for (const m of ordered) {
      const targets = m.deviceId === "*" ? [...devicesOf.get(m.userId)!] : devicesOf.get(m.userId)!.has(m.deviceId) ? [m.deviceId] : [];
      for (const d of targets) {
        const key = `${m.userId}\u0000${d}`;
        if (seen.has(key) && m.deviceId === "*") continue;
        seen.add(key);
        const position = await s.e2ee.insertToDevice(tx, { recipientUserId: m.userId, recipientDevice: d, sender, type: eventType, content: m.content, now });
        out.push({ userId: m.userId, position });
      }
    }
    return out;
  });
  for (const d of result ?? []) s.rooms.notifier.notify({ stream: "to_device", position: d.position, userIds: [d.userId] });
  return result !== undefined;
}

/** One message of PUT /sendToDevice, as both faces parse it: for `deviceId` (`*`: every device) of `userId`. */
export interface ToDeviceSend {
  userId: string;
  deviceId: string;
  content: Json;
}

/** The REST body: `messages` (user → device → content). */
export function toDeviceFromBody(body: Json): ToDeviceSend[] {
  const messages = objectField(body, "messages", true);
  const out: ToDeviceSend[] = [];
  for (const [userId, devices] of Object.entries(messages)) {
    parseUserId(userId); // M_INVALID_PARAM for a malformed id, even with nothing for it
    if (!isPlainObject(devices) || !Object.values(devices).every(isPlainObject))
      throw new MatrixError("M_BAD_JSON", `messages.${userId} must map device ids to message contents`, 400);
    for (const [deviceId, content] of Object.entries(devices)) out.push({ userId, deviceId, content: content as Json });
  }
  return out;
}

export async function sendToDevice(s: Services, r: Requester, eventType: string, txnId: string, messages: readonly ToDeviceSend[]): Promise<Record<string, never>> {
  const local: LocalToDevice[] = [];
  const remote = new Map<string, Record<string, Json>>();
  for (const { userId, deviceId, content } of messages) {
    const { serverName } = parseUserId(userId);
    const json = canonicalJson(content); // M_BAD_JSON before anything is sent
    if (serverName !== s.config.server_name) {
      let m = remote.get(serverName);
      if (!m) remote.set(serverName, (m = {}));
      ((m[userId] ??= {}) as Json)[deviceId] = content;
      continue;
    }
    local.push({ userId, deviceId, content: json });
  }
  const deviceKey = r.deviceId ?? (r.appserviceId ? `as:${r.appserviceId}` : "");
  // A retried transaction sends nothing again, to other servers either: their EDUs are queued in the
  // transaction that claims the txnId.
  let servers: string[] = [];
  // Per sending device: its requests take their stream positions in arrival order.
  const fresh = await s.processState.toDeviceSenderLanes.run(`${r.userId}\u0000${deviceKey}`, () =>
    queueLocalToDevice(s, r.userId, eventType, local, async (tx) => {
      if (!(await s.e2ee.insertToDeviceTxn(tx, r.userId, deviceKey, txnId, s.clock.now()))) return false;
      if (remote.size > 0) servers = await queueToRemoteDevices(s, tx, r.userId, eventType, remote);
      return true;
    }),
  );
  if (fresh) s.federationSender.wake(servers);
  return {};
}

/**
 * The device's messages after `sinceExclusive` (up to `upToInclusive` when given), oldest first, at most `limit`. `position` is the stream
 * position the caller has seen up to: the last message returned, or `sinceExclusive` when none was;
 * `limited` says more messages are waiting.
 */
export async function toDeviceFor(s: Services, userId: string, deviceId: string, sinceExclusive: number, limit: number, upToInclusive?: number): Promise<{ messages: ToDeviceMessage[]; position: number; limited: boolean }> {
  const rows = await s.e2ee.toDeviceFor(userId, deviceId, sinceExclusive, upToInclusive, limit + 1);
  const limited = rows.length > limit;
  const page = limited ? rows.slice(0, limit) : rows;
  return {
    messages: page.map((m) => ({ sender: m.sender, type: m.type, content: JSON.parse(m.content) as Json })),
    position: page.length > 0 ? page[page.length - 1]!.streamId : sinceExclusive,
    limited,
  };
}

/** Removes the device's messages up to `upToInclusive` (the client acknowledged them). Returns how many. */
export function ackToDevice(s: Services, userId: string, deviceId: string, upToInclusive: number): Promise<number> {
  return s.e2ee.deleteToDevice(userId, deviceId, upToInclusive);
}
