// Small readers for the E2EE request bodies, each failing with the spec's error; and the canonical
// comparisons the key rules use. Spec: Client-Server API "End-to-End Encryption".
import { MatrixError } from "../errors.ts";
import { canonicalJson } from "../canonical-json.ts";
import { isPlainObject } from "../events/types.ts";
import type { Requester } from "../accounts/requester.ts";

export { isPlainObject };
export type Json = Record<string, unknown>;

export function objectField(body: Json, name: string, required: true): Json;
export function objectField(body: Json, name: string, required?: false): Json | undefined;
export function objectField(body: Json, name: string, required = false): Json | undefined {
  const v = body[name];
  if (v === undefined || v === null) {
    if (required) throw new MatrixError("M_MISSING_PARAM", `Missing ${name}`, 400);
    return undefined;
  }
  if (!isPlainObject(v)) throw new MatrixError("M_BAD_JSON", `${name} must be an object`, 400);
  return v;
}

/** Canonical JSON of the object without `signatures` and `unsigned` (what a signature covers). */
export function signedPart(obj: Json): string {
  const { signatures: _s, unsigned: _u, ...rest } = obj;
  return canonicalJson(rest);
}

/** The requester's device id; key uploads and to-device sending need one. */
export function requireDevice(r: Requester): string {
  if (!r.deviceId) throw new MatrixError("M_INVALID_PARAM", "This access token has no device: log in with a device to use end-to-end encryption", 400);
  return r.deviceId;
}

export function parseJson(text: string): Json {
  return JSON.parse(text) as Json;
}

/** Merges stored signatures into an object's `signatures` (the object is copied). */
export function withSignatures(obj: Json, extra: { signer: string; keyId: string; signature: string }[]): Json {
  if (extra.length === 0) return obj;
  const sigs: Record<string, Record<string, string>> = {};
  if (isPlainObject(obj.signatures))
    for (const [k, v] of Object.entries(obj.signatures)) if (isPlainObject(v)) sigs[k] = { ...(v as Record<string, string>) };
  for (const e of extra) (sigs[e.signer] ??= {})[e.keyId] = e.signature;
  return { ...obj, signatures: sigs };
}
