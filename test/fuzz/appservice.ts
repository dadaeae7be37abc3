// The application-service fuzzer: client-server operations sent as a registered application service (its
// as_token), with identity assertion (`user_id`, `device_id`) aimed inside and outside its namespace and
// made hostile, weighted toward the endpoints only services use (ping, the appservice room directory,
// registration and login of namespace users). The service must never act as anyone outside its namespace:
// the victim's data and rooms stay unchanged (world.ts protectedSnapshot).
import { request } from "undici";
import { startTestServer, type Backend } from "../helpers/server.ts";
import { findOperation, type SpecOperation } from "../helpers/spec.ts";
import { RecordingAppService, writeRegistration } from "../helpers/appservice.ts";
import type { Rng } from "./random.ts";
import { checkResponse, generateRequest, type FuzzFailure, type FuzzRequest } from "./rest.ts";
import { hostileQueryValue } from "./values.ts";
import { buildWorld, changedSnapshot, protectedSnapshot, reviveActor, type World } from "./world.ts";

export const AS_TOKEN = "fuzz-bridge-as-token";

export interface AppServiceWorld extends World {
  service: RecordingAppService;
}

/** A server with one registered service (exclusive `@bridge_…` users and `#bridge_…` aliases) and the fuzz world. */
/**
 * Whether a request names a server other than this one, so that a 502 may be that server's failure: the
 * test's other.example anywhere, or a media path whose server name is not ours (a generated one such as
 * "-1" is a valid server name by the spec's grammar, and Weft then tries to fetch from it).
 */
function namesAnotherServer(w: World, req: FuzzRequest): boolean {
  const text = `${req.path} ${req.body?.toString("utf8") ?? ""}`;
  // A request body naming an identity server (3PID bind/unbind/requestToken) names another server too.
  if (text.includes("other.example") || text.includes('"id_server"')) return true;
  // A query parameter naming a server to ask (/publicRooms?server=, /join?server_name= or via=): any value
  // other than this server's name is another server ("true" and "-1" are valid names by the grammar).
  const query = new URLSearchParams(req.path.split("?")[1] ?? "");
  for (const key of ["server", "server_name", "via"]) if (query.getAll(key).some((v) => v !== w.serverName)) return true;
  const media = /\/media\/(?:v3\/)?(?:download|thumbnail)\/([^/?]+)/.exec(req.path);
  if (!media) return false;
  try {
    return decodeURIComponent(media[1]!) !== w.serverName;
  } catch {
    return false;
  }
}

export async function startAppServiceWorld(backend: Backend): Promise<AppServiceWorld> {
  const service = await new RecordingAppService("fuzz-bridge-hs-token").start();
  const file = writeRegistration(service.registration({
    id: "fuzzbridge",
    as_token: AS_TOKEN,
    sender_localpart: "bridgebot",
    namespaces: { users: [{ exclusive: true, regex: "@bridge_.*" }], aliases: [{ exclusive: true, regex: "#bridge_.*" }], rooms: [{ exclusive: false, regex: ".*" }] },
    protocols: ["irc"],
    rate_limited: false,
  }));
  const t = await startTestServer({ backend, config: { log_level: "fatal", app_service_config_files: [file], app_service_request_timeout: "2s" } });
  const w = Object.assign(await buildWorld(t), { service }) as AppServiceWorld;
  // The service's sender and namespace users may join the public shared room like anyone.
  w.alsoActs = (userId) => userId === `@bridgebot:${w.serverName}` || /^@bridge_/.test(userId);
  w.param = (name, rng) => {
    switch (name) {
      case "appserviceId":
        return rng.pick(["fuzzbridge", "fuzzbridge", "other", ""]);
      case "networkId":
        return rng.pick(["irc", "irc.example", rng.word()]);
      case "roomAlias":
        return rng.chance(0.5) ? `#bridge_${rng.word()}:${w.serverName}` : undefined;
      case "username":
        return rng.chance(0.7) ? `bridge_${rng.word()}` : undefined;
      default:
        return undefined;
    }
  };
  return w;
}

