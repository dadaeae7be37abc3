// Values for the fuzz suites: a plausible value from a JSON schema (the spec says what is valid), and the
// hostile ones an attacker sends instead — wrong types, nulls, missing and unknown fields, huge strings,
// deep nesting, NUL and control characters, lone surrogates, extreme numbers, prototype keys — plus
// hostile path and query parameters and request bodies that are not JSON at all.
import type { Rng } from "./random.ts";

export type Schema = Record<string, any>;

/** Names of well-known values the world can supply (a user id, a room id ...), by JSON property name or format. */
export type Supply = (hint: { name?: string; format?: string }) => unknown;

/** Stands for JSON nested `n` levels deep until `toJsonText` writes it out (JSON.stringify overflows first). */
export const deep = (levels: number) => `@@deep:${levels}@@`;

/** JSON text of a value, with `deep(n)` markers expanded. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value).replace(/"@@deep:(\d+)@@"/g, (_m, n) => "[".repeat(Number(n)) + "]".repeat(Number(n)));
}

const HOSTILE_STRINGS = (rng: Rng): string[] => [
  "",
  " ",
  "\u0000",
  `a\u0000b`,
  "\u0001\u0007\u001b[31m\u007f",
  "\ud800",
  "\udfff\ud800",
  "\uffff\ufffe",
  "💥".repeat(1 + rng.int(2000)),
  "x".repeat(70_000),
  "y".repeat(256),
  "%00",
  "%",
  "../../../etc/passwd",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "\\",
  '"',
  "*",
  "%_%",
  "@a:b",
  "@:",
  "!a:b",
  "!",
  "$a",
  "$",
  "#a:b",
  "#",
  "@x:other.example",
  "mxc://weft.test/x",
  "__proto__",
  "constructor",
  "NaN",
  "-1",
  "99999999999999999999999",
  "true",
  "null",
];

const HOSTILE_NUMBERS = [0, -1, 1.5, -0.5, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 2 ** 31, 2 ** 32, -(2 ** 31) - 1, 1e-300, 123456789012];

/** One hostile JSON value (any type). */
export function hostileValue(rng: Rng): unknown {
  switch (rng.int(9)) {
    case 0:
    case 1:
      return rng.pick(HOSTILE_STRINGS(rng));
    case 2:
      return rng.pick(HOSTILE_NUMBERS);
    case 3:
      return null;
    case 4:
      return rng.chance(0.5);
    case 5:
      return rng.pick<unknown>([[], [null], [[[]]], Array.from({ length: 5_000 }, () => 0), [rng.pick(HOSTILE_STRINGS(rng))]]);
    case 6:
      return rng.pick([deep(150), deep(3_500), deep(20_000)]);
    case 7:
      return rng.pick<unknown>([{}, { ["__proto__"]: { admin: true } }, { constructor: { prototype: { admin: true } } }, Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`k${i}`, i]))]);
    default:
      return { [rng.pick(HOSTILE_STRINGS(rng)).slice(0, 300)]: rng.pick(HOSTILE_STRINGS(rng)) };
  }
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === "string") return [schema.type];
  if (schema.properties || schema.additionalProperties || schema.patternProperties) return ["object"];
  if (schema.items) return ["array"];
  return [];
}

/** Folds allOf into one schema (properties and required merged), picks one branch of oneOf/anyOf. */
export function resolveSchema(schema: Schema, rng: Rng): Schema {
  let s = schema ?? {};
  for (let guard = 0; guard < 10; guard++) {
    if (Array.isArray(s.allOf)) {
      const parts = s.allOf.map((p: Schema) => resolveSchema(p, rng));
      const { allOf: _a, ...rest } = s;
      s = parts.reduce(
        (acc: Schema, p: Schema) => ({
          ...acc,
          ...p,
          properties: { ...(acc.properties ?? {}), ...(p.properties ?? {}) },
          required: [...(acc.required ?? []), ...(p.required ?? [])],
        }),
        rest,
      );
    } else if (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) {
      const branches = (s.oneOf ?? s.anyOf) as Schema[];
      const { oneOf: _o, anyOf: _n, ...rest } = s;
      s = { ...rest, ...rng.pick(branches) };
    } else break;
  }
  return s;
}

/** A plausible valid value for `schema` (its example often), using the world's ids where the name or format asks. */
export function validValue(schema: Schema, rng: Rng, supply: Supply, name?: string, depth = 0): unknown {
  const s = resolveSchema(schema, rng);
  if (s.example !== undefined && rng.chance(0.4)) return structuredClone(s.example);
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return rng.pick(s.enum);
  const supplied = supply({ name, format: s.format });
  if (supplied !== undefined) return supplied;
  const types = typesOf(s).filter((t) => t !== "null");
  const type = types.length > 0 ? rng.pick(types) : "string";
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      if (depth > 6) return out;
      const required = new Set<string>(s.required ?? []);
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
        if (required.has(k) || rng.chance(0.5)) out[k] = validValue(v, rng, supply, k, depth + 1);
      }
      const extra = s.additionalProperties;
      if (extra && typeof extra === "object" && rng.chance(0.5)) out[supplyKey(rng, supply, s)] = validValue(extra, rng, supply, undefined, depth + 1);
      return out;
    }
    case "array": {
      if (depth > 6) return [];
      const n = rng.int(3);
      return Array.from({ length: n }, () => validValue(s.items ?? {}, rng, supply, name, depth + 1));
    }
    case "integer":
      return s.minimum !== undefined ? s.minimum + rng.int(10) : rng.int(50);
    case "number":
      return rng.int(50) / 10;
    case "boolean":
      return rng.chance(0.5);
    default:
      return rng.word();
  }
}

