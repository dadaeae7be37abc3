// The federation fuzzer: drives every Server-Server API operation of the spec against a federating Weft
// server with generated bad inputs, each request signed (X-Matrix) by a fake origin server that serves its
// keys, so the fuzz reaches the handlers. The origin's user has joined the actor's room; the victim's rooms
// are rooms the origin is in none of, and stay protected (world.ts protectedSnapshot). A smaller sample of
// unsigned and wrongly signed requests must all answer 401 M_UNAUTHORIZED and change nothing.
import { request } from "undici";
import type { SpecOperation } from "../helpers/spec.ts";
import { insecureAgent } from "../helpers/server.ts";
import { startFederatedServer, signedBy, type FederatedServer } from "../helpers/federation.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { eventOnRoom, sendTransaction } from "../helpers/by-hand.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";
import type { Backend } from "../helpers/server.ts";
import type { Rng } from "./random.ts";
import { checkResponse, fuzzOperations, generateRequest, type FuzzFailure, type FuzzRequest } from "./rest.ts";
import { hostileValue, mutateJson, validValue, toJsonText, type Schema } from "./values.ts";
import { buildWorld, changedSnapshot, protectedSnapshot, worldSupply, type World } from "./world.ts";

export interface FederationWorld extends World {
  t: FederatedServer;
  origin: FakeOrigin;
  /** The origin's user, joined to the actor's room (rooms.own). */
  mallory: string;
  mallorysJoin: string;
}

const enc = encodeURIComponent;
const ROOM_VERSIONS = ["1", "6", "10", "11", "12", "999", ""];

/** A federating server (outbound sender off), its fuzz world, and a fake origin whose user joined rooms.own. */
export async function startFederationWorld(backend: Backend): Promise<FederationWorld> {
  const t = await startFederatedServer({ backend, config: { log_level: "fatal", send_federation: false } });
  const origin = await startFakeOrigin();
  const base = await buildWorld(t);
  const mallory = origin.user("mallory");
  const join = await eventOnRoom(t.hs.services, base.rooms.own, origin, { type: "m.room.member", stateKey: mallory, sender: mallory, content: { membership: "join" } });
  const sent = await sendTransaction(origin, t, [join.pdu]);
  if (sent.status !== 200 || JSON.stringify(sent.json.pdus?.[join.eventId]) !== "{}") throw new Error(`fuzz world: origin join refused: ${JSON.stringify(sent.json)}`);
  const w = Object.assign(base, { t, origin, mallory, mallorysJoin: join.eventId }) as FederationWorld;
  const originUsers = [mallory, origin.user("newcomer")];
  w.param = (name, rng) => {
    switch (name) {
      case "roomId":
        return rng.chance(0.5) ? w.rooms.own : undefined;
      case "eventId":
      case "event_id":
        return rng.chance(0.3) ? rng.pick([join.eventId, ...w.events.own]) : undefined;
      case "userId":
      case "user_id":
        return rng.chance(0.7) ? rng.pick(originUsers) : undefined;
      case "serverName":
        return rng.pick([w.serverName, origin.serverName, "other.example"]);
      case "queryType":
        return rng.pick(["profile", "directory", "nosuch"]);
      case "field":
        return rng.pick(["displayname", "avatar_url", "nosuch"]);
      case "room_alias":
        return rng.pick(w.aliases);
      case "v":
      case "ver":
        return rng.pick(ROOM_VERSIONS);
      case "mediaId":
        return rng.word();
      case "keyId":
        return rng.pick(["ed25519:a", `ed25519:${t.hs.services.signingKeys[0]!.version}`]);
      default:
        return undefined;
    }
  };
  w.supply = ({ name, format }) => {
    if (name === "origin") return origin.serverName;
    if (name === "sender" || format === "mx-user-id") return mallory;
    if (format === "mx-server-name") return origin.serverName;
    return undefined;
  };
  return w;
}

/** The request as generated (path, query and body hostile), signed by the origin for this server. */
export function signedRequest(op: SpecOperation, w: FederationWorld, rng: Rng): FuzzRequest {
  const req = generateRequest(op, w, rng);
  if (req.how.startsWith("auth")) req.how = "plain";
  let content: unknown;
  if (req.body !== undefined && req.body.length > 0) {
    try {
      content = JSON.parse(req.body.toString("utf8"));
    } catch {
      content = undefined; // not JSON: signed without content, the server refuses it either way
    }
  }
  try {
    req.headers.authorization = signedBy(w.origin.serverName, w.origin.key, w.serverName, { method: op.method as "PUT", path: req.path, body: content });
  } catch {
    // Content that cannot be signed (over-deep): sign the request without it.
    req.headers.authorization = signedBy(w.origin.serverName, w.origin.key, w.serverName, { method: op.method as "PUT", path: req.path });
  }
  return req;
}

