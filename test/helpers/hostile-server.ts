// A scripted hostile homeserver for attack tests (test/federation/hostile): a fake origin (fake-origin.ts:
// its own Ed25519 key, HTTPS on loopback, its key document served) that joins a Weft server's rooms as a
// normal server would — make_join, the template signed, send_join — and then misbehaves: it crafts
// correctly signed and hashed events of the room's version (v1–v12) on the prev_events and auth_events it
// chooses, breaks them on purpose (signature, content hash, event id, room id, format), pushes them and
// EDUs in /send transactions, and answers Weft's pulls (/event, /state_ids, /state, /backfill,
// /get_missing_events, /event_auth) from the events it holds or with whatever the test's `plan` says
// (any status and JSON, late, never, or dripped a byte at a time). It can also host rooms of its own that
// Weft's users join or knock on (make_join/send_join, make_knock/send_knock answered), and attack another
// homeserver than Weft (`target`: a live Synapse). Also the victim's view as its local members see it:
// current state (/state), timeline (/messages), live /sync, notifications (push), each through the client
// API; the refusal log lines; and `hostileFixture`, one victim and one attacker per test file.
import { afterAll, beforeAll, expect } from "vitest";
import type { Pdu } from "../../src/domain/events/types.ts";
import { eventIdOf, referenceHash } from "../../src/domain/events/hashes.ts";
import { buildEvent, sealEvent, unsignedPdu, type BuiltEvent, type EventDraft } from "../../src/domain/rooms/build-event.ts";
import { getRoomVersion, KNOWN_ROOM_VERSIONS, type RoomVersion } from "../../src/domain/rooms/room-versions.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";
import { Dag } from "./dag.ts";
import { startFakeOrigin, type FakeAnswer, type FakeOrigin, type FakeRequest } from "./fake-origin.ts";
import { startFederatedServer, type FederatedServer } from "./federation.ts";
import { capturedLog, type CapturedLog } from "./captured-log.ts";
import { registerUser, type Session } from "./users.ts";
import { sendTransaction, signedCall, syncUntil } from "./by-hand.ts";
import type { Backend, JsonResponse } from "./server.ts";

const enc = encodeURIComponent;
const FED = "/_matrix/federation";
const V3 = "/_matrix/client/v3";

/** How an event is crafted: on the victim's room as it is now unless told otherwise. */
export interface CraftOptions {
  /** prev_events (default: the victim's forward extremities). */
  prev?: string[];
  /** auth_events, exactly (default: selected by the auth rules from `authState`). */
  auth?: string[];
  /** The state auth events are selected from (default: the victim's state after the first of `prev`, else its current state). */
  authState?: ReadonlyMap<string, string>;
  /** depth (default: one more than the deepest prev known). */
  depth?: number;
  /** Changes to the PDU before it is hashed and signed. */
  edit?: (pdu: Pdu) => void;
  /** Signs as another server (its name in `origin`, its key) — a forgery when that is not us. */
  signer?: { serverName: string; key: FakeOrigin["key"] };
}