/** A key for a map-shaped object (user ids, room ids ... when the schema names them). */
function supplyKey(rng: Rng, supply: Supply, s: Schema): string {
  const names = (s["x-pattern-format"] ?? s.propertyNames?.format) as string | undefined;
  const v = names ? supply({ format: names }) : undefined;
  return typeof v === "string" ? v : rng.word();
}

/** The wrong-typed twin of a value: a string for a number, an object for a string, ... */
function wrongType(value: unknown, rng: Rng): unknown {
  const options: unknown[] = ["text", 42, true, null, [], {}, [value]];
  return rng.pick(options.filter((o) => typeof o !== typeof value || Array.isArray(o) !== Array.isArray(value)));
}

/** Paths (arrays of keys) to every node of a JSON value, root excluded, at most `max`. */
function nodePaths(value: unknown, max = 200): (string | number)[][] {
  const out: (string | number)[][] = [];
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  while (stack.length > 0 && out.length < max) {
    const [v, p] = stack.pop()!;
    if (p.length > 0) out.push(p);
    if (Array.isArray(v)) v.forEach((x, i) => stack.push([x, [...p, i]]));
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) stack.push([x, [...p, k]]);
  }
  return out;
}

function setAt(root: any, path: (string | number)[], value: unknown | typeof DELETE): void {
  let node = root;
  for (const k of path.slice(0, -1)) node = node[k];
  const last = path[path.length - 1]!;
  if (value === DELETE) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = value;
}

const DELETE = Symbol("delete");

/** One hostile change to `root` (in place), described. */
function mutateOnce(root: unknown, rng: Rng): string {
  const paths = nodePaths(root);
  const isObject = root !== null && typeof root === "object" && !Array.isArray(root);
  if (isObject && (paths.length === 0 || rng.chance(0.2))) {
    const key = rng.pick(["__proto__", "constructor", rng.word(), "\u0000", "x".repeat(300)]);
    // An own property even for "__proto__" (plain assignment would set the prototype instead).
    Object.defineProperty(root, key, { value: hostileValue(rng), enumerable: true, writable: true, configurable: true });
    return `added ${JSON.stringify(key.slice(0, 20))}`;
  }
  if (paths.length === 0) return "nothing to change";
  const path = rng.pick(paths);
  let node: any = root;
  for (const k of path) node = node[k];
  switch (rng.int(3)) {
    case 0:
      setAt(root, path, DELETE);
      return `removed ${path.join(".")}`;
    case 1:
      setAt(root, path, wrongType(node, rng));
      return `retyped ${path.join(".")}`;
    default:
      setAt(root, path, hostileValue(rng));
      return `hostile ${path.join(".")}`;
  }
}

/**
 * A hostile variant of a (valid) JSON body: one to three nodes removed, retyped or replaced by hostile
 * values, unknown keys added — or the whole body replaced.
 */
export function mutateJson(body: unknown, rng: Rng): { value: unknown; how: string } {
  if (rng.chance(0.1)) return { value: hostileValue(rng), how: "whole body replaced" };
  const root = structuredClone(body);
  const hows: string[] = [];
  for (let i = 1 + rng.int(3); i > 0; i--) hows.push(mutateOnce(root, rng));
  return { value: root, how: hows.join(", ") };
}

/** Request bodies that are not JSON, or JSON of the wrong shape (raw bytes). */
export function hostileRawBody(rng: Rng): Buffer {
  const texts = ["", "{", "}", "[]", "null", '"string"', "1", '{"a":}', "\u0000", '{"a":1,"a":2}', "\ufeff{}", '{"n": 1e999}', '{"n": -0}', "[".repeat(100_000), "x".repeat(100_000)];
  if (rng.chance(0.2)) return Buffer.from([0xff, 0xfe, 0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]);
  return Buffer.from(rng.pick(texts), "utf8");
}

/** Hostile path parameters, already percent-encoded as they go on the wire. */
export function hostilePathParam(rng: Rng): string {
  return rng.pick([
    "",
    "%00",
    "a%00b",
    "%2F",
    "..",
    "%2E%2E",
    "%ZZ",
    "%",
    "x".repeat(300),
    "x".repeat(2_100),
    "%F0%9F%92%A5",
    "%C3%28",
    "%ED%A0%80",
    "%20",
    "%40",
    "%21%3A",
    "%24",
    "%23",
    "*",
    "null",
    "__proto__",
    "-1",
    "99999999999999999999999",
    "%0A%0D",
    encodeURIComponent("@x:other.example"),
    encodeURIComponent("!x:other.example"),
    encodeURIComponent("$x:other.example"),
  ]);
}

/** Hostile query values for a parameter of the given schema (raw, percent-encoded). */
export function hostileQueryValue(schema: Schema, rng: Rng): string {
  const type = typesOf(schema)[0];
  const numeric = ["-1", "1.5", "1e3", "0x10", "NaN", "99999999999999999999999", "9007199254740993", "-9007199254740993", ""];
  const general = ["%00", "a%00b", "x".repeat(5_000), "%ZZ", "%ED%A0%80", "true", "[]", "%7B%7D", encodeURIComponent("{\"a\":" + "[".repeat(200) + "]".repeat(200) + "}"), "s99999999999999999999999", "s1_2_3_4_5_6_7_8_9_10_11"];
  return type === "integer" || type === "number" ? rng.pick([...numeric, ...general]) : rng.pick(general);
}
