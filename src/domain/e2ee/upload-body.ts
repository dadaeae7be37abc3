// The upload of POST /keys/upload (KeysUploadInput: what the REST body and the GraphQL input both become),
// read as the spec types it and with Synapse's errcodes for what is wrong (its request model): device keys
// with their five typed fields, one-time and fallback keys named <algorithm>:<key id>, each a key string or
// a KeyObject. Exactly one missing field is M_MISSING_PARAM, explicit null device_keys M_INVALID_PARAM,
// anything else M_BAD_JSON (device keys of another user or device too).
// Spec: Client-Server API "POST /keys/upload", "Key algorithms".
import { MatrixError } from "../errors.ts";
import { canonicalJson } from "../canonical-json.ts";
import { isPlainObject, type Json } from "./json.ts";

/** What is wrong with a field: it is absent, or of the wrong type. */
interface Problem {
  kind: "missing" | "type";
  field: string;
}

const isStringMap = (v: unknown): boolean => isPlainObject(v) && Object.values(v).every((x) => typeof x === "string");
const isSignatures = (v: unknown): boolean => isPlainObject(v) && Object.values(v).every(isStringMap);

/** The problems of device keys' required fields (user_id, device_id, algorithms, keys, signatures). */
export function deviceKeysProblems(dk: Json, where = "device_keys"): Problem[] {
  const problems: Problem[] = [];
  const check = (name: string, ok: (v: unknown) => boolean) => {
    const v = dk[name];
    if (v === undefined) problems.push({ kind: "missing", field: `${where}.${name}` });
    else if (!ok(v)) problems.push({ kind: "type", field: `${where}.${name}` });
  };
  check("algorithms", (v) => Array.isArray(v) && v.every((a) => typeof a === "string"));
  check("device_id", (v) => typeof v === "string");
  check("keys", isStringMap);
  check("signatures", isSignatures);
  check("user_id", (v) => typeof v === "string");
  return problems;
}

function refusal(problems: Problem[]): MatrixError {
  const fields = problems.map((p) => `${p.field} is ${p.kind === "missing" ? "required" : "of the wrong type"}`).join("; ");
  const only = problems.length === 1 ? problems[0]! : undefined;
  return new MatrixError(only?.kind === "missing" ? "M_MISSING_PARAM" : "M_BAD_JSON", `Invalid keys: ${fields}`, 400);
}

/** Throws unless `dk` are well-typed device keys of `userId`'s `deviceId` (canonical JSON can carry them). */
export function checkDeviceKeys(dk: Json, userId: string, deviceId: string): void {
  const problems = deviceKeysProblems(dk);
  if (problems.length > 0) throw refusal(problems);
  if (dk.user_id !== userId) throw new MatrixError("M_BAD_JSON", "device_keys.user_id must be the user id of the access token", 400);
  if (dk.device_id !== deviceId) throw new MatrixError("M_BAD_JSON", "device_keys.device_id must be the device id of the access token", 400);
  canonicalJson(dk); // M_BAD_JSON for values canonical JSON cannot carry
}

/** A key string, or a KeyObject: `key`, `signatures` (user → key id → signature), an optional boolean `fallback`. */
function isKey(v: unknown): boolean {
  if (typeof v === "string") return true;
  if (!isPlainObject(v) || typeof v.key !== "string" || !isSignatures(v.signatures)) return false;
  return v.fallback === undefined || v.fallback === null || typeof v.fallback === "boolean";
}

export interface UploadedKey {
  id: string;
  algorithm: string;
  keyId: string;
  value: unknown;
  /** Canonical JSON of the value, as stored. */
  json: string;
}

/** A map of one-time or fallback keys: ids with exactly one colon (as Synapse splits them), valid keys. */
function readKeys(v: unknown, name: string): UploadedKey[] {
  if (v === undefined || v === null) return [];
  if (!isPlainObject(v)) throw new MatrixError("M_BAD_JSON", `${name} must be an object`, 400);
  return Object.entries(v).map(([id, value]) => {
    const parts = id.split(":");
    if (parts.length !== 2 || parts[0] === "" || parts[1] === "") throw new MatrixError("M_BAD_JSON", `Invalid ${name} key ${JSON.stringify(id)}: expected "<algorithm>:<key id>"`, 400);
    if (!isKey(value)) throw new MatrixError("M_BAD_JSON", `${name}.${id} must be a key string or an object with key and signatures`, 400);
    return { id, algorithm: parts[0]!, keyId: parts[1]!, value, json: canonicalJson(value) };
  });
}

/** What POST /keys/upload carries, as both faces parse it: each key map is `<algorithm>:<key id>` → key. */
export interface KeysUploadInput {
  deviceKeys?: Json;
  oneTimeKeys?: Json;
  fallbackKeys?: Json;
}

export interface UploadBody {
  deviceKeys?: Json;
  oneTimeKeys: UploadedKey[];
  fallbackKeys: UploadedKey[];
}

/** The REST body's fields (explicit null device_keys is M_INVALID_PARAM, as Synapse); not yet checked. */
export function keysUploadFromBody(body: Json): KeysUploadInput {
  const dk = body.device_keys;
  if (dk === null) throw new MatrixError("M_INVALID_PARAM", "device_keys must not be null", 400);
  if (dk !== undefined && !isPlainObject(dk)) throw new MatrixError("M_BAD_JSON", "device_keys must be an object", 400);
  const map = (v: unknown, name: string): Json | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!isPlainObject(v)) throw new MatrixError("M_BAD_JSON", `${name} must be an object`, 400);
    return v;
  };
  return { deviceKeys: dk, oneTimeKeys: map(body.one_time_keys, "one_time_keys"), fallbackKeys: map(body.fallback_keys, "fallback_keys") };
}

/** Reads and checks the whole upload before anything is stored. */
export function readUploadInput(input: KeysUploadInput, userId: string, deviceId: string): UploadBody {
  const dk = input.deviceKeys;
  if (dk) checkDeviceKeys(dk, userId, deviceId);
  return { deviceKeys: dk, oneTimeKeys: readKeys(input.oneTimeKeys, "one_time_keys"), fallbackKeys: readKeys(input.fallbackKeys, "fallback_keys") };
}
