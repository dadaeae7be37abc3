// The REST fuzzer: drives the operations of one OpenAPI directory of the spec (test/fuzz/apis.ts) with
// generated bad inputs against a running server, and reports every response that breaks a rule of the
// project — a 5xx, an error body without errcode, a body that breaks the spec's schema for its status —
// and every request after which data the actor had no right to touch has changed.
import { request } from "undici";
import { expectMatchesSpec, findOperation, type SpecOperation } from "../helpers/spec.ts";
import type { Rng } from "./random.ts";
import { hostilePathParam, hostileQueryValue, hostileRawBody, mutateJson, toJsonText, validValue, type Schema } from "./values.ts";
import { changedSnapshot, protectedSnapshot, reviveActor, worldParam, worldSupply, type World } from "./world.ts";

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What was made hostile, for the report. */
  how: string;
}

export interface FuzzFailure {
  sample: number;
  operation: string;
  request: string;
  how: string;
  problem: string;
}

/** Kinds of hostility, one chosen per request. */
const KINDS = ["plain", "path", "query", "body", "body", "body", "raw-body", "auth"] as const;

function fillTemplate(op: SpecOperation, w: World, rng: Rng, hostile: string | undefined): { path: string; how: string } {
  let how = "";
  const path = op.template.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (name === hostile) {
      const v = hostilePathParam(rng);
      how = `path ${name}=${v.slice(0, 60)}`;
      return v;
    }
    const param = op.parameters.find((p) => p.in === "path" && p.name === name);
    const v = worldParam(w, name, rng) ?? (typeof param?.example === "string" ? param.example : rng.word());
    return encodeURIComponent(v);
  });
  return { path, how };
}