export interface HostileServer extends FakeOrigin {
  readonly victim: FederatedServer;
  /** Every event this server holds (crafted, or received from the victim), by id: what its pulls serve. */
  readonly events: Map<string, Pdu>;
  /** The test's answer to a request, before the honest defaults (undefined: the default). */
  plan: (req: FakeRequest) => FakeAnswer | Promise<FakeAnswer> | "default";
  /** The room's version as the victim has it. */
  version(roomId: string): Promise<RoomVersion>;
  /** Joins `localpart` to `roomId` through the victim's make_join / send_join; the join's id. */
  join(roomId: string, localpart: string, content?: Record<string, unknown>): Promise<string>;
  /** A correctly hashed and signed event of the room's version, built as `opts` says; kept in `events`. */
  craft(roomId: string, draft: EventDraft, opts?: CraftOptions): Promise<BuiltEvent>;
  /** Pushes PDUs (and EDUs) in one /send transaction, signed by this server. */
  send(pdus: unknown[], edus?: unknown[]): Promise<JsonResponse>;
  /**
   * A room this server hosts (mallory its creator, public): Weft's users join or knock on it through this
   * server's make_join / send_join, make_knock / send_knock; its events are kept in `events`. Returns its id.
   */
  host(version: string): Promise<string>;
  /** An event of mallory's (or `draft.sender`'s) in a hosted room, on its tip; the room's state and tip move. */
  hostedEvent(roomId: string, draft: EventDraft): Promise<BuiltEvent>;
  /** Rooms of the victim this server joined: the state and tip its last join left (what it knows without the victim's storage). */
  joined: Map<string, HostedRoom>;
  /** The hosted room's DAG so far: its tip, depth and state (what make_join builds on). */
  hosted: Map<string, HostedRoom>;
  /** `n` messages of mallory's in a chain on `prev` (auth events from `state`); not sent. */
  chain(roomId: string, n: number, prev: string, state: ReadonlyMap<string, string>, depth: number): Promise<BuiltEvent[]>;
  /** A signed federation request of this server to the victim. */
  call(method: "GET" | "PUT" | "POST", path: string, body?: unknown): Promise<JsonResponse>;
}

export interface HostedRoom {
  version: RoomVersion;
  tip: string;
  depth: number;
  state: Map<string, string>;
}

/** The honest answer of a server holding `events`, for the pulls Weft makes. */
async function honest(h: HostileServer, req: FakeRequest): Promise<FakeAnswer> {
  const parts = req.path.split("/");
  const hosted = h.hosted.get(parts[5] ?? "");
  const make = /^\/_matrix\/federation\/v1\/make_(join|knock)\//.exec(req.path);
  if (hosted && req.method === "GET" && make) {
    const draft = { type: "m.room.member", stateKey: parts[6]!, sender: parts[6]!, content: { membership: make[1]! } };
    const ctx = { roomId: parts[5]!, version: hosted.version, state: hosted.state, extremities: [hosted.tip], maxDepth: hosted.depth, lookup: async (id: string) => h.events.get(id) };
    const event = await unsignedPdu(h.victim.hs.services, ctx, draft, Date.now(), h.victim.serverName);
    delete (event as Partial<Pdu>).hashes;
    delete (event as Partial<Pdu>).signatures;
    return { status: 200, json: { room_version: hosted.version.id, event } };
  }
  if (hosted && req.method === "PUT" && req.path.startsWith(`${FED}/v2/send_join/`)) {
    const join = req.body as Pdu;
    const stateBefore = [...hosted.state.values()].map((id) => h.events.get(id)!);
    const id = eventIdOf(join, hosted.version);
    h.events.set(id, join);
    hosted.state.set(stateKeyOf("m.room.member", join.state_key!), id);
    hosted.tip = id;
    hosted.depth = join.depth;
    return { status: 200, json: { origin: h.serverName, state: stateBefore, auth_chain: stateBefore, event: join, members_omitted: false } };
  }
  if (hosted && req.method === "PUT" && req.path.startsWith(`${FED}/v1/send_knock/`)) {
    const knock = req.body as Pdu;
    const stateBefore = [...hosted.state.values()].map((id) => h.events.get(id)!);
    h.events.set(eventIdOf(knock, hosted.version), knock);
    return { status: 200, json: { knock_room_state: stateBefore } };
  }
  const pdu = (id: string) => h.events.get(id);
  const origin = { origin: h.serverName, origin_server_ts: Date.now() };
  if (req.method === "PUT" && req.path.startsWith(`${FED}/v1/send/`)) {
    for (const p of ((req.body as { pdus?: Pdu[] }).pdus ?? [])) void h.version(p.room_id!).then((v) => h.events.set(eventIdOf(p, v), p)).catch(() => {});
    return { status: 200, json: { pdus: {} } };
  }
  if (req.path.startsWith(`${FED}/v1/event/`)) {
    const p = pdu(parts[5]!);
    return p ? { status: 200, json: { ...origin, pdus: [p] } } : { status: 404, json: { errcode: "M_NOT_FOUND", error: "no such event" } };
  }
  if (req.path.startsWith(`${FED}/v1/get_missing_events/`) || req.path.startsWith(`${FED}/v1/backfill/`)) return { status: 200, json: { events: [], pdus: [], ...origin } };
  return undefined;
}

