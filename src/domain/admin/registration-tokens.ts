// Managing registration tokens (Synapse admin API "Registration Tokens", /_synapse/admin/v1/
// registration_tokens): list, read, create (given or random), update and delete, admins only, with
// Synapse's validation. The tokens gate the m.login.registration_token UIA stage (spec v1.2).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { randomString } from "../ids.ts";
import { RegistrationTokenStore, type RegistrationTokenRow } from "../store/registration-tokens.ts";
import { requireAdmin } from "./require-admin.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

/** The spec's grammar for registration tokens: 1 to 64 of [A-Za-z0-9._~-]. */
const TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-";
const TOKEN_RE = /^[A-Za-z0-9._~-]{1,64}$/;

export interface RegistrationTokenJson {
  token: string;
  uses_allowed: number | null;
  pending: number;
  completed: number;
  expiry_time: number | null;
}

const toJson = (t: RegistrationTokenRow): RegistrationTokenJson => ({
  token: t.token,
  uses_allowed: t.usesAllowed,
  pending: t.pending,
  completed: t.completed,
  expiry_time: t.expiryTime,
});

const noSuchToken = (token: string) => new MatrixError("M_NOT_FOUND", `No such registration token: ${token}`, 404);
const invalid = (msg: string) => new MatrixError("M_INVALID_PARAM", msg, 400);
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);

function usesAllowed(v: unknown): number | null {
  if (v === null) return null;
  if (!isInt(v) || v < 0) throw invalid("uses_allowed must be a non-negative integer or null");
  return v;
}

function expiryTime(s: Services, v: unknown): number | null {
  if (v === null) return null;
  if (!isInt(v)) throw invalid("expiry_time must be an integer or null");
  if (v < s.clock.now()) throw invalid("expiry_time must not be in the past");
  return v;
}

/** GET /registration_tokens[?valid=true|false] */
export async function listRegistrationTokens(s: Services, requester: Requester, valid?: boolean): Promise<RegistrationTokenJson[]> {
  refuseWhenDelegated(s);
  requireAdmin(requester);
  const now = s.clock.now();
  const all = await s.registrationTokens.list();
  const kept = valid === undefined ? all : all.filter((t) => RegistrationTokenStore.isValid(t, now) === valid);
  return kept.map(toJson);
}

/** GET /registration_tokens/{token} */
export async function getRegistrationToken(s: Services, requester: Requester, token: string): Promise<RegistrationTokenJson> {
  refuseWhenDelegated(s);
  requireAdmin(requester);
  const t = await s.registrationTokens.get(token);
  if (!t) throw noSuchToken(token);
  return toJson(t);
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === "P2002";

/** POST /registration_tokens/new: {token?, length?, uses_allowed?, expiry_time?} */
export async function createRegistrationToken(s: Services, requester: Requester, body: Record<string, unknown>): Promise<RegistrationTokenJson> {
  refuseWhenDelegated(s);
  requireAdmin(requester);
  const uses = body.uses_allowed === undefined ? null : usesAllowed(body.uses_allowed);
  const expiry = body.expiry_time === undefined ? null : expiryTime(s, body.expiry_time);

  if (body.token !== undefined) {
    const token = body.token;
    if (typeof token !== "string" || !TOKEN_RE.test(token))
      throw invalid("token must consist only of characters matched by the regex [A-Za-z0-9._~-] and be 1 to 64 characters long");
    try {
      return toJson(await s.registrationTokens.create({ token, usesAllowed: uses, expiryTime: expiry }));
    } catch (err) {
      if (isUniqueViolation(err)) throw invalid(`Token already exists: ${token}`);
      throw err;
    }
  }

  const length = body.length === undefined ? 16 : body.length;
  if (!isInt(length) || length < 1 || length > 64) throw invalid("length must be an integer between 1 and 64 inclusive");
  // Short random tokens can collide with existing ones: draw again a few times before giving up.
  for (let attempt = 0; attempt < 5; attempt++) {
    const token = randomString(length, TOKEN_CHARS);
    try {
      return toJson(await s.registrationTokens.create({ token, usesAllowed: uses, expiryTime: expiry }));
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  throw new MatrixError("M_UNKNOWN", "Could not generate a unique registration token: try a greater length", 500);
}

/** PUT /registration_tokens/{token}: {uses_allowed?, expiry_time?}; omitted fields keep their value. */
export async function updateRegistrationToken(
  s: Services,
  requester: Requester,
  token: string,
  body: Record<string, unknown>,
): Promise<RegistrationTokenJson> {
  refuseWhenDelegated(s);
  requireAdmin(requester);
  const patch: { usesAllowed?: number | null; expiryTime?: number | null } = {};
  if (body.uses_allowed !== undefined) patch.usesAllowed = usesAllowed(body.uses_allowed);
  if (body.expiry_time !== undefined) patch.expiryTime = expiryTime(s, body.expiry_time);
  const t = Object.keys(patch).length === 0 ? await s.registrationTokens.get(token) : await s.registrationTokens.update(token, patch);
  if (!t) throw noSuchToken(token);
  return toJson(t);
}

/** DELETE /registration_tokens/{token} */
export async function deleteRegistrationToken(s: Services, requester: Requester, token: string): Promise<void> {
  refuseWhenDelegated(s);
  requireAdmin(requester);
  if (!(await s.registrationTokens.delete(token))) throw noSuchToken(token);
}
