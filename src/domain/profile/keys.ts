// The rules of profile keys and of a profile's size. Spec: Client-Server API "Profiles" (v1.16, MSC4133):
// a key follows the Common Namespaced Identifier Grammar (Appendices) and is at most 255 bytes
// (M_KEY_TOO_LARGE); the whole profile, as JSON, is at most 64 KiB (M_PROFILE_TOO_LARGE). As Synapse, the
// grammar is the appendix's — `[a-z]` then `[a-z0-9_.-]` — without its namespacing advice, so `foo` is a
// key (the OpenAPI's stricter pattern describes names clients should pick, not what servers refuse).
import { MatrixError } from "../errors.ts";
import { stringifyJson } from "../json-limits.ts";

export const MAX_PROFILE_KEY_BYTES = 255;
/** The largest profile, as JSON text in UTF-8 (Synapse's MAX_PROFILE_SIZE). */
export const MAX_PROFILE_BYTES = 65_536;

/** The keys the spec defines; every other one is a custom field. */
export const DISPLAYNAME = "displayname";
export const AVATAR_URL = "avatar_url";
export const TIME_ZONE = "m.tz";

const GRAMMAR = /^[a-z][a-z0-9_.-]*$/;

/** What is wrong with `key` as a profile key (the spec's error), or undefined when it is one. */
export function profileKeyProblem(key: string): MatrixError | undefined {
  if (key.length === 0) return new MatrixError("M_INVALID_PARAM", "Field name too short", 400);
  if (Buffer.byteLength(key, "utf8") > MAX_PROFILE_KEY_BYTES)
    return new MatrixError("M_KEY_TOO_LARGE", `Field name too long (max ${MAX_PROFILE_KEY_BYTES} bytes)`, 400);
  if (!GRAMMAR.test(key)) return new MatrixError("M_INVALID_PARAM", "Field name does not follow Common Namespaced Identifier Grammar", 400);
  return undefined;
}

/** Throws the spec's error for a key that is not a profile key. */
export function checkProfileKey(key: string): void {
  const problem = profileKeyProblem(key);
  if (problem) throw problem;
}

export function isProfileKey(key: string): boolean {
  return profileKeyProblem(key) === undefined;
}

/** Sets `key` as an own data property of a profile (keys are data: never the `__proto__` setter). */
export function putField(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The size of a profile (its stored keys and values) as JSON text in UTF-8. */
export function profileBytes(profile: Record<string, unknown>): number {
  return Buffer.byteLength(stringifyJson(profile), "utf8");
}

/** M_PROFILE_TOO_LARGE when the profile would be larger than MAX_PROFILE_BYTES. */
export function checkProfileSize(profile: Record<string, unknown>): void {
  if (profileBytes(profile) > MAX_PROFILE_BYTES)
    throw new MatrixError("M_PROFILE_TOO_LARGE", `Profile too large (max ${MAX_PROFILE_BYTES} bytes as JSON)`, 400);
}