/**
 * Starts the hostile server against `victim` (a Weft server: its storage gives the room's tips and state
 * to build on). `target`: another homeserver (a live Synapse) to attack instead — then `victim` only lends
 * its event builder, and events are built on what this server learnt of the room (its join and the
 * events the target sent it since).
 */
export async function startHostileServer(victim: FederatedServer, opts: { target?: { baseUrl: string; serverName: string } } = {}): Promise<HostileServer> {
  const target = opts.target ?? victim;
  const origin = await startFakeOrigin();
  const versions = new Map<string, RoomVersion>();
  const h = origin as HostileServer;
  Object.assign(h, {
    victim,
    events: new Map<string, Pdu>(),
    hosted: new Map<string, HostedRoom>(),
    joined: new Map<string, HostedRoom>(),
    plan: () => "default",
  });
  origin.handler = async (req) => {
    const planned = await h.plan(req);
    return planned === "default" ? honest(h, req) : planned;
  };
  h.version = async (roomId) => {
    let v = versions.get(roomId);
    if (!v) {
      const row = await victim.hs.services.rooms.store.getRoom(roomId);
      if (!row) throw new Error(`unknown room ${roomId}`);
      v = getRoomVersion(row.roomVersion)!;
      versions.set(roomId, v);
    }
    return v;
  };
  h.call = (method, path, body) => signedCall(h, target, method, path, body);
  h.send = (pdus, edus) => sendTransaction(h, target, pdus, edus);
  h.join = async (roomId, localpart, content = {}) => {
    const userId = h.user(localpart);
    const t = await h.call("GET", `${FED}/v1/make_join/${enc(roomId)}/${enc(userId)}?${KNOWN_ROOM_VERSIONS.map((v) => `ver=${v}`).join("&")}`);
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    const v = getRoomVersion(t.json.room_version)!;
    const pdu = { ...t.json.event, content: { ...t.json.event.content, ...content }, origin_server_ts: Date.now(), hashes: { sha256: "" }, signatures: {} } as Pdu;
    if (v.eventIdFormat === "server-assigned") pdu.event_id = `$join${Math.random().toString(36).slice(2)}:${h.serverName}`;
    const join = sealEvent(pdu, v, h);
    const res = await h.call("PUT", `${FED}/v2/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    for (const p of [...res.json.state, ...res.json.auth_chain] as Pdu[]) h.events.set(eventIdOf(p, v), p);
    h.events.set(join.eventId, join.pdu);
    versions.set(roomId, v);
    const state = h.joined.get(roomId)?.state ?? new Map((res.json.state as Pdu[]).map((p) => [stateKeyOf(p.type, p.state_key!), eventIdOf(p, v)]));
    state.set(stateKeyOf("m.room.member", userId), join.eventId);
    h.joined.set(roomId, { version: v, tip: join.eventId, depth: join.pdu.depth, state });
    return join.eventId;
  };
  h.host = async (version) => {
    const dag = new Dag(victim.hs.services, version);
    const mallory = h.user("mallory");
    const first = await dag.create(h, mallory);
    const state = new Map<string, string>();
    for (const e of first) {
      h.events.set(e.eventId, e.pdu);
      state.set(stateKeyOf(e.pdu.type, e.pdu.state_key!), e.eventId);
    }
    const last = first[first.length - 1]!;
    h.hosted.set(dag.roomId, { version: dag.v, tip: last.eventId, depth: last.pdu.depth, state });
    versions.set(dag.roomId, dag.v);
    return dag.roomId;
  };
  h.hostedEvent = async (roomId, draft) => {
    const hosted = h.hosted.get(roomId)!;
    const ctx = { roomId, version: hosted.version, state: hosted.state, extremities: [hosted.tip], maxDepth: hosted.depth, lookup: async (id: string) => h.events.get(id) };
    const e = await buildEvent(victim.hs.services, ctx, draft, Date.now(), h);
    h.events.set(e.eventId, e.pdu);
    if (draft.stateKey !== undefined) hosted.state.set(stateKeyOf(draft.type, draft.stateKey), e.eventId);
    hosted.tip = e.eventId;
    hosted.depth = e.pdu.depth;
    return e;
  };
  h.chain = async (roomId, n, prev, state, depth) => {
    const v = await h.version(roomId);
    const out: BuiltEvent[] = [];
    const lookup = async (id: string) => h.events.get(id) ?? (await victim.hs.services.rooms.events.get(id))?.pdu;
    for (let i = 0; i < n; i++) {
      const e = await buildEvent(victim.hs.services, { roomId, version: v, state, extremities: [prev], maxDepth: depth + i, lookup }, { type: "m.room.message", sender: h.user("mallory"), content: { msgtype: "m.text", body: `flood ${i}` } }, Date.now(), h);
      h.events.set(e.eventId, e.pdu);
      out.push(e);
      prev = e.eventId;
    }
    return out;
  };
  h.craft = async (roomId, draft, opts = {}) => {
    const s = victim.hs.services;
    const v = await h.version(roomId);
    const joined = h.joined.get(roomId);
    const room = (await loadRoom(s, roomId)) ?? { state: joined!.state, extremities: [joined!.tip] };
    const lookup = async (id: string) => h.events.get(id) ?? (await s.rooms.events.get(id))?.pdu;
    const prev = opts.prev ?? room.extremities;
    let maxDepth = 0;
    for (const id of prev) maxDepth = Math.max(maxDepth, (await lookup(id))?.depth ?? 0);
    const signer = opts.signer ?? h;
    // Auth events from the state after the first prev event (the victim's, when it has it), like an honest server.
    let authState = opts.authState;
    if (!authState && opts.prev?.[0]) {
      const at = await s.rooms.events.get(opts.prev[0]);
      if (at?.stateGroup != null) authState = await s.rooms.stateGroups.get(at.stateGroup);
    }
    const built = await buildEvent(s, { roomId, version: v, state: authState ?? room.state, extremities: prev, maxDepth, lookup }, draft, Date.now(), signer);
    const pdu = built.pdu;
    if (opts.auth || opts.depth !== undefined || opts.edit) {
      if (opts.auth) pdu.auth_events = v.eventIdFormat === "server-assigned" ? await references(opts.auth, v, lookup) : opts.auth;
      if (opts.depth !== undefined) pdu.depth = opts.depth;
      opts.edit?.(pdu);
      pdu.hashes = { sha256: "" };
      const resealed = sealEvent(pdu, v, signer);
      h.events.set(resealed.eventId, resealed.pdu);
      return resealed;
    }
    h.events.set(built.eventId, pdu);
    return built;
  };
  return h;
}

async function references(ids: string[], v: RoomVersion, lookup: (id: string) => Promise<Pdu | undefined>): Promise<Pdu["auth_events"]> {
  const out: [string, { sha256: string }][] = [];
  for (const id of ids) {
    const e = await lookup(id);
    out.push([id, { sha256: e ? referenceHash(e, v).toString("base64").replace(/=+$/, "") : "AAAA" }]);
  }
  return out as Pdu["auth_events"];
}

// ---- Deliberately broken events -------------------------------------------------------------------

/** The same event with its signature's bytes changed (still well-formed base64). */
export function withBadSignature(e: BuiltEvent, server: string): Pdu {
  const pdu = structuredClone(e.pdu);
  const sigs = pdu.signatures![server]!;
  const keyId = Object.keys(sigs)[0]!;
  const sig = sigs[keyId]!;
  sigs[keyId] = (sig[0] === "A" ? "B" : "A") + sig.slice(1);
  return pdu;
}

/** The same event with content changed after hashing and signing: its content hash no longer matches. */
export function withBadContentHash(e: BuiltEvent, content: Record<string, unknown>): Pdu {
  return { ...structuredClone(e.pdu), content };
}

// ---- The victim's room as a local member sees it --------------------------------------------------

export interface MemberView {
  /** Current state: "type|state_key" → the event (GET /rooms/{id}/state). */
  state: Map<string, { event_id: string; sender: string; content: Record<string, any> }>;
  /** The timeline's event ids, newest first (GET /messages?dir=b). */
  timeline: string[];
}

export async function memberView(t: FederatedServer, token: string, roomId: string): Promise<MemberView> {
  const st = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token });
  expect(st.status, JSON.stringify(st.json)).toBe(200);
  const state = new Map<string, any>();
  for (const e of st.json as any[]) state.set(stateKeyOf(e.type, e.state_key), e);
  const msgs = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=200`, { token });
  expect(msgs.status, JSON.stringify(msgs.json)).toBe(200);
  return { state, timeline: (msgs.json.chunk as any[]).map((e) => e.event_id) };
}

/** The member's power level in the current state as the client API shows it. */
export function powerOf(view: MemberView, userId: string): number {
  const pl = view.state.get(stateKeyOf("m.room.power_levels", ""))?.content ?? {};
  return pl.users?.[userId] ?? pl.users_default ?? 0;
}

export function membershipOf(view: MemberView, userId: string): string | undefined {
  return view.state.get(stateKeyOf("m.room.member", userId))?.content.membership;
}

/**
 * What a local member's live /sync shows until a sentinel message the member sends now arrives: every
 * event seen on the way (so an event not among them was not sent live).
 */
export async function liveUntilSentinel(t: FederatedServer, token: string, roomId: string): Promise<string[]> {
  const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/sentinel${Math.random()}`, { token, body: { msgtype: "m.text", body: "sentinel" } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  const seen = await syncUntil(t, token, roomId, (evs) => evs.some((e) => e.event_id === res.json.event_id));
  return seen.map((e) => e.event_id);
}

/** Event ids of the member's notifications (push rules' results, GET /notifications). */
export async function notifiedIds(t: FederatedServer, token: string): Promise<string[]> {
  const res = await t.call("GET", `${V3}/notifications?limit=100`, { token });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return (res.json.notifications as any[]).map((n) => n.event.event_id);
}

// ---- What the operator sees ------------------------------------------------------------------------

/** The refusal log lines (federation/refusals.ts) naming `eventId`. */
export function refusalLines(lines: Record<string, any>[], eventId: string): Record<string, any>[] {
  return lines.filter((l) => l.eventId === eventId && typeof l.rule === "string" && typeof l.origin === "string");
}

// ---- One victim and one attacker per test file -----------------------------------------------------

export interface HostileFixture {
  /** The victim Weft server (its log captured at info level). */
  a: FederatedServer;
  h: HostileServer;
  /** A local user of the victim. */
  alice: Session;
  /** mallory of the hostile server. */
  mallory: string;
  log: CapturedLog;
}

/**
 * Registers the file's beforeAll/afterAll: a Weft server on `backend` (with `config`), alice on it, and
 * a hostile server attacking it. Returns the fixture, filled in once beforeAll ran.
 */
export function hostileFixture(backend: Backend, config: Record<string, unknown> = {}): HostileFixture {
  const f = { log: capturedLog("info") } as HostileFixture;
  beforeAll(async () => {
    f.a = await startFederatedServer({ backend, log: f.log.logger, config });
    [f.h, f.alice] = await Promise.all([startHostileServer(f.a), registerUser(f.a, "alice")]);
    f.mallory = f.h.user("mallory");
  });
  afterAll(async () => {
    if (f.h) f.h.plan = () => "default";
    await Promise.all([f.a?.close(), f.h?.close()]);
  });
  return f;
}
