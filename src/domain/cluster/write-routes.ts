// Which request belongs to which writer: the one table of the REST routes that write a stream another
// process may own (`stream_writers`, cluster/topology.ts), and how the owner of one request is told —
// a room's events writer by its room id (a join by alias once the alias is resolved), an events writer
// for createRoom, the one writer of typing, to_device, account_data, presence, push_rules, and a writer
// of receipts and device_lists. The REST face (src/compat/cluster.ts) forwards a request whose owner is
// another instance; everything not in this table is served where it lands. Only looked at when some
// stream has another writer (`topology.distributed`): a single process never reads it.
// Spec: none (process architecture; Synapse's worker routing, docs/workers.md, made automatic).
import type { WriterStream } from "../../config/workers.ts";
import type { Services } from "../services.ts";
import { joinTarget } from "../rooms/membership.ts";

/** How a route's owner is found: the stream it writes, and the path parameter that names its room. */
export type WriteRule =
  /** A room's events (and the room's membership): its events writer. */
  | { stream: "events"; room: string }
  /** A join or knock by room id or alias: the alias resolved first, then as `room`. */
  | { stream: "events"; roomOrAlias: string }
  /** A new room (createRoom): any events writer, which picks a room id it writes itself. */
  | { stream: "events"; newRoom: true }
  /** Another stream: its writer (this process when it is one of several). */
  | { stream: Exclude<WriterStream, "events"> };

const C = "/_matrix/client/v3";
const F = "/_matrix/federation";

const room = (param = "roomId"): WriteRule => ({ stream: "events", room: param });
const on = (stream: Exclude<WriterStream, "events">): WriteRule => ({ stream });

/** Every routed write, by "METHOD canonical-route" (as registered: src/compat/path-aliases.ts). */
const ROWS: [method: string, url: string, rule: WriteRule][] = [
  // Client-Server API: rooms.
  ["POST", `${C}/createRoom`, { stream: "events", newRoom: true }],
  ["POST", `${C}/join/:roomIdOrAlias`, { stream: "events", roomOrAlias: "roomIdOrAlias" }],
  ["POST", `${C}/knock/:roomIdOrAlias`, { stream: "events", roomOrAlias: "roomIdOrAlias" }],
  ...["join", "leave", "forget", "invite", "kick", "ban", "unban", "upgrade"].map((op): [string, string, WriteRule] => ["POST", `${C}/rooms/:roomId/${op}`, room()]),
  ["PUT", `${C}/rooms/:roomId/send/:eventType/:txnId`, room()],
  ["POST", `${C}/rooms/:roomId/send/:eventType`, room()],
  ["PUT", `${C}/rooms/:roomId/state/:eventType`, room()],
  ["PUT", `${C}/rooms/:roomId/state/:eventType/`, room()],
  ["PUT", `${C}/rooms/:roomId/state/:eventType/:stateKey`, room()],
  ["PUT", `${C}/rooms/:roomId/redact/:eventId/:txnId`, room()],
  ["POST", `${C}/rooms/:roomId/redact/:eventId`, room()],
  // Ephemeral data and the per-user streams.
  ["POST", `${C}/rooms/:roomId/receipt/:receiptType/:eventId`, on("receipts")],
  ["POST", `${C}/rooms/:roomId/read_markers`, on("receipts")],
  ["PUT", `${C}/rooms/:roomId/typing/:userId`, on("typing")],
  ["PUT", `${C}/sendToDevice/:eventType/:txnId`, on("to_device")],
  ["PUT", `${C}/user/:userId/account_data/:type`, on("account_data")],
  ["PUT", `${C}/user/:userId/rooms/:roomId/account_data/:type`, on("account_data")],
  ["DELETE", "/_matrix/client/unstable/org.matrix.msc3391/user/:userId/account_data/:type", on("account_data")],
  ["DELETE", "/_matrix/client/unstable/org.matrix.msc3391/user/:userId/rooms/:roomId/account_data/:type", on("account_data")],
  ["PUT", `${C}/user/:userId/rooms/:roomId/tags/:tag`, on("account_data")],
  ["DELETE", `${C}/user/:userId/rooms/:roomId/tags/:tag`, on("account_data")],
  // Push rules: set at every level, deleted at all but an attribute's (attributes are set, never deleted).
  ...["/:scope", "/:scope/:kind", "/:scope/:kind/:ruleId", "/:scope/:kind/:ruleId/:attr"].map((level): [string, string, WriteRule] => ["PUT", `${C}/pushrules${level}`, on("push_rules")]),
  ...["/:scope", "/:scope/:kind", "/:scope/:kind/:ruleId"].map((level): [string, string, WriteRule] => ["DELETE", `${C}/pushrules${level}`, on("push_rules")]),
  ["PUT", `${C}/presence/:userId/status`, on("presence")],
  ["POST", `${C}/keys/upload`, on("device_lists")],
  ["POST", `${C}/keys/device_signing/upload`, on("device_lists")],
  ["POST", "/_matrix/client/unstable/keys/device_signing/upload", on("device_lists")],
  ["POST", `${C}/keys/signatures/upload`, on("device_lists")],
  ["POST", "/_matrix/client/unstable/keys/signatures/upload", on("device_lists")],
  ["PUT", `${C}/devices/:deviceId`, on("device_lists")],
  ["DELETE", `${C}/devices/:deviceId`, on("device_lists")],
  ["POST", `${C}/delete_devices`, on("device_lists")],
  // Server-Server API: the membership handshakes of a room go to its writer (inbound /send is split per
  // room in federation/transaction.ts).
  ["GET", `${F}/v1/make_join/:roomId/:userId`, room()],
  ["PUT", `${F}/v1/send_join/:roomId/:eventId`, room()],
  ["PUT", `${F}/v2/send_join/:roomId/:eventId`, room()],
  ["GET", `${F}/v1/make_knock/:roomId/:userId`, room()],
  ["PUT", `${F}/v1/send_knock/:roomId/:eventId`, room()],
  ["GET", `${F}/v1/make_leave/:roomId/:userId`, room()],
  ["PUT", `${F}/v1/send_leave/:roomId/:eventId`, room()],
  ["PUT", `${F}/v2/send_leave/:roomId/:eventId`, room()],
  ["PUT", `${F}/v1/invite/:roomId/:eventId`, room()],
  ["PUT", `${F}/v2/invite/:roomId/:eventId`, room()],
  ["PUT", `${F}/v1/exchange_third_party_invite/:roomId`, room()],
];

