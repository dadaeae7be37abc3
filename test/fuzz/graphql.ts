// The GraphQL fuzzer: operations on every root field of the schema (queries and mutations over HTTP,
// some over graphql-ws too), with arguments generated from their types — world ids, and hostile values
// of the right type (NUL, huge strings, other users' rooms, extreme integers, deep or prototype-keyed
// JSON, long lists) or of the wrong one — plus hostile query texts. Fails on a 5xx, an error without
// extensions.errcode, a masked internal error, or a change to protected data.
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from "graphql";
import { request } from "undici";
import WebSocket from "ws";
import { createClient, type Client } from "graphql-ws";
import type { Rng } from "./random.ts";
import { deep, hostileValue, toJsonText } from "./values.ts";
import { changedSnapshot, protectedSnapshot, reviveActor, worldParam, type World } from "./world.ts";
import type { FuzzFailure } from "./rest.ts";

const HOSTILE_TEXT = ["", "\u0000", "a\u0000b", "x".repeat(70_000), "\ud800", "💥".repeat(500), "@x:other.example", "!x:other.example", "$x", "#x:other.example", "' OR 1=1", "%", "*"];
const INT32 = [0, -1, 2 ** 31 - 1, -(2 ** 31), 1_000_000];

/** A value for an input type: valid-looking (world ids by argument name) or hostile, of the right type mostly. */
function inputValue(type: GraphQLInputType, name: string, w: World, rng: Rng, hostile: boolean, depth = 0): unknown {
  if (hostile && rng.chance(0.15)) return rng.pick<unknown>([null, "text", 12, true, [], {}, 1.5, 2 ** 40]);
  const inner = getNullableType(type) as GraphQLInputType;
  if (isListType(inner)) {
    const n = hostile && rng.chance(0.2) ? 2_000 : rng.int(3);
    return Array.from({ length: n }, () => inputValue(inner.ofType, name, w, rng, hostile && rng.chance(0.3), depth + 1));
  }
  if (isEnumType(inner)) return rng.pick(inner.getValues()).name;
  if (isInputObjectType(inner)) {
    const out: Record<string, unknown> = {};
    if (depth > 4) return out;
    for (const f of Object.values(inner.getFields())) {
      if (isNonNullType(f.type) || rng.chance(0.5)) out[f.name] = inputValue(f.type, f.name, w, rng, hostile && rng.chance(0.4), depth + 1);
    }
    return out;
  }
  if (isScalarType(inner)) {
    switch (inner.name) {
      case "Int":
        return hostile ? rng.pick(INT32) : rng.int(20);
      case "Float":
        return hostile ? rng.pick([1e308, -1e308, 0.5]) : rng.int(20);
      case "Boolean":
        return rng.chance(0.5);
      case "Timestamp":
        return hostile ? rng.pick([0, -1, 2 ** 53 - 1]) : Date.now();
      case "JSONObject":
        return hostile ? rng.pick<unknown>([{ deep: deep(150) }, { deep: deep(4_000) }, { ["__proto__"]: { admin: true } }, { body: "\u0000", msgtype: "m.text" }, { big: "x".repeat(70_000) }, { v: hostileValue(rng) }]) : { msgtype: "m.text", body: "fuzz" };
      default: {
        if (hostile) return rng.pick(HOSTILE_TEXT);
        const fromWorld = worldParam(w, name, rng);
        if (fromWorld !== undefined) return fromWorld;
        if (/password/i.test(name)) return "fuzz-password-1";
        return rng.word();
      }
    }
  }
  return null;
}

/** The GraphQL text of a type (for variable definitions). */
const typeText = (t: GraphQLInputType): string => String(t);

/** A selection set for `type`: its scalar fields, and object fields (without required arguments) to `depth`. */
function selection(type: GraphQLNamedType, depth: number): string {
  if (!isObjectType(type) && !isInterfaceType(type)) return "";
  const parts: string[] = [];
  for (const f of Object.values(type.getFields())) {
    if (f.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined)) continue;
    const named = getNamedType(f.type);
    if (isScalarType(named) || isEnumType(named)) parts.push(f.name);
    else if (depth > 0) {
      const inner = selection(named, depth - 1);
      if (inner) parts.push(`${f.name} ${inner}`);
    }
  }
  return parts.length > 0 ? `{ ${parts.join(" ")} }` : "";
}

interface Generated {
  query: string;
  variables: Record<string, unknown>;
  how: string;
}

/** One operation on `field` of the root `kind`, its arguments as variables. */
function generateOperation(kind: "query" | "mutation" | "subscription", field: GraphQLField<unknown, unknown>, w: World, rng: Rng): Generated {
  const hostileArg = field.args.length > 0 && rng.chance(0.7) ? rng.pick(field.args) : undefined;
  const defs: string[] = [];
  const uses: string[] = [];
  const variables: Record<string, unknown> = {};
  for (const a of field.args as GraphQLArgument[]) {
    const hostile = a === hostileArg;
    if (!hostile && !isNonNullType(a.type) && rng.chance(0.5)) continue;
    defs.push(`$${a.name}: ${typeText(a.type)}`);
    uses.push(`${a.name}: $${a.name}`);
    variables[a.name] = inputValue(a.type, a.name, w, rng, hostile);
  }
  const sel = selection(getNamedType(field.type), 2);
  const query = `${kind}${defs.length ? ` (${defs.join(", ")})` : ""} { ${field.name}${uses.length ? `(${uses.join(", ")})` : ""} ${sel} }`;
  return { query, variables, how: hostileArg ? `hostile ${hostileArg.name}` : "plain" };
}

