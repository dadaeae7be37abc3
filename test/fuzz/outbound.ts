// The outbound fuzz world and driver: a Weft server whose every outbound federation request goes to a
// hostile server H (its notary too), and a local user who makes Weft reach out — remote profiles and
// aliases, joins (make_join/send_join), invites, rejecting a remote invite (make_leave/send_leave),
// E2EE key queries and claims, remote room directories, remote media — while H answers each request
// with a generated hostile answer (hostile-answers.ts). Also: H's user in a local room sends events whose
// past Weft must fetch from H (get_missing_events, state_ids, state, event, event_auth), and servers with
// hostile key documents sign requests to Weft. Each client answer must be a success matching the spec,
// a client error with an errcode, or 502/504 with an errcode (Synapse's statuses for a failed remote);
// never another 5xx. Storage stays consistent: no membership, invite or media row half-made.
import { Agent, request } from "undici";
import { expect } from "vitest";
import type { Backend } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { json, startHostilePeer, type HostilePeer, type HostileRequest } from "../helpers/hostile-peer.ts";
import { capturedLog, type CapturedLog } from "../helpers/captured-log.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { joinAsRemote } from "../helpers/federation-peer.ts";
import { expectMatchesSpec, findOperation } from "../helpers/spec.ts";
import { buildEvent, sealEvent } from "../../src/domain/rooms/build-event.ts";
import { getRoomVersion } from "../../src/domain/rooms/room-versions.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import type { Pdu } from "../../src/domain/events/types.ts";
import { Rng } from "./random.ts";
import { hostileMediaPlan, hostilePlan, type Templates } from "./hostile-answers.ts";
import type { FuzzFailure } from "./rest.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
/** How long a client waits for Weft (Weft's own remote timeouts are Synapse's 30–60 s: a hang is cut short here). */
const CLIENT_DEADLINE_MS = 5_000;

export interface OutboundWorld {
  t: FederatedServer;
  h: HostilePeer;
  log: CapturedLog;
  alice: Session;
  /** A public room of alice's that H's user joined. */
  shared: string;
  hUser: string;
  n: number;
}