const SERVICE_ONLY = (op: SpecOperation) => /appservice|\/register$|\/login$/.test(op.template);

/** Identity assertion: whom the service claims to act as (the victim and the actor must be refused). */
function assertion(w: AppServiceWorld, rng: Rng): { query: string; how: string } {
  const local = (l: string) => `@${l}:${w.serverName}`;
  const choice = rng.int(7);
  if (choice === 0) return { query: "", how: "as the sender" };
  if (choice === 1) {
    const v = hostileQueryValue({ type: "string" }, rng);
    return { query: `user_id=${v}`, how: `user_id=${v.slice(0, 40)}` };
  }
  const who = rng.pick([w.victim.user_id, w.actor.user_id, local(`bridge_${rng.word()}`), local("bridge_fixed"), local("bridgebot"), "@bridge_x:other.example"]);
  const device = rng.chance(0.2) ? `&device_id=${rng.pick(["BRIDGEDEV", w.victim.device_id, "%00"])}` : "";
  return { query: `user_id=${encodeURIComponent(who)}${device}`, how: `as ${who}${device}` };
}

async function send(w: World, req: FuzzRequest): Promise<{ status: number; contentType: string; text: string }> {
  const res = await request(w.t.baseUrl + req.path, { method: req.method as "GET", headers: req.headers, body: req.body, headersTimeout: 60_000, bodyTimeout: 60_000 });
  return { status: res.statusCode, contentType: String(res.headers["content-type"] ?? ""), text: await res.body.text() };
}

/** Sends `samples` generated requests as the service; returns the failures. */
export async function fuzzAppService(w: AppServiceWorld, ops: SpecOperation[], rng: Rng, samples: number): Promise<{ failures: FuzzFailure[]; statuses: Map<number, number> }> {
  const failures: FuzzFailure[] = [];
  const statuses = new Map<number, number>();
  const serviceOnly = ops.filter(SERVICE_ONLY);
  let before = await protectedSnapshot(w);
  for (let i = 0; i < samples; i++) {
    const op = rng.chance(0.35) ? rng.pick(serviceOnly) : rng.pick(ops);
    const req = generateRequest(op, w, rng);
    if (!req.how.startsWith("auth")) req.headers.authorization = `Bearer ${AS_TOKEN}`;
    const who = assertion(w, rng);
    if (who.query) req.path += `${req.path.includes("?") ? "&" : "?"}${who.query}`;
    if (/\/(register|login)$/.test(op.template) && req.body && rng.chance(0.6)) {
      const body = op.template.endsWith("register") ? { type: "m.login.application_service", username: rng.pick([`bridge_${rng.word()}`, w.victim.user_id.slice(1).split(":")[0], "bridge_\u0000", ""]) } : { type: "m.login.application_service", identifier: { type: "m.id.user", user: rng.pick([`bridge_${rng.word()}`, w.victim.user_id, w.actor.user_id]) } };
      req.body = Buffer.from(JSON.stringify(body));
      req.headers["content-type"] = "application/json";
    }
    req.how = `${req.how}; ${who.how}`;
    const name = op.operationId ?? `${op.method} ${op.template}`;
    let problems: string[];
    try {
      const res = await send(w, req);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      problems = findOperation(req.method, req.path.split("?")[0]!) ? checkResponse(req, res) : [];
      if (res.status === 502 && !namesAnotherServer(w, req)) problems.push(`502 for a request that names no other server: ${res.text.slice(0, 200)}`);
    } catch (err) {
      problems = [`request failed: ${(err as Error).message}`];
    }
    const after = await protectedSnapshot(w);
    if (after !== before) problems.push(changedSnapshot(before, after));
    before = after;
    for (const problem of problems) failures.push({ sample: i, operation: name, request: `${req.method} ${req.path.slice(0, 300)} body=${JSON.stringify(req.body?.toString("utf8").slice(0, 300) ?? "")}`, how: req.how, problem });
    await reviveActor(w);
  }
  return { failures, statuses };
}