function queryString(op: SpecOperation, w: World, rng: Rng, hostile: string | undefined): { query: string; how: string } {
  const parts: string[] = [];
  let how = "";
  for (const p of op.parameters.filter((x) => x.in === "query")) {
    if (p.name === hostile) {
      const v = hostileQueryValue(p.schema as Schema, rng);
      parts.push(`${p.name}=${v}`);
      how = `query ${p.name}=${v.slice(0, 60)}`;
      continue;
    }
    if (!p.required && !rng.chance(0.4)) continue;
    const v = worldParam(w, p.name, rng) ?? String(validValue(p.schema as Schema, rng, worldSupply(w, rng), p.name));
    parts.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(typeof v === "string" ? v : JSON.stringify(v))}`);
  }
  return { query: parts.length > 0 ? `?${parts.join("&")}` : "", how };
}

/** One generated request for `op`. */
export function generateRequest(op: SpecOperation, w: World, rng: Rng): FuzzRequest {
  const kind = rng.pick(KINDS);
  const pathParams = op.parameters.filter((p) => p.in === "path").map((p) => p.name);
  const queryParams = op.parameters.filter((p) => p.in === "query").map((p) => p.name);
  const { path, how: pathHow } = fillTemplate(op, w, rng, kind === "path" && pathParams.length > 0 ? rng.pick(pathParams) : undefined);
  const { query, how: queryHow } = queryString(op, w, rng, kind === "query" && queryParams.length > 0 ? rng.pick(queryParams) : undefined);
  const headers: Record<string, string> = {};
  let how = pathHow || queryHow || kind;
  if (kind === "auth") {
    const choice = rng.int(3);
    if (choice === 1) headers.authorization = `Bearer ${rng.pick(["wft_bogus", "", "\u00ff", "x".repeat(5000)])}`;
    else if (choice === 2) headers.authorization = rng.pick(["Basic abc", "Bearer", "bearer  a b"]);
    how = `auth ${headers.authorization ?? "none"}`.slice(0, 80);
  } else headers.authorization = `Bearer ${w.actor.access_token}`;

  let body: Buffer | undefined;
  if (op.body || ["POST", "PUT"].includes(op.method)) {
    const contentType = op.body?.contentType ?? "application/json";
    if (contentType !== "application/json") {
      headers["content-type"] = rng.pick([contentType, "application/json", "text/plain"]);
      body = kind === "raw-body" ? hostileRawBody(rng) : Buffer.from(rng.word(0, 64));
    } else {
      headers["content-type"] = rng.chance(0.9) ? "application/json" : rng.pick(["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"]);
      if (kind === "raw-body") {
        body = hostileRawBody(rng);
        how = `raw body ${JSON.stringify(body.toString("utf8").slice(0, 40))}`;
      } else {
        const valid = op.body?.example !== undefined && rng.chance(0.5) ? structuredClone(op.body.example) : validValue((op.body?.schema ?? { type: "object" }) as Schema, rng, worldSupply(w, rng));
        if (kind === "body") {
          const m = mutateJson(valid, rng);
          body = Buffer.from(toJsonText(m.value));
          how = `body: ${m.how}`;
        } else body = Buffer.from(toJsonText(valid));
      }
    }
  }
  return { method: op.method, path: path + query, headers, body, how };
}

export interface RawResponse {
  status: number;
  contentType: string;
  text: string;
}

async function send(w: World, req: FuzzRequest): Promise<RawResponse> {
  const res = await request(w.t.baseUrl + req.path, { method: req.method as "GET", headers: req.headers, body: req.body, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const text = await res.body.text();
  return { status: res.statusCode, contentType: String(res.headers["content-type"] ?? ""), text };
}

/** The rules a response breaks (empty when it keeps them all). */
export function checkResponse(req: FuzzRequest, res: RawResponse): string[] {
  const problems: string[] = [];
  // 502 (with an errcode, checked below) is another server's failure — an unreachable or invalid remote
  // server named in the request — as Synapse answers it; every other 5xx is Weft's own.
  if (res.status >= 500 && res.status !== 502) problems.push(`status ${res.status}`);
  let json: unknown;
  const isJson = res.contentType.startsWith("application/json");
  if (isJson) {
    try {
      json = JSON.parse(res.text);
    } catch {
      problems.push("invalid JSON body");
    }
  }
  const body = json as { errcode?: unknown; flows?: unknown } | undefined;
  const matrixError = typeof body?.errcode === "string" && /^M_[A-Z0-9_]+$/.test(body.errcode);
  // The one error body without errcode the spec defines: user-interactive auth's first 401 (flows).
  const uiaChallenge = res.status === 401 && Array.isArray(body?.flows);
  if (res.status >= 400 && !matrixError && !uiaChallenge) problems.push(`error body without errcode: ${res.text.slice(0, 200)}`);
  // The path the server received: the URL parser resolves `..` and `%2E%2E` segments before sending
  // (`/rooms/../initialSync` is `/initialSync`), so the schema checked is that of the operation reached.
  const sent = new URL(req.path, "http://fuzz.invalid").pathname;
  if (isJson && json !== undefined && findOperation(req.method, sent) && !pushRuleKindListing(req.method, sent)) {
    try {
      expectMatchesSpec({ status: res.status, json: notificationsAsSent(req, sessionDataAsStored(req, backupAsStored(req, legacyEventsRoomEvents(req, json)))) }, req.method, sent);
    } catch (err) {
      // Any endpoint may answer the standard error response ("API standards"), whatever it documents
      // for that status (401 is often documented as the UIA challenge only).
      const message = (err as Error).message;
      if (!(res.status >= 400 && matrixError) && !onlyAmbiguousOneOf(message)) problems.push(message.slice(0, 1500));
    }
  }
  return problems;
}

/**
 * GET /events: its schema allows only ClientEvents in `chunk`, but the legacy stream also carries the
 * typing, receipts, account data and presence a mature client-server suite (and Synapse) expect there
 * (test/http/conformance-reads.test.ts). Those items (no event_id) are left out of the check; every room
 * event still is checked.
 */
function legacyEventsRoomEvents(req: FuzzRequest, json: unknown): unknown {
  const chunk = (json as { chunk?: unknown } | null)?.chunk;
  if (req.method !== "GET" || !/^\/_matrix\/client\/(v3|r0)\/events$/.test(req.path.split("?")[0]!) || !Array.isArray(chunk)) return json;
  return { ...(json as object), chunk: chunk.filter((e) => typeof (e as { event_id?: unknown })?.event_id === "string") };
}

/**
 * GET /pushrules/{scope}/{kind}/ (trailing slash): a kind's rules as a list, as Synapse answers it; the spec
 * has no such operation, and the path would otherwise be read as a rule with an empty id.
 */
function pushRuleKindListing(method: string, path: string): boolean {
  return method === "GET" && /\/pushrules\/[^/]+\/[^/]+\/$/.test(path);
}

/**
 * GET /notifications: every entry carries profile_tag, null when no tag applies, as Synapse sends it
 * (sytest asserts the key); the spec types it a string when given. A null one is left out of the check.
 */
function notificationsAsSent(req: FuzzRequest, json: unknown): unknown {
  const list = (json as { notifications?: unknown } | null)?.notifications;
  if (req.method !== "GET" || !/\/notifications$/.test(req.path.split("?")[0]!) || !Array.isArray(list)) return json;
  return { ...(json as object), notifications: list.map((n) => (n && typeof n === "object" && (n as { profile_tag?: unknown }).profile_tag === null ? Object.fromEntries(Object.entries(n).filter(([k]) => k !== "profile_tag")) : n)) };
}

/**
 * GET /room_keys/version: the spec documents auth_data as an object and algorithm as its one algorithm, but
 * both are the client's business and Synapse stores whatever a client gives (sytest's backups use
 * "m.megolm_backup.v1" with an opaque string; test/http/conformance-accounts.test.ts). A non-object
 * auth_data or another algorithm string that a request stored earlier is answered as stored, so it is
 * left out of the check; the rest of the answer still is checked (a non-string algorithm still fails).
 */
function backupAsStored(req: FuzzRequest, json: unknown): unknown {
  if (req.method !== "GET" || !/\/room_keys\/version(\/[^/]*)?$/.test(req.path.split("?")[0]!)) return json;
  const body = json as { auth_data?: unknown; algorithm?: unknown } | null;
  if (!body || typeof body !== "object") return json;
  const out: Record<string, unknown> = { ...body };
  if ("auth_data" in body && !(typeof body.auth_data === "object" && body.auth_data !== null && !Array.isArray(body.auth_data))) out.auth_data = {};
  if (typeof body.algorithm === "string") out.algorithm = "m.megolm_backup.v1.curve25519-aes-sha2";
  return out;
}

/**
 * GET /room_keys/keys[/{roomId}[/{sessionId}]]: the spec's algorithm makes session_data an object, but like
 * auth_data it is the client's business and Synapse stores any JSON there (sytest backs up opaque strings;
 * test/http/key-backup.test.ts). A non-object session_data a request stored earlier is answered as stored,
 * so it is left out of the check; the other fields of each session still are checked.
 */
function sessionDataAsStored(req: FuzzRequest, json: unknown): unknown {
  if (req.method !== "GET" || !/\/room_keys\/keys(\/|$)/.test(req.path.split("?")[0]!) || typeof json !== "object" || json === null) return json;
  const asObject = (v: unknown) => (typeof v === "object" && v !== null && !Array.isArray(v) ? v : {});
  const session = (k: unknown) => (typeof k === "object" && k !== null && "session_data" in k ? { ...k, session_data: asObject((k as { session_data: unknown }).session_data) } : k);
  const sessions = (m: unknown) => (typeof m === "object" && m !== null ? Object.fromEntries(Object.entries(m).map(([id, k]) => [id, session(k)])) : m);
  const body = json as { rooms?: unknown; sessions?: unknown; session_data?: unknown };
  if ("session_data" in body) return session(body);
  if ("sessions" in body) return { ...body, sessions: sessions(body.sessions) };
  if (typeof body.rooms === "object" && body.rooms !== null)
    return { ...body, rooms: Object.fromEntries(Object.entries(body.rooms).map(([r, room]) => [r, typeof room === "object" && room !== null && "sessions" in room ? { ...room, sessions: sessions((room as { sessions: unknown }).sessions) } : room])) };
  return json;
}

/**
 * Whether the only schema errors are a `oneOf` that more than one branch satisfies: the spec's own
 * ambiguity (GET /state/{type}/{key}?format=event: "the content" or "the whole event", both objects).
 */
function onlyAmbiguousOneOf(message: string): boolean {
  // ajv's error lines (each names its schema path), not the indented body printed after them.
  const lines = message.split("\n").filter((l) => l.startsWith("  ") && l.includes(" [schema #"));
  return lines.length > 0 && lines.every((l) => /must match exactly one schema in oneOf \{"passingSchemas":\[\d+,\d+/.test(l));
}

function describe(req: FuzzRequest): string {
  const body = req.body === undefined ? "" : ` body=${JSON.stringify(req.body.toString("utf8").slice(0, 300))}`;
  return `${req.method} ${req.path.slice(0, 300)}${body}`;
}

/** What another suite changes in the fuzz loop (all optional: the REST fuzz's own by default). */
export interface FuzzDriver {
  generate?: (op: SpecOperation, w: World, rng: Rng) => FuzzRequest;
  send?: (w: World, req: FuzzRequest) => Promise<RawResponse>;
  snapshot?: (w: World) => Promise<string>;
  /** Further rules a response must keep. */
  check?: (req: FuzzRequest, res: RawResponse) => string[];
  /** Whether to keep the actor usable after each request (default true). */
  revive?: boolean;
}

/**
 * Sends `samples` generated requests to operations of `ops` (uniformly chosen), one at a time, and returns
 * the failures. After each request the protected data is compared with its snapshot.
 */
export async function fuzzOperations(w: World, ops: SpecOperation[], rng: Rng, samples: number, driver: FuzzDriver = {}): Promise<{ failures: FuzzFailure[]; statuses: Map<number, number> }> {
  const failures: FuzzFailure[] = [];
  const statuses = new Map<number, number>();
  const snapshot = driver.snapshot ?? protectedSnapshot;
  let before = await snapshot(w);
  for (let i = 0; i < samples; i++) {
    const op = rng.pick(ops);
    const req = (driver.generate ?? generateRequest)(op, w, rng);
    const name = op.operationId ?? `${op.method} ${op.template}`;
    let problems: string[];
    try {
      const res = await (driver.send ?? send)(w, req);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      problems = [...checkResponse(req, res), ...(driver.check?.(req, res) ?? [])];
    } catch (err) {
      problems = [`request failed: ${(err as Error).message}`];
    }
    const after = await snapshot(w);
    if (after !== before) problems.push(changedSnapshot(before, after));
    before = after;
    for (const problem of problems) failures.push({ sample: i, operation: name, request: describe(req), how: req.how, problem });
    if (driver.revive !== false) await reviveActor(w);
  }
  return { failures, statuses };
}

export function formatFailures(seed: number, failures: FuzzFailure[]): string {
  return failures
    .slice(0, 30)
    .map((f) => `#${f.sample} ${f.operation} [${f.how}] (seed ${seed})\n  ${f.request}\n  → ${f.problem}`)
    .join("\n\n");
}