const TABLE: Readonly<Record<string, WriteRule>> = Object.freeze(Object.fromEntries(ROWS.map(([method, url, rule]) => [`${method} ${url}`, rule])));

/** Every routed "METHOD url" (tests check each is a registered route). */
export const ROUTED_WRITES: readonly string[] = Object.keys(TABLE);

/** The rule of a registered route (its canonical url), or undefined when it is served where it lands. */
export function writeRuleOf(method: string, url: string): WriteRule | undefined {
  return Object.hasOwn(TABLE, `${method} ${url}`) ? TABLE[`${method} ${url}`] : undefined;
}

/** The instance that writes a stream other than events: this one if it is a writer, else the first. */
export function writerOf(s: Services, stream: WriterStream): string {
  const t = s.topology;
  return t.isWriter(stream) ? t.instanceName : t.writersOf(stream)[0]!;
}

/**
 * The instance that must serve a request of `rule` with these path parameters. `mayResolve`: whether an
 * alias may be resolved (over federation for another server's alias) — false for a request without a token,
 * which is answered here (401) rather than costing a directory query.
 */
export async function ownerOf(s: Services, rule: WriteRule, params: Record<string, string | undefined>, mayResolve: boolean): Promise<string> {
  const t = s.topology;
  if (rule.stream !== "events") return writerOf(s, rule.stream);
  if ("newRoom" in rule) {
    if (t.isWriter("events")) return t.instanceName;
    const writers = t.writersOf("events");
    return writers[Math.floor(Math.random() * writers.length)]!;
  }
  let roomId: string | undefined;
  if ("room" in rule) roomId = params[rule.room];
  else {
    const target = params[rule.roomOrAlias];
    if (target?.startsWith("#")) {
      if (!mayResolve) return t.instanceName;
      // An alias that does not resolve is answered here (its error is the same everywhere).
      roomId = await joinTarget(s, target, []).then(
        (j) => j.roomId,
        () => undefined,
      );
    } else roomId = target;
  }
  return roomId ? t.eventWriterFor(roomId) : t.instanceName;
}

/** The stream writer of a federation EDU type (federation/transaction.ts), undefined for types any process takes. */
export const EDU_STREAMS: Readonly<Record<string, WriterStream>> = {
  "m.typing": "typing",
  "m.receipt": "receipts",
  "m.presence": "presence",
  "m.direct_to_device": "to_device",
  "m.device_list_update": "device_lists",
  "m.signing_key_update": "device_lists",
};

/** The instance that handles an EDU of `type` (this one for types of no stream). */
export function eduOwner(s: Services, type: string): string {
  const stream = EDU_STREAMS[type];
  return stream ? writerOf(s, stream) : s.topology.instanceName;
}
