// The outbound fuzz of the services a homeserver calls besides other servers: a hostile application
// service (its answers to user and alias queries, and to the transactions pushed to it) and a hostile push
// gateway (its answers to notifications: rejected pushkeys of every shape, bodies of the wrong type or
// none, errors, cut or hanging connections), both played by one plain-HTTP hostile peer. Local users act
// (profile and alias lookups in the service's namespaces, joins through its aliases, messages that the
// service and the gateway are told about, pushers set again); every client answer must be a success
// matching the spec or an error with an errcode (502/504 for the service's own failure), and the server
// must log no error.
import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { startTestServer, type Backend, type TestServer } from "../helpers/server.ts";
import { json, startHostilePeer, type HostilePeer, type HostileRequest } from "../helpers/hostile-peer.ts";
import { capturedLog, type CapturedLog } from "../helpers/captured-log.ts";
import { writeRegistration } from "../helpers/appservice.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { Rng } from "./random.ts";
import { hostilePlan, type Templates } from "./hostile-answers.ts";
import type { FuzzFailure } from "./rest.ts";
import { checkAnswer } from "./outbound.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

export interface ServicesWorld {
  t: TestServer;
  peer: HostilePeer & { url: string };
  log: CapturedLog;
  alice: Session;
  bob: Session;
  room: string;
  n: number;
}

export async function startServicesWorld(backend: Backend): Promise<ServicesWorld> {
  const log = capturedLog();
  const peer = await startHostilePeer(() => json(200, {}), { tls: false });
  const file = writeRegistration({
    id: "hostile", url: peer.url, as_token: randomBytes(12).toString("hex"), hs_token: randomBytes(12).toString("hex"), sender_localpart: "hostilebot",
    namespaces: { users: [{ exclusive: true, regex: "@bridge_.*" }], aliases: [{ exclusive: true, regex: "#bridge_.*" }], rooms: [{ exclusive: false, regex: ".*" }] },
  });
  const t = await startTestServer({ backend, log: log.logger, config: { app_service_config_files: [file], app_service_request_timeout: "2s", ip_range_whitelist: ["127.0.0.1"] } });
  const alice = await registerUser(t, "alice");
  const bob = await registerUser(t, "bob");
  const room = await createRoom(t, alice, { preset: "public_chat" });
  expect((await t.call("POST", `${V3}/join/${enc(room)}`, { token: bob.access_token, body: {} })).status).toBe(200);
  return { t, peer, log, alice, bob, room, n: 0 };
}

const templates: Templates = (req: HostileRequest) => {
  if (req.path.endsWith("/notify")) {
    const pushkeys = (JSON.parse(req.body || "{}")?.notification?.devices ?? []).map((d: { pushkey?: unknown }) => d.pushkey);
    return { body: { rejected: pushkeys } };
  }
  if (req.path.includes("/transactions/")) return { body: {} };
  if (req.path.includes("/users/") || req.path.includes("/rooms/")) return { body: {} };
  return undefined;
};

async function call(w: ServicesWorld, who: Session, method: string, path: string, body?: unknown) {
  const res = await w.t.call(method, path, { token: who.access_token, body });
  return { status: res.status, json: res.json, text: JSON.stringify(res.json) ?? "" };
}

type Answer = Awaited<ReturnType<typeof call>>;


const pusher = (w: ServicesWorld, key: string) => ({
  pushkey: key, kind: "http", app_id: "org.example.hostile", app_display_name: "Hostile", device_display_name: "Phone", lang: "en",
  data: { url: `${w.peer.url}/_matrix/push/v1/notify` },
});

type Step = { method: string; path: string; res: Answer };
const ACTIONS: Record<string, (w: ServicesWorld, rng: Rng) => Promise<Step[]>> = {
  userQuery: async (w, rng) => {
    const path = `${V3}/profile/${enc(`@bridge_${rng.word()}:${w.t.hs.services.config.server_name}`)}`;
    return [{ method: "GET", path, res: await call(w, w.alice, "GET", path) }];
  },
  aliasQuery: async (w, rng) => {
    const alias = `#bridge_${rng.word()}:${w.t.hs.services.config.server_name}`;
    const get = `${V3}/directory/room/${enc(alias)}`;
    const join = `${V3}/join/${enc(alias)}`;
    return [
      { method: "GET", path: get, res: await call(w, w.alice, "GET", get) },
      { method: "POST", path: join, res: await call(w, w.alice, "POST", join, {}) },
    ];
  },
  message: async (w, rng) => {
    // alice's pusher (set again: a rejected pushkey removes it), then bob's message, which the service
    // (a transaction) and alice's gateway (a notification) hear of.
    const set = `${V3}/pushers/set`;
    const steps: Step[] = [{ method: "POST", path: set, res: await call(w, w.alice, "POST", set, pusher(w, rng.pick(["k1", "k2", "k\u0000"]))) }];
    const send = `${V3}/rooms/${enc(w.room)}/send/m.room.message/h${w.n++}`;
    steps.push({ method: "PUT", path: send, res: await call(w, w.bob, "PUT", send, { msgtype: "m.text", body: `hello alice ${rng.word()}` }) });
    const list = `${V3}/pushers`;
    steps.push({ method: "GET", path: list, res: await call(w, w.alice, "GET", list) });
    return steps;
  },
};

export async function fuzzServices(w: ServicesWorld, rng: Rng, samples: number): Promise<{ failures: FuzzFailure[]; statuses: Map<string, number>; reached: Map<string, number> }> {
  const failures: FuzzFailure[] = [];
  const statuses = new Map<string, number>();
  const reached = new Map<string, number>();
  const names = Object.keys(ACTIONS);
  for (let i = 0; i < samples; i++) {
    const name = names[i % names.length]!;
    const answerRng = new Rng((rng.next() * 2 ** 32) >>> 0);
    w.peer.answer = (req) => hostilePlan(answerRng, req, templates);
    const before = w.peer.requests.length;
    const steps = await ACTIONS[name]!(w, rng);
    for (const { method, path, res } of steps) {
      statuses.set(`${name} ${res.status}`, (statuses.get(`${name} ${res.status}`) ?? 0) + 1);
      for (const problem of checkAnswer(method, path, res)) failures.push({ sample: i, operation: name, request: `${method} ${path}`, how: "hostile service answers", problem });
    }
    for (const r of w.peer.requests.slice(before)) {
      const k = r.path.replace(/^(\/_matrix\/(?:app|push)\/v1\/[a-z]+).*$/, "$1");
      reached.set(k, (reached.get(k) ?? 0) + 1);
    }
    for (const l of w.log.problems()) failures.push({ sample: i, operation: name, request: "(server log)", how: "hostile service answers", problem: JSON.stringify(l).slice(0, 800) });
    w.log.lines.length = 0;
  }
  return { failures, statuses, reached };
}