export async function startOutboundWorld(backend: Backend): Promise<OutboundWorld> {
  const log = capturedLog();
  const h = await startHostilePeer(() => json(404, { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" }));
  const t = await startFederatedServer({ backend, log: log.logger, config: { max_upload_size: "1M", trusted_key_servers: [{ server_name: h.serverName, verify_keys: notaryKeys(h) }] } });
  const alice = await registerUser(t, "alice");
  const shared = await createRoom(t, alice, { preset: "public_chat", room_version: "10", name: "shared" });
  const hUser = `@mallory:${h.serverName}`;
  // H's user joins honestly (its key document is honest for now), so events from H in the room are checked.
  await joinAsRemote(t, { serverName: h.serverName, key: h.key }, shared, hUser);
  return { t, h, log, alice, shared, hUser, n: 0 };
}

/** H's verify keys as the trusted_key_servers option takes them (H is the notary too). */
function notaryKeys(h: HostilePeer): Record<string, string> {
  const doc = h.keyDocument() as { verify_keys: Record<string, { key: string }> };
  return Object.fromEntries(Object.entries(doc.verify_keys).map(([id, v]) => [id, v.key]));
}

export interface ClientAnswer {
  status: number;
  json: unknown;
  text: string;
  gaveUp?: boolean;
}

async function call(w: OutboundWorld, method: string, path: string, body?: unknown, token = w.alice.access_token): Promise<ClientAnswer> {
  try {
    const res = await request(w.t.baseUrl + path, {
      method: method as "GET",
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: insecure(),
      signal: AbortSignal.timeout(CLIENT_DEADLINE_MS),
    });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, json: parsed, text };
  } catch (err) {
    if ((err as Error).name === "TimeoutError" || (err as Error).name === "AbortError") return { status: 0, json: undefined, text: "", gaveUp: true };
    throw err;
  }
}

let agent: Agent | undefined;
function insecure(): Agent {
  agent ??= new Agent({ connect: { rejectUnauthorized: false } });
  return agent;
}

/** The rules a client answer breaks, when the failure may be a remote server's (or service's). */
export function checkAnswer(method: string, path: string, res: ClientAnswer): string[] {
  if (res.gaveUp) return [];
  const problems: string[] = [];
  const body = res.json as { errcode?: unknown } | undefined;
  const errcode = typeof body?.errcode === "string" && /^M_[A-Z0-9_]+$/.test(body.errcode);
  if (res.status >= 500 && res.status !== 502 && res.status !== 504) problems.push(`status ${res.status}: ${res.text.slice(0, 300)}`);
  if (res.status >= 400 && !errcode) problems.push(`error body without errcode: ${res.text.slice(0, 300)}`);
  const p = path.split("?")[0]!;
  if (res.status === 200 && res.json !== undefined && findOperation(method, p)) {
    try {
      expectMatchesSpec({ status: res.status, json: res.json }, method, p);
    } catch (err) {
      problems.push((err as Error).message.slice(0, 1500));
    }
  }
  return problems;
}

/** Plausible answers of H to the requests Weft makes, before the fuzz changes them. */
function templates(w: OutboundWorld): Templates {
  const H = w.h.serverName;
  const now = Date.now();
  const pdu = (roomId: string, extra: Record<string, unknown> = {}) => ({
    type: "m.room.message", room_id: roomId, sender: w.hUser, content: { body: "hi", msgtype: "m.text" }, origin_server_ts: now, depth: 7,
    prev_events: ["$prevprevprevprevprevprevprevprevprevprevpre"], auth_events: ["$authauthauthauthauthauthauthauthauthauthaut"],
    hashes: { sha256: "aGFzaA" }, signatures: { [H]: { "ed25519:a": "c2ln" } }, origin: H, ...extra,
  });
  return (req: HostileRequest) => {
    const path = decodeURIComponent(req.path);
    const room = /\/(?:make_join|make_leave|send_join|send_leave|invite|state|state_ids|backfill|get_missing_events|event_auth)\/([^/]+)/.exec(path)?.[1] ?? w.shared;
    const user = req.query.get("user_id") ?? /\/make_(?:join|leave)\/[^/]+\/([^/]+)/.exec(path)?.[1] ?? w.alice.user_id;
    if (path.includes("/make_join/") || path.includes("/make_leave/"))
      return { body: { room_version: "10", event: { type: "m.room.member", room_id: room, sender: user, state_key: user, content: { membership: path.includes("join") ? "join" : "leave" }, origin: H, origin_server_ts: now, depth: 4, prev_events: ["$p"], auth_events: ["$a", "$b"] } } };
    if (path.includes("/send_join/")) return { body: { origin: H, state: [pdu(room, { type: "m.room.create", state_key: "", content: { room_version: "10", creator: w.hUser } })], auth_chain: [pdu(room)], event: pdu(room), members_omitted: false } };
    if (path.includes("/send_leave/")) return { body: {} };
    if (path.includes("/invite/")) return { body: { event: { ...JSON.parse(req.body || "{}").event, signatures: { [H]: { "ed25519:a": "c2ln" } } } } };
    if (path.includes("/query/profile")) return { body: { displayname: "Mallory", avatar_url: `mxc://${H}/abc` } };
    if (path.includes("/query/directory")) return { body: { room_id: `!room:${H}`, servers: [H] } };
    if (path.includes("/publicRooms")) return { body: { chunk: [{ room_id: `!room:${H}`, num_joined_members: 3, world_readable: true, guest_can_join: false, name: "Hostile", canonical_alias: `#h:${H}`, join_rule: "public" }], total_room_count_estimate: 1, next_batch: "n" } };
    if (path.includes("/user/keys/query")) return { body: { device_keys: { [w.hUser]: { DEV: { user_id: w.hUser, device_id: "DEV", algorithms: ["m.olm.v1.curve25519-aes-sha2"], keys: { "ed25519:DEV": "a", "curve25519:DEV": "b" }, signatures: { [w.hUser]: { "ed25519:DEV": "c" } } } } }, master_keys: { [w.hUser]: { user_id: w.hUser, usage: ["master"], keys: { "ed25519:m": "m" } } } } };
    if (path.includes("/user/keys/claim")) return { body: { one_time_keys: { [w.hUser]: { DEV: { "signed_curve25519:AAAA": { key: "k", signatures: { [w.hUser]: { "ed25519:DEV": "s" } } } } } } } };
    if (path.includes("/user/devices/")) return { body: { user_id: w.hUser, stream_id: 5, devices: [{ device_id: "DEV", keys: { user_id: w.hUser, device_id: "DEV", algorithms: [], keys: {}, signatures: {} } }] } };
    if (path.includes("/get_missing_events/")) return { body: { events: [pdu(room), pdu("!another:room.example")] } };
    if (path.includes("/state_ids/")) return { body: { pdu_ids: ["$x"], auth_chain_ids: ["$y"] } };
    if (path.includes("/state/")) return { body: { pdus: [pdu(room)], auth_chain: [pdu("!another:room.example")] } };
    if (path.includes("/event_auth/")) return { body: { auth_chain: [pdu(room)] } };
    if (path.includes("/backfill/")) return { body: { origin: H, origin_server_ts: now, pdus: [pdu(room)] } };
    if (path.includes("/event/")) return { body: { origin: H, origin_server_ts: now, pdus: [pdu(room)] } };
    if (path.startsWith("/_matrix/key/v2/query")) return { body: { server_keys: [w.h.keyDocument()] } };
    return undefined;
  };
}

/** One client action that makes Weft reach H; returns the checked requests it made. */
type Action = (w: OutboundWorld, rng: Rng) => Promise<{ method: string; path: string; res: ClientAnswer }[]>;

const single = (method: string, path: (w: OutboundWorld, rng: Rng) => string, body?: (w: OutboundWorld, rng: Rng) => unknown): Action => async (w, rng) => {
  const p = path(w, rng);
  return [{ method, path: p, res: await call(w, method, p, body?.(w, rng)) }];
};

const remoteUser = (w: OutboundWorld, rng: Rng) => `@${rng.word()}:${w.h.serverName}`;

export const ACTIONS: Record<string, Action> = {
  profile: single("GET", (w, rng) => `${V3}/profile/${enc(remoteUser(w, rng))}${rng.pick(["", "/displayname", "/avatar_url"])}`),
  alias: single("GET", (w, rng) => `${V3}/directory/room/${enc(`#${rng.word()}:${w.h.serverName}`)}`),
  joinRoom: single("POST", (w, rng) => `${V3}/join/${enc(`!${rng.word()}:${w.h.serverName}`)}?server_name=${enc(w.h.serverName)}`, () => ({})),
  joinAlias: single("POST", (w, rng) => `${V3}/join/${enc(`#${rng.word()}:${w.h.serverName}`)}`, () => ({})),
  invite: async (w, rng) => {
    const room = await createRoom(w.t, w.alice, { preset: "private_chat", room_version: "10" });
    const invitee = remoteUser(w, rng);
    const path = `${V3}/rooms/${enc(room)}/invite`;
    const res = await call(w, "POST", path, { user_id: invitee });
    // An invite the invitee's server did not countersign is not stored as made.
    if (!res.gaveUp && res.status !== 200) {
      const state = await call(w, "GET", `${V3}/rooms/${enc(room)}/state/m.room.member/${enc(invitee)}`);
      if (state.status === 200) return [{ method: "POST", path, res: { status: 599, json: undefined, text: `invite answered ${res.status} but stored: ${state.text}` } }];
    }
    return [{ method: "POST", path, res }];
  },
  rejectInvite: async (w, rng) => {
    const roomId = await inviteFromH(w, rng);
    if (!roomId) return [];
    const path = `${V3}/rooms/${enc(roomId)}/leave`;
    return [{ method: "POST", path, res: await call(w, "POST", path, {}) }];
  },
  keysQuery: single("POST", () => `${V3}/keys/query`, (w, rng) => ({ device_keys: { [rng.chance(0.5) ? w.hUser : remoteUser(w, rng)]: [] }, timeout: 2_000 })),
  keysClaim: single("POST", () => `${V3}/keys/claim`, (w, rng) => ({ one_time_keys: { [rng.chance(0.5) ? w.hUser : remoteUser(w, rng)]: { DEV: "signed_curve25519" } }, timeout: 2_000 })),
  publicRooms: single("GET", (w) => `${V3}/publicRooms?server=${enc(w.h.serverName)}&limit=5`),
  publicRoomsPost: single("POST", (w) => `${V3}/publicRooms?server=${enc(w.h.serverName)}`, (_w, rng) => ({ limit: 5, filter: { generic_search_term: rng.word() } })),
  media: single("GET", (w, rng) => `/_matrix/client/v1/media/${rng.pick(["download", "thumbnail"])}/${w.h.serverName}/${rng.word(8, 20)}${rng.chance(0.5) ? "?width=32&height=32" : "?width=32&height=32&timeout_ms=3000"}`),
  ingest: async (w, rng) => {
    await eventFromH(w, rng);
    // The shared room still serves its history, state and sync to the local member.
    const out = [];
    for (const p of [`${V3}/rooms/${enc(w.shared)}/messages?dir=b&limit=20`, `${V3}/rooms/${enc(w.shared)}/state`, `${V3}/sync?timeout=0`]) out.push({ method: "GET", path: p, res: await call(w, "GET", p) });
    return out;
  },
  hostileKeys: async (w, rng) => {
    // A server whose key document (and H as its notary) answers hostile signs a request to Weft.
    const k = await startHostilePeer();
    k.keys = (req) => hostilePlan(rng, req, () => ({ body: k.keyDocument() }));
    try {
      const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?user_id=${enc(w.alice.user_id)}` };
      const res = await federationCall(w.t.baseUrl, { ...r, authorization: signedBy(k.serverName, k.key, w.t.serverName, r) });
      return [{ method: "GET", path: r.path, res: { status: res.status, json: res.json, text: JSON.stringify(res.json) ?? "" } }];
    } finally {
      await k.close();
    }
  },
};

/** H invites alice to a room of H's (signed honestly: the invite must arrive), for her to reject. */
async function inviteFromH(w: OutboundWorld, rng: Rng): Promise<string | undefined> {
  const H = w.h.serverName;
  const roomId = `!${rng.word(10, 14)}:${H}`;
  const v = getRoomVersion("10")!;
  const pdu = {
    type: "m.room.member", room_id: roomId, sender: w.hUser, state_key: w.alice.user_id, content: { membership: "invite" },
    origin: H, origin_server_ts: Date.now(), depth: 3, prev_events: ["$" + rng.word(20, 30)], auth_events: ["$" + rng.word(20, 30)], hashes: { sha256: "" }, signatures: {},
  } as unknown as Pdu;
  const built = sealEvent(pdu, v, { serverName: H, key: w.h.key });
  const path = `/_matrix/federation/v2/invite/${enc(roomId)}/${enc(built.eventId)}`;
  const body = { event: built.pdu, room_version: "10", invite_room_state: [{ type: "m.room.name", state_key: "", sender: w.hUser, content: { name: "trap" } }] };
  const honestKeys = w.h.keys;
  w.h.keys = undefined;
  const res = await federationCall(w.t.baseUrl, { method: "PUT", path, body, authorization: signedBy(H, w.h.key, w.t.serverName, { method: "PUT", path, body }) });
  w.h.keys = honestKeys;
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return roomId;
}

/** H's user sends an event into the shared room on a past Weft lacks: Weft asks H for it. */
async function eventFromH(w: OutboundWorld, rng: Rng): Promise<void> {
  const s = w.t.hs.services;
  const room = (await loadRoom(s, w.shared))!;
  const missing = `$${rng.word(43, 43)}`;
  const built = await buildEvent(s, { roomId: w.shared, version: room.version, state: room.state, extremities: rng.chance(0.7) ? [missing] : [missing, ...room.extremities], maxDepth: room.maxDepth + 1 }, { type: "m.room.message", sender: w.hUser, content: { body: `from H ${w.n}`, msgtype: "m.text" } }, Date.now(), { serverName: w.h.serverName, key: w.h.key });
  const path = `/_matrix/federation/v1/send/hostile${w.n++}`;
  // And now and then a device list update whose predecessor Weft never saw: it resyncs the list from H.
  // (A deletion: it carries no keys, which H could not sign with a device key anyway.)
  // The first ingest always carries one: the suite asserts that H was asked for user/devices, which a coin
  // for each of the ~7 ingests left to chance (seed 3090062686 drew no update at all, a failure of the oracle).
  const withUpdate = rng.chance(0.5) || w.n === 1;
  const edus = withUpdate
    ? [{ edu_type: "m.device_list_update", content: { user_id: w.hUser, device_id: `D${w.n}`, stream_id: 1000 + w.n, prev_id: [500 + w.n], deleted: true } }]
    : [];
  const body = { origin: w.h.serverName, origin_server_ts: Date.now(), pdus: [built.pdu], edus };
  await federationCall(w.t.baseUrl, { method: "PUT", path, body, authorization: signedBy(w.h.serverName, w.h.key, w.t.serverName, { method: "PUT", path, body }) }).catch(() => undefined);
}

export interface OutboundResult {
  failures: FuzzFailure[];
  statuses: Map<number, number>;
  /** H's endpoints Weft asked, by path shape. */
  reached: Map<string, number>;
  /** Client answers by action and status ("invite 502"). */
  byAction: Map<string, number>;
  gaveUp: number;
}

/** A request's endpoint without its ids: /_matrix/federation/v1/query/profile, …/media/download. */
function shape(path: string): string {
  const segs = path.split("/");
  const out: string[] = [];
  for (const seg of segs) {
    if (out.length >= (segs[4] === "media" ? 6 : 7) || (out.length > 3 && !/^[A-Za-z_0-9]+$/.test(seg))) break;
    out.push(seg);
  }
  return out.join("/");
}

export async function fuzzOutbound(w: OutboundWorld, rng: Rng, samples: number): Promise<OutboundResult> {
  const failures: FuzzFailure[] = [];
  const statuses = new Map<number, number>();
  const reached = new Map<string, number>();
  const byAction = new Map<string, number>();
  let gaveUp = 0;
  const names = Object.keys(ACTIONS);
  const tpl = templates(w);
  for (let i = 0; i < samples; i++) {
    const name = names[i % names.length]!;
    const answerRng = new Rng((rng.next() * 2 ** 32) >>> 0);
    w.h.answer = (req) => (req.path.includes("/media/") ? hostileMediaPlan(answerRng) : hostilePlan(answerRng, req, tpl));
    // Now and then H's own key document is hostile too (for keys not yet cached, and re-fetches).
    w.h.keys = rng.chance(0.1) ? (req) => hostilePlan(answerRng, req, () => ({ body: w.h.keyDocument() })) : undefined;
    const before = w.h.requests.length;
    const results = await ACTIONS[name]!(w, rng);
    for (const r of w.h.requests.slice(before)) reached.set(shape(r.path), (reached.get(shape(r.path)) ?? 0) + 1);
    for (const { method, path, res } of results) {
      const key = `${name} ${res.gaveUp ? "gave-up" : res.status}`;
      byAction.set(key, (byAction.get(key) ?? 0) + 1);
      if (res.gaveUp) gaveUp++;
      else statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const problems = checkAnswer(method, path, res);
      for (const problem of problems) failures.push({ sample: i, operation: name, request: `${method} ${path}`, how: "hostile answers", problem });
    }
    // An error the server logged (an unhandled error, a Fastify FST_ERR) is a failure of this sample.
    const logged = w.log.problems();
    if (logged.length > 0) {
      for (const l of logged) failures.push({ sample: i, operation: name, request: "(server log)", how: "hostile answers", problem: JSON.stringify(l).slice(0, 800) });
      w.log.lines.length = 0;
    }
  }
  w.h.keys = undefined;
  return { failures, statuses, reached, byAction, gaveUp };
}