/** Ways to get a request's authentication wrong; each yields the Authorization headers to send. */
const FORGERIES: { how: string; make: (w: FederationWorld, r: { method: string; path: string; body?: unknown }) => string[] }[] = [
  { how: "no Authorization", make: () => [] },
  { how: "a user's access token", make: (w) => [`Bearer ${w.actor.access_token}`] },
  { how: "signed with another key of the same id", make: (w, r) => [signedBy(w.origin.serverName, generateSigningKey(w.origin.key.version), w.serverName, sign(r))] },
  { how: "signed for another destination", make: (w, r) => [signedBy(w.origin.serverName, w.origin.key, "other.example", sign(r)).replace("destination=\"other.example\"", `destination="${w.serverName}"`)] },
  { how: "signed for another path", make: (w, r) => [signedBy(w.origin.serverName, w.origin.key, w.serverName, sign({ ...r, path: `${r.path}x` }))] },
  { how: "signed over another body", make: (w, r) => [signedBy(w.origin.serverName, w.origin.key, w.serverName, sign({ ...r, body: { forged: true } }))] },
  { how: "claims to be this server", make: (w, r) => [signedBy(w.serverName, w.origin.key, w.serverName, sign(r))] },
  { how: "claims an unreachable origin", make: (w, r) => [signedBy("127.0.0.1:1", w.origin.key, w.serverName, sign(r))] },
  { how: "malformed header", make: (w) => [`X-Matrix origin=${w.origin.serverName}`] },
  { how: "garbage header", make: () => ["X-Matrix garbage"] },
  { how: "bad signature text", make: (w, r) => [signedBy(w.origin.serverName, w.origin.key, w.serverName, sign(r)).replace(/sig="[^"]*"/, 'sig="!!notbase64"')] },
];

const sign = (r: { method: string; path: string; body?: unknown }) => ({ method: r.method as "PUT", path: r.path, body: r.body });

async function send(w: World, req: FuzzRequest, authorization?: string[]): Promise<{ status: number; contentType: string; text: string }> {
  const headers: [string, string][] = Object.entries(req.headers).filter(([k]) => authorization === undefined || k !== "authorization");
  for (const a of authorization ?? []) headers.push(["authorization", a]);
  const res = await request(w.t.baseUrl + req.path, { method: req.method as "GET", headers: headers.flat(), body: req.body, dispatcher: insecureAgent, headersTimeout: 60_000, bodyTimeout: 60_000 });
  return { status: res.statusCode, contentType: String(res.headers["content-type"] ?? ""), text: await res.body.text() };
}

async function unrecognized(w: FederationWorld, req: FuzzRequest, body: unknown): Promise<boolean> {
  const res = await send(w, req, [signedBy(w.origin.serverName, w.origin.key, w.serverName, sign({ method: req.method, path: req.path, body }))]);
  return res.status === 404 && res.text.includes('"M_UNRECOGNIZED"');
}

function describe(req: FuzzRequest): string {
  const body = req.body === undefined ? "" : ` body=${JSON.stringify(req.body.toString("utf8").slice(0, 300))}`;
  return `${req.method} ${req.path.slice(0, 300)}${body}`;
}

/** Whether a request names a server other than this one (a 502 may then be that server's failure). */
const namesAnotherServer = (w: FederationWorld, req: FuzzRequest) => {
  const text = `${req.path} ${req.body?.toString("utf8") ?? ""}`;
  return text.includes("other.example") || text.includes(w.origin.serverName) || text.includes(enc(w.origin.serverName));
};

/**
 * The protected data, plus every event of the shared room: the origin is in neither of the victim's rooms,
 * so nothing it sends may add an event (state or not) to them.
 */
async function federationSnapshot(w: FederationWorld): Promise<string> {
  // A refused PDU is kept as rejected (never state, never served, spec "Rejection"): only accepted events count.
  const shared = await w.t.hs.services.storage.sql.all(`SELECT event_id FROM events WHERE room_id = ? AND rejected_reason IS NULL ORDER BY stream_ordering`, [w.rooms.shared]);
  return `${await protectedSnapshot(w)}${JSON.stringify(shared)}`;
}

/** Sends `samples` signed, generated requests to operations of `ops`; returns the failures. */
export function fuzzFederation(w: FederationWorld, ops: SpecOperation[], rng: Rng, samples: number): Promise<{ failures: FuzzFailure[]; statuses: Map<number, number> }> {
  return fuzzOperations(w, ops, rng, samples, {
    generate: (op, _w, r) => signedRequest(op, w, r),
    send: (_w, req) => send(w, req),
    snapshot: () => federationSnapshot(w),
    check: (req, res) => (res.status === 502 && !namesAnotherServer(w, req) ? ["502 for a request that names no other server"] : []),
    revive: false,
  });
}

/**
 * Sends `samples` requests with a valid body to authenticated operations of `ops`, each without a signature
 * or with a forged one; every answer must be 401 M_UNAUTHORIZED, and nothing may change (own room included).
 */
export async function fuzzForgeries(w: FederationWorld, ops: SpecOperation[], rng: Rng, samples: number): Promise<{ failures: FuzzFailure[]; statuses: Map<number, number> }> {
  const failures: FuzzFailure[] = [];
  const statuses = new Map<number, number>();
  const authenticated = ops.filter((op) => op.authenticated);
  const snapshot = async () => `${await federationSnapshot(w)}${JSON.stringify(await w.t.hs.services.storage.sql.all(`SELECT event_id FROM events WHERE room_id = ? ORDER BY stream_ordering`, [w.rooms.own]))}`;
  let before = await snapshot();
  for (let i = 0; i < samples; i++) {
    const op = rng.pick(authenticated);
    const path = op.template.replace(/\{([^}]+)\}/g, (_m, n: string) => enc(w.param?.(n, rng) ?? (n === "txnId" ? `forged${++w.n}` : rng.word())));
    let body: unknown;
    if (op.body || ["POST", "PUT"].includes(op.method)) body = op.body?.example !== undefined ? structuredClone(op.body.example) : validValue((op.body?.schema ?? { type: "object" }) as Schema, rng, worldSupply(w, rng));
    const forgery = rng.pick(FORGERIES);
    const req: FuzzRequest = { method: op.method, path, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : Buffer.from(toJsonText(body)), how: forgery.how };
    const problems: string[] = [];
    try {
      const res = await send(w, req, forgery.make(w, { method: op.method, path, body }));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      let errcode: unknown;
      try {
        errcode = (JSON.parse(res.text) as { errcode?: unknown }).errcode;
      } catch {
        errcode = undefined;
      }
      // A header that does not parse is a bad request, as Synapse answers it (400 M_UNAUTHORIZED).
      const malformed = forgery.how.endsWith("header") && res.status === 400;
      const refused = (res.status === 401 || malformed) && errcode === "M_UNAUTHORIZED";
      // A route Weft does not serve is unrecognized before anything is authenticated: checked by sending
      // the same request properly signed, which must be unrecognized too.
      const unserved = res.status === 404 && errcode === "M_UNRECOGNIZED" && (await unrecognized(w, req, body));
      if (!refused && !unserved) problems.push(`answered ${res.status} ${res.text.slice(0, 300)}`);
    } catch (err) {
      problems.push(`request failed: ${(err as Error).message}`);
    }
    const after = await snapshot();
    if (after !== before) problems.push(changedSnapshot(before, after));
    before = after;
    for (const problem of problems) failures.push({ sample: i, operation: op.operationId ?? `${op.method} ${op.template}`, request: describe(req), how: req.how, problem });
  }
  return { failures, statuses };
}

/** Arrays nested `levels` deep, built without recursion. */
function nested(levels: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}

/** Hostile event content: real deep nesting (around the bound and far past it), or hostile values. */
function hostileContent(rng: Rng): Record<string, unknown> {
  const base: Record<string, unknown> = { msgtype: "m.text", body: "hostile" };
  switch (rng.int(4)) {
    case 0:
      base.deep = nested(rng.pick([90, 99, 100, 101, 104, 110, 400, 2_900]));
      return base;
    case 1: {
      const v = hostileValue(rng);
      base[rng.pick(["body", "msgtype", "format", "x", "m.relates_to", "url", "info"])] = typeof v === "string" && v.startsWith("@@deep:") ? nested(Number(v.slice(7, -2))) : v;
      return base;
    }
    case 2:
      return JSON.parse(toJsonText(mutateJson(base, rng).value)) as Record<string, unknown>;
    default:
      base[rng.pick(["\u0000", "a\u0000b", "\ud800", "__proto__", "constructor", "x".repeat(300)])] = rng.pick(["\u0000", 2 ** 53 + 2, -(2 ** 63), 1.5, null]);
      return base;
  }
}

/**
 * Sends `samples` events signed by the origin, built on the actor's room as it is, with hostile content (and
 * now and then as state), each in its own transaction; after each, the room must still be served: the
 * event and the room's history over the client API (to the actor) and over federation (to the origin).
 * Every answer keeps the rules of checkResponse; the protected data stays unchanged.
 */
export async function fuzzPdus(w: FederationWorld, rng: Rng, samples: number): Promise<{ failures: FuzzFailure[]; accepted: number; refused: number }> {
  const failures: FuzzFailure[] = [];
  let accepted = 0;
  let refused = 0;
  let before = await federationSnapshot(w);
  for (let i = 0; i < samples; i++) {
    // Now and then aimed at a room the origin is in none of (a join to the invite-only one, too; the shared
    // room is public, where a join would be legitimate): refused, and the snapshot shows nothing changed.
    const target = rng.chance(0.2) ? rng.pick([w.rooms.shared, w.rooms.victimPrivate]) : w.rooms.own;
    const joinAttempt = target === w.rooms.victimPrivate && rng.chance(0.4);
    const content = joinAttempt ? { membership: "join" } : hostileContent(rng);
    const type = joinAttempt ? "m.room.member" : rng.pick(["m.room.message", "m.room.message", "org.example.custom", "m.room.topic", "m.room.name"]);
    const state = joinAttempt || (type !== "m.room.message" && rng.chance(0.5));
    const room = enc(target);
    let built: { eventId: string; pdu: unknown };
    try {
      built = await eventOnRoom(w.t.hs.services, target, w.origin, { type, ...(state ? { stateKey: joinAttempt ? w.mallory : "" } : {}), sender: w.mallory, content });
    } catch {
      continue; // content this test's own signing refuses (too deep to hash): nothing to send
    }
    const how = `PDU ${type}${state ? " (state)" : ""} ${JSON.stringify(content).slice(0, 120)}`;
    const probes: FuzzRequest[] = [];
    const txn: FuzzRequest = { method: "PUT", path: `/_matrix/federation/v1/send/pdu${++w.n}`, headers: { "content-type": "application/json" }, how };
    const txnBody = { origin: w.origin.serverName, origin_server_ts: Date.now(), pdus: [built.pdu] };
    try {
      txn.body = Buffer.from(JSON.stringify(txnBody));
      txn.headers.authorization = signedBy(w.origin.serverName, w.origin.key, w.serverName, { method: "PUT", path: txn.path, body: txnBody });
    } catch {
      continue;
    }
    probes.push(txn);
    const ev = enc(built.eventId);
    const client = (path: string): FuzzRequest => ({ method: "GET", path, headers: { authorization: `Bearer ${w.actor.access_token}` }, how });
    const fed = (path: string): FuzzRequest => ({ method: "GET", path, headers: { authorization: signedBy(w.origin.serverName, w.origin.key, w.serverName, { method: "GET", path }) }, how });
    probes.push(
      client(`/_matrix/client/v3/rooms/${room}/event/${ev}`),
      client(`/_matrix/client/v3/rooms/${room}/context/${ev}?limit=3`),
      client(`/_matrix/client/v3/rooms/${room}/messages?dir=b&limit=5`),
      client(`/_matrix/client/v3/rooms/${room}/state`),
      fed(`/_matrix/federation/v1/event/${ev}`),
      fed(`/_matrix/federation/v1/backfill/${room}?v=${ev}&limit=3`),
      fed(`/_matrix/federation/v1/state_ids/${room}?event_id=${ev}`),
    );
    for (const req of probes) {
      let problems: string[];
      try {
        const res = await send(w, req);
        problems = checkResponse(req, res);
        if (req === txn && res.status === 200) {
          const result = (JSON.parse(res.text) as { pdus?: Record<string, { error?: string }> }).pdus?.[built.eventId];
          if (result && result.error === undefined) accepted++;
          else refused++;
        }
      } catch (err) {
        problems = [`request failed: ${(err as Error).message}`];
      }
      for (const problem of problems) failures.push({ sample: i, operation: req.path.split("?")[0]!.replace(/\/[^/]*%[^/]*$/, "/…"), request: describe(req), how, problem });
    }
    const after = await federationSnapshot(w);
    if (after !== before) failures.push({ sample: i, operation: "PDU", request: how, how, problem: changedSnapshot(before, after) });
    before = after;
  }
  return { failures, accepted, refused };
}
