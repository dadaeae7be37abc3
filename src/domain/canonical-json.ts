// Canonical JSON: the byte-exact encoding that Matrix signs and hashes.
// Spec: Appendices, "Canonical JSON" — keys sorted by Unicode code point, no insignificant whitespace,
// integers only in [-(2^53)+1, 2^53-1], no exponents or fractions, negative zero written as 0.
import { MatrixError } from "./errors.ts";

export const MAX_SAFE = 2 ** 53 - 1;

/** Orders two strings by Unicode code point (JS's default order is by UTF-16 code unit). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (U+D800–U+DFFF) stands for a code point above U+FFFF, so it sorts after U+E000–U+FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Encodes a JSON value canonically. Throws M_BAD_JSON for values canonical JSON cannot carry. A value of
 * any depth encodes — an event stored or received before the nesting bound (json-limits.ts) still hashes
 * and compares: the usual shallow value takes a recursive walk (fast: the hot path hashes and signs every
 * event built), one nested deeper than FAST_DEPTH starts over on an iterative walk with an explicit stack.
 */
export function canonicalJson(value: unknown): string {
  try {
    return encode(value, 0);
  } catch (err) {
    if (err !== TOO_DEEP) throw err;
    return canonicalJsonIteratively(value);
  }
}

/** Nesting the recursive walk takes before handing the value to the iterative one (far from any stack limit). */
const FAST_DEPTH = 200;
const TOO_DEEP = Symbol("too deep");

function encode(value: unknown, depth: number): string {
  const text = scalar(value);
  if (text !== undefined) return text;
  if (depth === FAST_DEPTH) throw TOO_DEEP;
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + encode(value[i], depth + 1);
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = sortedKeys(obj);
  let out = "{";
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? "" : ",") + encodeKey(k) + ":" + encode(v, depth + 1);
    first = false;
  }
  return out + "}";
}

/** A scalar's encoding; undefined for an array or object (a container); throws for what JSON cannot hold. */
function scalar(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return encodeString(value);
    case "number":
      return encodeNumber(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      return value === null ? "null" : undefined;
    default:
      throw new MatrixError("M_BAD_JSON", `Canonical JSON cannot encode a ${typeof value}`);
  }
}

/** Any UTF-16 surrogate: only keys holding one can sort differently by code unit than by code point. */
const SURROGATE = /[\ud800-\udfff]/;

/** Fewest keys sorted by the engine's sort; fewer are sorted in place here (the engine's sort copies). */
const ENGINE_SORT_FROM = 16;

/**
 * An object's keys by Unicode code point: by UTF-16 code unit first (in place for the few keys an object
 * usually has), which agrees with code point order unless a key holds a surrogate.
 */
function sortedKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  const n = keys.length;
  if (n < 2) return keys;
  if (n < ENGINE_SORT_FROM) {
    for (let i = 1; i < n; i++) {
      const k = keys[i]!;
      let j = i - 1;
      while (j >= 0 && keys[j]! > k) {
        keys[j + 1] = keys[j]!;
        j--;
      }
      keys[j + 1] = k;
    }
  } else keys.sort();
  for (let i = 0; i < n; i++) if (SURROGATE.test(keys[i]!)) return keys.sort(compareCodePoints);
  return keys;
}

/**
 * Encoded keys by key: the same few dozen keys (an event's fields, content's) are encoded for every event
 * hashed and signed. Bounded: once full, further keys are encoded each time.
 */
const encodedKeys = new Map<string, string>();
const MAX_ENCODED_KEYS = 2048;
const MAX_CACHED_KEY_LENGTH = 64;

function encodeKey(k: string): string {
  let e = encodedKeys.get(k);
  if (e !== undefined) return e;
  e = encodeString(k);
  if (encodedKeys.size < MAX_ENCODED_KEYS && k.length <= MAX_CACHED_KEY_LENGTH) encodedKeys.set(k, e);
  return e;
}

function encodeNumber(value: number): string {
  if (!Number.isInteger(value)) throw new MatrixError("M_BAD_JSON", "Canonical JSON allows only integers");
  if (value > MAX_SAFE || value < -MAX_SAFE) throw new MatrixError("M_BAD_JSON", "Integer out of canonical JSON range");
  return Object.is(value, -0) ? "0" : String(value);
}

/** `canonicalJson` over an explicit stack (no recursion), for values nested deeper than the fast walk goes. */
export function canonicalJsonIteratively(value: unknown): string {
  const first = open(value);
  if (typeof first === "string") return first;
  const stack: Frame[] = [first];
  for (;;) {
    const top = stack[stack.length - 1]!;
    if (top.i < top.items.length) {
      const next = open(top.items[top.i++]);
      if (typeof next === "string") add(top, next);
      else stack.push(next);
      continue;
    }
    stack.pop();
    const text = top.keys === undefined ? "[" + top.parts.join(",") + "]" : "{" + top.parts.join(",") + "}";
    if (stack.length === 0) return text;
    add(stack[stack.length - 1]!, text);
  }
}

/** An array or object being encoded: its members in order (object keys sorted) and their encodings so far. */
interface Frame {
  items: unknown[];
  keys: string[] | undefined;
  i: number;
  parts: string[];
}

function add(f: Frame, text: string): void {
  f.parts.push(f.keys === undefined ? text : encodeString(f.keys[f.i - 1]!) + ":" + text);
}

/** A scalar's encoding, or a frame for a container. */
function open(value: unknown): Frame | string {
  const text = scalar(value);
  if (text !== undefined) return text;
  if (Array.isArray(value)) return { items: value, keys: undefined, i: 0, parts: [] };
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort(compareCodePoints);
  return { items: keys.map((k) => obj[k]), keys, i: 0, parts: [] };
}

// A lone surrogate has no UTF-8 encoding, so canonical JSON (a UTF-8 encoding) cannot carry it.
const LONE_SURROGATE = /\p{Cs}/u;

function encodeString(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new MatrixError("M_BAD_JSON", "Canonical JSON cannot encode a lone surrogate");
  return JSON.stringify(s);
}

/** Checks that a parsed JSON value is within canonical JSON's range (integers, safe range) at every depth. */
export function assertCanonicalCompatible(value: unknown): void {
  canonicalJson(value);
}

/** Unpadded standard base64, as Matrix uses for keys, hashes and signatures. */
export function base64Unpadded(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64").replace(/=+$/, "");
}

/** URL-safe unpadded base64 (event ids from room version 4). */
export function base64UrlUnpadded(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

/** Decodes base64 in any of Matrix's forms (padded or not, standard or URL-safe). */
export function decodeBase64(s: string): Buffer {
  return Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}