/** Query texts that are hostile in themselves. */
function hostileQuery(rng: Rng): Generated {
  const texts = [
    `{ ${Array.from({ length: 3_000 }, (_, i) => `a${i}: viewer { userId }`).join(" ")} }`,
    `{ viewer ${"{ rooms { edges { node ".repeat(30)}{ roomId }${" } } }".repeat(30)} }`,
    `query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }`,
    `{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }`,
    `{ viewer { userId } } `.repeat(200),
    `{ room(roomId: "${"\\u0000".repeat(10)}") { roomId } }`,
    `mutation { sendMessage(roomId: "!x", txnId: "t", content: ${"{a:".repeat(300)}1${"}".repeat(300)}) { eventId } }`,
    `{ viewer { userId @skip(if: true) @include(if: false) @deprecated } }`,
    `subscription { typing(roomId: "!x:weft.test") { userIds } }`,
    "",
    "{",
    "\u0000",
  ];
  return { query: rng.pick(texts), variables: {}, how: "hostile query text" };
}

async function post(w: World, g: Generated, rng: Rng): Promise<{ status: number; text: string }> {
  const body = toJsonText({ query: g.query, variables: g.variables });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (rng.chance(0.95)) headers.authorization = `Bearer ${w.actor.access_token}`;
  const res = await request(`${w.t.baseUrl}/graphql`, { method: "POST", headers, body, headersTimeout: 60_000, bodyTimeout: 60_000 });
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * Runs one operation over graphql-ws and returns what arrived as an HTTP-like answer: the first result
 * (a subscription's first payload, or nothing within `ms`), or the errors the server refused it with.
 */
function overWebSocket(client: Client, g: Generated, ms = 300): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (text: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop();
      resolve({ status: 200, text });
    };
    const timer = setTimeout(() => finish("{}"), ms);
    const stop = client.subscribe({ query: g.query, variables: g.variables }, {
      next: (r) => finish(JSON.stringify(r)),
      error: (e) => finish(JSON.stringify(Array.isArray(e) ? { errors: e } : { errors: [{ message: String((e as Error)?.message ?? e), extensions: { errcode: "CLOSED" } }] })),
      complete: () => finish("{}"),
    });
  });
}

function check(res: { status: number; text: string }): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`status ${res.status}: ${res.text.slice(0, 300)}`);
  let body: { errors?: { message?: string; extensions?: { errcode?: unknown } }[] };
  try {
    body = JSON.parse(res.text);
  } catch {
    return [...problems, `not JSON: ${res.text.slice(0, 200)}`];
  }
  for (const e of body.errors ?? []) {
    if (e.extensions?.errcode === "CLOSED") problems.push(`socket closed: ${e.message}`);
    else if (typeof e.extensions?.errcode !== "string") problems.push(`error without errcode: ${JSON.stringify(e).slice(0, 300)}`);
    else if (e.extensions.errcode === "M_UNKNOWN" && e.message === "Internal server error") problems.push(`internal error: ${JSON.stringify(e).slice(0, 300)}`);
  }
  return problems;
}

export async function fuzzGraphql(w: World, schema: GraphQLSchema, rng: Rng, samples: number): Promise<{ failures: FuzzFailure[]; statuses: Map<number, number> }> {
  const roots: ["query" | "mutation", GraphQLField<unknown, unknown>][] = [
    ...Object.values(schema.getQueryType()!.getFields()).map((f) => ["query", f] as ["query", GraphQLField<unknown, unknown>]),
    ...Object.values(schema.getMutationType()?.getFields() ?? {}).map((f) => ["mutation", f] as ["mutation", GraphQLField<unknown, unknown>]),
  ];
  const subscriptions = Object.values(schema.getSubscriptionType()?.getFields() ?? {});
  const failures: FuzzFailure[] = [];
  const statuses = new Map<number, number>();
  let ws: Client | undefined;
  let wsToken: string | undefined;
  let before = await protectedSnapshot(w);
  for (let i = 0; i < samples; i++) {
    let g: Generated;
    let name: string;
    const overWs = rng.chance(0.15);
    if (rng.chance(0.1)) {
      g = hostileQuery(rng);
      name = "hostile text";
    } else if (overWs && subscriptions.length > 0 && rng.chance(0.5)) {
      const field = rng.pick(subscriptions);
      g = generateOperation("subscription", field, w, rng);
      name = `subscription ${field.name}`;
    } else {
      const [kind, field] = rng.pick(roots);
      g = generateOperation(kind, field, w, rng);
      name = `${kind} ${field.name}`;
    }
    let problems: string[];
    try {
      if (overWs && (ws === undefined || wsToken !== w.actor.access_token)) {
        await ws?.dispose();
        wsToken = w.actor.access_token;
        ws = createClient({ url: w.t.baseUrl.replace(/^http/, "ws") + "/graphql", webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${wsToken}` }, retryAttempts: 0, lazy: true });
      }
      const res = overWs ? await overWebSocket(ws!, g) : await post(w, g, rng);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      problems = check(res);
    } catch (err) {
      problems = [`request failed: ${(err as Error).message}`];
    }
    const after = await protectedSnapshot(w);
    if (after !== before) problems.push(changedSnapshot(before, after));
    before = after;
    const request = `${g.query.slice(0, 300)} variables=${toJsonText(g.variables).slice(0, 300)}`;
    for (const problem of problems) failures.push({ sample: i, operation: name, request, how: g.how, problem });
    await reviveActor(w);
  }
  await ws?.dispose();
  return { failures, statuses };
}
