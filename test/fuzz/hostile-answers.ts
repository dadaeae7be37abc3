// Hostile answers for the outbound fuzz suite: what an untrusted server (or application service, or push
// gateway) may answer to any request Weft makes — a plausible body for that endpoint with some fields
// replaced by hostile values (wrong types, nulls, missing, NUL, huge, deep, events of other rooms), a body
// of the wrong type or not JSON at all, every kind of error status, a body too large, a connection closed
// before or in the middle of the answer, an answer that drips or never comes.
import type { Rng } from "./random.ts";
import { deep, hostileValue, toJsonText } from "./values.ts";
import type { HostilePlan, HostileRequest } from "../helpers/hostile-peer.ts";
import { mediaMultipart } from "../helpers/hostile-peer.ts";

/** A plausible answer body for `req` from server `H` (before mutation), or undefined when none is known. */
export type Templates = (req: HostileRequest) => { status?: number; body: unknown } | undefined;

/** Replaces, removes or adds one field somewhere in `value` (a deep copy is mutated). */
export function mutate(value: unknown, rng: Rng): unknown {
  if (value === null || typeof value !== "object") return rng.chance(0.7) ? hostileValue(rng) : value;
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, at: (string | number)[]) => {
    if (at.length > 8 || paths.length > 400) return;
    paths.push(at);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, i]));
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  walk(value, []);
  const path = rng.pick(paths.slice(1).length > 0 ? paths.slice(1) : paths);
  if (path.length === 0) return hostileValue(rng);
  const parentPath = path.slice(0, -1);
  const key = path[path.length - 1]!;
  let parent: any = value;
  for (const p of parentPath) parent = parent[p];
  switch (rng.int(4)) {
    case 0:
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      break;
    case 1:
      if (!Array.isArray(parent)) parent[rng.pick(["__proto__", "room_id", "event_id", "extra\u0000key", rng.word()])] = hostileValue(rng);
      else parent.push(hostileValue(rng));
      break;
    default:
      parent[key] = hostileValue(rng);
  }
  return value;
}

const NOT_JSON = ["", "{", "<html><body>Bad gateway</body></html>", "null", "\u0000\u0001\u0002", "[1,2", '{"a":1}{"b":2}', "\ufeff{}", "NaN", "1e999999"];

/** The plan for one request: what a hostile server does with it. */
export function hostilePlan(rng: Rng, req: HostileRequest, templates: Templates): HostilePlan {
  const template = templates(req);
  const r = rng.int(100);
  if (r < 6) return { kind: "close" };
  if (r < 10) return { kind: "partial", status: 200, head: '{"chunk": [{"room_id": "!a:b", "na', then: "close" };
  if (r < 12) return { kind: "hang" };
  if (r < 15) return { kind: "answer", status: 200, body: JSON.stringify(template?.body ?? {}).slice(0, 200), dripMs: 30 };
  if (r < 22) return { kind: "answer", status: rng.pick([200, 200, 400, 404]), headers: { "content-type": rng.pick(["application/json", "text/html", "application/octet-stream"]) }, body: rng.pick(NOT_JSON) };
  if (r < 25) return { kind: "answer", status: 200, headers: { "content-type": "text/plain" }, body: JSON.stringify(template?.body ?? {}) };
  if (r < 29) {
    // Larger than any endpoint's cap but the media one; a declared length, or none (chunked).
    const body = Buffer.alloc(3 * 1024 * 1024 + rng.int(1024), 0x20);
    body[0] = 0x5b;
    body[body.length - 1] = 0x5d;
    return rng.chance(0.5) ? { kind: "answer", status: 200, body } : { kind: "partial", status: 200, head: body, then: "close" };
  }
  if (r < 34) return { kind: "answer", status: 200, body: toJsonText(rng.chance(0.5) ? deep(rng.pick([200, 3_500, 20_000])) : { ...(template?.body as object), deep: deep(rng.pick([500, 5_000])) }) };
  if (r < 46) {
    const status = rng.pick([400, 401, 403, 404, 405, 408, 413, 429, 500, 501, 502, 503, 504, 599, 301, 302, 204, 201]);
    const bodies: unknown[] = [
      { errcode: rng.pick(["M_FORBIDDEN", "M_NOT_FOUND", "M_UNRECOGNIZED", "M_LIMIT_EXCEEDED", "M_UNKNOWN", "M_INCOMPATIBLE_ROOM_VERSION", "M_BAD_JSON", "M_UNSUPPORTED_ROOM_VERSION"]), error: "no", retry_after_ms: rng.pick([1, 1e308, -5, "x"]) },
      { errcode: hostileValue(rng), error: hostileValue(rng) },
      { errcode: "M_FORBIDDEN", error: "x".repeat(100_000) },
      {},
      [],
    ];
    return { kind: "answer", status, headers: status >= 300 && status < 400 ? { location: rng.pick(["https://127.0.0.2/x", "/elsewhere", "file:///etc/passwd"]) } : {}, body: JSON.stringify(rng.pick(bodies)) };
  }
  if (r < 54) return { kind: "answer", status: 200, body: JSON.stringify(rng.pick<unknown>([[], "x", 1, null, true, [template?.body ?? {}], { "": null }])) };
  // A plausible answer, changed in one to three places.
  if (template === undefined) return { kind: "answer", status: 200, body: JSON.stringify(mutate({ a: hostileValue(rng) }, rng)) };
  let body = structuredClone(template.body);
  for (let i = 1 + rng.int(3); i > 0; i--) body = mutate(body, rng);
  if (rng.chance(0.2)) body = template.body; // now and then the plausible answer itself
  return { kind: "answer", status: template.status ?? 200, body: toJsonText(body) };
}

/** A media answer: multipart/mixed, cut, malformed, or the wrong kind. */
export function hostileMediaPlan(rng: Rng): HostilePlan {
  const file = Buffer.from("hostile file ".repeat(1 + rng.int(2000)));
  const whole = mediaMultipart(file, rng.pick(["image/png", "text/html", "application/x-\u0000", "a".repeat(300), "application/octet-stream"]));
  switch (rng.int(9)) {
    case 0:
      return { kind: "partial", status: 200, headers: whole.headers, head: whole.body.subarray(0, Math.max(1, rng.int(whole.body.length))), then: "close" };
    case 1:
      return { kind: "answer", status: 200, headers: { ...whole.headers, "content-type": rng.pick(["multipart/mixed", "multipart/mixed; boundary=", 'multipart/mixed; boundary="x"', "image/png"]) }, body: whole.body };
    case 2:
      return { kind: "answer", status: 200, headers: whole.headers, body: Buffer.from(whole.body.toString("latin1").replace("application/json\r\n\r\n{}", `application/json\r\n\r\n${rng.pick(["[", "[]", "null", "x".repeat(70_000)])}`), "latin1") };
    case 3:
      return { kind: "answer", status: 200, headers: whole.headers, body: Buffer.from(whole.body.toString("latin1").replace("Content-Type: ", `Location: ${rng.pick(["https://127.0.0.2/x", "ftp://x", "::", "http://[::1]/"])}\r\nContent-Type: `), "latin1") };
    case 4:
      return { kind: "answer", status: 200, headers: { ...whole.headers, "content-length": String(whole.body.length) }, body: whole.body.subarray(0, whole.body.length - 8) };
    case 5:
      return { kind: "answer", status: 200, headers: { "content-type": whole.headers["content-type"]! }, body: Buffer.concat([whole.body.subarray(0, 60), Buffer.alloc(3 * 1024 * 1024)]) };
    default:
      return { kind: "answer", status: 200, headers: whole.headers, body: whole.body };
  }
}
