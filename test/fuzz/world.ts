// The world a fuzz run attacks: a real server with real users, rooms, events, devices, filters, aliases
// and key backups, so generated path parameters name real resources. The attacker ("actor") is an
// ordinary user; the victim owns a private room and data the actor has no right to touch, and
// `protectedSnapshot` reads all of it (plus the actor's own privileges) straight from storage so a run
// can tell when a request changed what it should not have.
import { startTestServer, type Backend, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { otk, uploadDeviceKeys } from "../helpers/e2ee.ts";
import type { Rng } from "./random.ts";
import type { Supply } from "./values.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
export const PASSWORD = "fuzz-password-1";

export interface World {
  t: TestServer;
  serverName: string;
  actor: Session;
  victim: Session;
  rooms: { own: string; shared: string; victimPrivate: string };
  events: { own: string[]; shared: string[]; victimPrivate: string[] };
  aliases: string[];
  backupVersions: string[];
  filterIds: string[];
  /** Counts requests, for unique transaction ids. */
  n: number;
  /** Values another suite's world gives first (a federation world: the origin's users), else undefined. */
  param?: (name: string, rng: Rng) => string | undefined;
  supply?: Supply;
  /** Users besides the actor whom the requests may act as (an application service's): their own member events in the public shared room are theirs to change. */
  alsoActs?: (userId: string) => boolean;
}

async function ok(t: TestServer, method: string, path: string, who: Session, body?: unknown): Promise<any> {
  const res = await t.call(method, path, { token: who.access_token, body });
  if (res.status !== 200) throw new Error(`fuzz world: ${method} ${path} → ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

async function send(t: TestServer, who: Session, roomId: string, body: Record<string, unknown>, type = "m.room.message"): Promise<string> {
  return (await ok(t, "PUT", `${V3}/rooms/${enc(roomId)}/send/${type}/w${Math.random().toString(36).slice(2)}`, who, body)).event_id;
}

/** A test server on `backend` (quiet logs) and the world built on it, for a fuzz suite's beforeAll. */
export async function startWorld(backend: Backend): Promise<World> {
  return buildWorld(await startTestServer({ backend, config: { log_level: "fatal" } }));
}

export async function buildWorld(t: TestServer): Promise<World> {
  const actor = await registerUser(t, "actor", PASSWORD);
  const victim = await registerUser(t, "victim", PASSWORD);
  const own = await createRoom(t, actor, { preset: "public_chat", name: "Actor's room", room_alias_name: "fuzz-own", topic: "topic" });
  const shared = await createRoom(t, victim, { preset: "public_chat", name: "Victim's public room", room_alias_name: "fuzz-shared" });
  const victimPrivate = await createRoom(t, victim, { preset: "private_chat", name: "Victim's private room", room_alias_name: "fuzz-private" });
  await ok(t, "POST", `${V3}/join/${enc(own)}`, victim, {});
  await ok(t, "POST", `${V3}/join/${enc(shared)}`, actor, {});
  const events: World["events"] = { own: [], shared: [], victimPrivate: [] };
  const root = await send(t, actor, own, { msgtype: "m.text", body: "thread root" });
  events.own.push(root, await send(t, victim, own, { msgtype: "m.text", body: "in thread", "m.relates_to": { rel_type: "m.thread", event_id: root } }));
  events.own.push(await send(t, actor, own, { "m.relates_to": { rel_type: "m.annotation", event_id: root, key: "👍" } }, "m.reaction"));
  events.shared.push(await send(t, victim, shared, { msgtype: "m.text", body: "victim speaks" }), await send(t, actor, shared, { msgtype: "m.text", body: "actor speaks" }));
  events.victimPrivate.push(await send(t, victim, victimPrivate, { msgtype: "m.text", body: "secret" }));
  await ok(t, "PUT", `${V3}/directory/list/room/${enc(own)}`, actor, { visibility: "public" });
  const backupVersions: string[] = [];
  for (const who of [actor, victim]) {
    const v = await ok(t, "POST", `${V3}/room_keys/version`, who, { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: { public_key: "abcdef" } });
    backupVersions.push(v.version);
    await ok(t, "PUT", `${V3}/room_keys/keys/${enc(own)}/session1?version=${v.version}`, who, { first_message_index: 0, forwarded_count: 0, is_verified: false, session_data: { ciphertext: "x" } });
    await ok(t, "PUT", `${V3}/user/${enc(who.user_id)}/account_data/org.example.fuzz`, who, { secret: who.user_id });
    await ok(t, "PUT", `${V3}/user/${enc(who.user_id)}/rooms/${enc(own)}/tags/u.fuzz`, who, { order: 0.5 });
    await ok(t, "PUT", `${V3}/profile/${enc(who.user_id)}/displayname`, who, { displayname: `${who.user_id.slice(1, 6)} name` });
    const device = await uploadDeviceKeys(t, who);
    await ok(t, "POST", `${V3}/keys/upload`, who, { one_time_keys: { "signed_curve25519:AAAAAQ": otk(who, device, 1) } });
  }
  const filterIds = [
    (await ok(t, "POST", `${V3}/user/${enc(actor.user_id)}/filter`, actor, { room: { timeline: { limit: 5 } } })).filter_id,
    (await ok(t, "POST", `${V3}/user/${enc(victim.user_id)}/filter`, victim, { room: { timeline: { limit: 5 } } })).filter_id,
  ];
  return {
    t,
    serverName: t.config.server_name,
    actor,
    victim,
    rooms: { own, shared, victimPrivate },
    events,
    aliases: [`#fuzz-own:${t.config.server_name}`, `#fuzz-shared:${t.config.server_name}`, `#fuzz-private:${t.config.server_name}`],
    backupVersions,
    filterIds,
    n: 0,
  };
}

/**
 * Keeps the actor usable: a request may have logged it out, deleted its device or deactivated it. Logs in
 * again, or registers a fresh actor who joins the shared room, and makes it the actor.
 */
export async function reviveActor(w: World): Promise<void> {
  const who = await w.t.call("GET", `${V3}/account/whoami`, { token: w.actor.access_token });
  if (who.status === 200) return;
  const localpart = w.actor.user_id.slice(1, w.actor.user_id.indexOf(":"));
  const again = await w.t.call("POST", `${V3}/login`, { body: { type: "m.login.password", identifier: { type: "m.id.user", user: localpart }, password: PASSWORD } });
  if (again.status === 200) {
    w.actor = again.json as Session;
    return;
  }
  w.actor = await registerUser(w.t, `actor${++w.n}`, PASSWORD);
  await ok(w.t, "POST", `${V3}/join/${enc(w.rooms.shared)}`, w.actor, {});
  await ok(w.t, "POST", `${V3}/join/${enc(w.rooms.own)}`, w.actor, {}).catch(() => undefined);
}

/** Every room id the world knows, and one that does not exist. */
const roomIds = (w: World) => [w.rooms.own, w.rooms.shared, w.rooms.victimPrivate, `!nowhere:${w.serverName}`];
const eventIds = (w: World) => [...w.events.own, ...w.events.shared, ...w.events.victimPrivate, "$nowhere"];
const userIds = (w: World) => [w.actor.user_id, w.victim.user_id, `@nobody:${w.serverName}`, "@someone:other.example"];

/** A value for a path or query parameter of this name, from the world (undefined: the caller decides). */
export function worldParam(w: World, name: string, rng: Rng): string | undefined {
  const own = w.param?.(name, rng);
  if (own !== undefined) return own;
  switch (name) {
    case "roomId":
    case "room_id":
      return rng.pick(roomIds(w));
    case "roomIdOrAlias":
      return rng.pick([...roomIds(w), ...w.aliases]);
    case "roomAlias":
    case "alias":
      return rng.pick([...w.aliases, `#new${w.n}:${w.serverName}`]);
    case "eventId":
      return rng.pick(eventIds(w));
    case "userId":
    case "user_id":
    case "userid":
      return rng.pick(userIds(w));
    case "eventType":
      return rng.pick(["m.room.message", "m.room.name", "m.room.topic", "m.room.power_levels", "m.room.member", "m.reaction", "org.example.custom", "m.room.redaction"]);
    case "stateKey":
      return rng.pick(["", w.actor.user_id, w.victim.user_id]);
    case "txnId":
      return `f${++w.n}`;
    case "deviceId":
      return rng.pick([w.actor.device_id, w.victim.device_id, "NOSUCHDEVICE"]);
    case "filterId":
      return rng.pick([...w.filterIds, "999"]);
    case "type":
      return rng.pick(["org.example.fuzz", "m.direct", "m.fully_read", "m.push_rules"]);
    case "tag":
      return rng.pick(["u.fuzz", "m.favourite"]);
    case "receiptType":
      return rng.pick(["m.read", "m.read.private", "m.fully_read"]);
    case "sessionId":
      return rng.pick(["session1", "nosession"]);
    case "version":
      return rng.pick([...w.backupVersions, "999"]);
    case "relType":
      return rng.pick(["m.thread", "m.annotation", "m.replace", "m.reference"]);
    case "serverName":
    case "server":
      return rng.pick([w.serverName, "other.example"]);
    case "dir":
      return rng.pick(["b", "f"]);
    case "from":
    case "to":
    case "since":
    case "at":
    case "next_batch":
      return rng.pick(["s1", "s5_0_0_0_0_0_0_0", "s0"]);
    case "limit":
      return String(rng.int(20));
    case "timeout":
    case "timeout_ms":
      return "0";
    case "ts":
      return String(Date.now() - rng.int(60_000));
    case "username":
      return rng.word();
    default:
      return undefined;
  }
}

/** Supplies body values by property name or string format (ids of the world). */
export function worldSupply(w: World, rng: Rng): Supply {
  return ({ name, format }) => {
    const own = w.supply?.({ name, format });
    if (own !== undefined) return own;
    if (format === "mx-user-id" || name === "user_id" || name === "userId") return rng.pick(userIds(w));
    if (format === "mx-room-id" || name === "room_id") return rng.pick(roomIds(w));
    if (format === "mx-event-id" || name === "event_id") return rng.pick(eventIds(w));
    if (format === "mx-server-name") return w.serverName;
    if (format === "mx-mxc-uri" || name === "avatar_url" || name === "url") return `mxc://${w.serverName}/abc`;
    if (format === "mx-room-alias") return rng.pick(w.aliases);
    if (name === "device_id") return rng.pick([w.actor.device_id, w.victim.device_id]);
    if (name === "timeout") return rng.int(100);
    if (name === "password") return PASSWORD;
    return undefined;
  };
}

/**
 * What the actor must never change, read from storage: every row of the victim's account (profile,
 * devices, tokens, account data, filters, keys, backups, presence), the state and history of the
 * victim's private room, the shared room's state bar the actor's own member event (and those of the users
 * it may also act as), the victim's
 * memberships outside the actor's room (bar invites into rooms outside the world), and the actor's own privileges.
 */
export async function protectedSnapshot(w: World): Promise<string> {
  const sql = w.t.hs.services.storage.sql;
  const v = w.victim.user_id;
  const out: Record<string, unknown> = {};
  const byUser = ["users", "profiles", "profile_fields", "access_tokens", "refresh_tokens", "account_data", "user_filters", "e2e_device_keys", "e2e_one_time_keys", "e2e_fallback_keys", "e2e_cross_signing_keys", "e2e_room_keys_versions", "e2e_room_keys", "presence"];
  for (const table of byUser) out[table] = await sql.all(`SELECT * FROM ${table} WHERE user_id = ? ORDER BY 1, 2`, [v]);
  // An upgrade of the actor's room copies the victim's tags of it to the replacement room (as Synapse's
  // copy_user_state_on_room_upgrade): the victim's room account data is compared for the rooms of the world.
  const worldRooms = new Set(["", ...Object.values(w.rooms)]);
  out.account_data = (out.account_data as { room_id: string }[]).filter((row) => worldRooms.has(row.room_id));
  out.devices = await sql.all(`SELECT user_id, device_id, display_name FROM devices WHERE user_id = ? ORDER BY device_id`, [v]);
  out.privateState = await sql.all(`SELECT type, state_key, event_id FROM current_state_events WHERE room_id = ? ORDER BY type, state_key`, [w.rooms.victimPrivate]);
  // Rejected events (a remote server's refused PDU is kept as rejected, never state, never served) left out.
  out.privateEvents = await sql.all(`SELECT event_id FROM events WHERE room_id = ? AND rejected_reason IS NULL ORDER BY stream_ordering`, [w.rooms.victimPrivate]);
  const sharedState = await sql.all<{ type: string; state_key: string }>(`SELECT type, state_key, event_id FROM current_state_events WHERE room_id = ? AND state_key <> ? ORDER BY type, state_key`, [w.rooms.shared, w.actor.user_id]);
  out.sharedState = sharedState.filter((row) => !(row.type === "m.room.member" && w.alsoActs?.(row.state_key)));
  // Anyone may invite the victim into a room of their own (createRoom's `invite`, /invite): an invite
  // outside the world's rooms is no breach; any other membership there, or a change in the world's rooms, is.
  const memberships = await sql.all<{ room_id: string; membership: string }>(`SELECT room_id, membership, event_id, forgotten FROM room_memberships WHERE user_id = ? AND room_id <> ? ORDER BY room_id`, [v, w.rooms.own]);
  out.memberships = memberships.filter((row) => worldRooms.has(row.room_id) || row.membership !== "invite");
  out.aliases = await sql.all(`SELECT alias, room_id FROM room_aliases WHERE creator = ? ORDER BY alias`, [v]);
  out.admins = await sql.all(`SELECT user_id FROM users WHERE is_admin = ? ORDER BY user_id`, [true]);
  return JSON.stringify(out);
}

/** Where two snapshots first differ (some context either side). */
export function changedSnapshot(before: string, after: string): string {
  let i = 0;
  while (i < before.length && before[i] === after[i]) i++;
  const from = Math.max(0, i - 300);
  return `changed protected data at ${i}:\n  before …${before.slice(from, i + 500)}\n  after  …${after.slice(from, i + 500)}`;
}
