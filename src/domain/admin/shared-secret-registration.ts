// Shared-secret registration (Synapse admin API "Shared-Secret Registration", POST/GET
// /_synapse/admin/v1/register): one-use nonces valid 60 s, and accounts created by whoever can compute
// the HMAC-SHA1 keyed by `registration_shared_secret`. The MAC helper is shared with `weft register-user`.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { createAccount } from "../accounts/register.ts";
import { hashPassword } from "../accounts/passwords.ts";
import { checkUsername } from "../accounts/usernames.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

/** How long a nonce may be used after it was handed out (Synapse: 60 seconds). */
export const NONCE_LIFETIME_MS = 60_000;

/** The user types Synapse knows (UserTypes); anything else is refused. */
export const USER_TYPES = ["support", "bot"] as const;

const MAX_FIELD_LENGTH = 512;

/**
 * The request's MAC: hex HMAC-SHA1 keyed by the shared secret over
 * `nonce \0 username \0 password \0 ("admin" | "notadmin") [\0 user_type]`.
 */
export function sharedSecretMac(secret: string, m: { nonce: string; username: string; password: string; admin: boolean; userType?: string | null }): string {
  const h = createHmac("sha1", Buffer.from(secret, "utf8"));
  h.update(m.nonce, "utf8").update("\0").update(m.username, "utf8").update("\0").update(m.password, "utf8");
  h.update("\0").update(m.admin ? "admin" : "notadmin");
  if (m.userType) h.update("\0").update(m.userType, "utf8");
  return h.digest("hex");
}

function sharedSecret(s: Services): string {
  const secret = s.config.registration_shared_secret;
  if (!secret) throw new MatrixError("M_UNKNOWN", "Shared secret registration is not enabled", 400);
  return secret;
}

/** GET /register: a fresh one-use nonce. */
export async function newRegistrationNonce(s: Services): Promise<{ nonce: string }> {
  refuseWhenDelegated(s);
  sharedSecret(s);
  const nonce = randomBytes(32).toString("hex");
  await s.nonces.create(nonce, s.clock.now());
  return { nonce };
}

function requiredString(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (v === undefined || v === null) throw new MatrixError("M_MISSING_PARAM", `${key} must be specified`, 400);
  if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${key} must be a string`, 400);
  return v;
}

function optional<T extends "string" | "boolean">(body: Record<string, unknown>, key: string, type: T) {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== type) throw new MatrixError("M_BAD_JSON", `${key} must be a ${type}`, 400);
  return v as T extends "string" ? string : boolean;
}

function macMatches(got: string, want: string): boolean {
  const a = Buffer.from(got.toLowerCase(), "utf8");
  const b = Buffer.from(want, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface SharedSecretRegistration {
  access_token: string;
  user_id: string;
  home_server: string;
  device_id: string;
}

/**
 * POST /register. The nonce is spent as soon as it is recognised, even when the rest of the request
 * then fails (as Synapse does), so a MAC can never be guessed against one nonce twice.
 */
export async function registerWithSharedSecret(s: Services, body: Record<string, unknown>): Promise<SharedSecretRegistration> {
  refuseWhenDelegated(s);
  const secret = sharedSecret(s);
  const nonce = requiredString(body, "nonce");
  if (!(await s.nonces.consume(nonce, s.clock.now(), NONCE_LIFETIME_MS)))
    throw new MatrixError("M_UNKNOWN", "unrecognised nonce", 400);

  const username = requiredString(body, "username");
  if (username.length > MAX_FIELD_LENGTH || username.includes("\0"))
    throw new MatrixError("M_INVALID_USERNAME", "Invalid username", 400);
  const password = requiredString(body, "password");
  if (password.length > MAX_FIELD_LENGTH || password.includes("\0"))
    throw new MatrixError("M_INVALID_PARAM", "Invalid password", 400);
  const displayname = optional(body, "displayname", "string");
  const admin = optional(body, "admin", "boolean") ?? false;
  const userType = optional(body, "user_type", "string");
  if (userType !== undefined && !(USER_TYPES as readonly string[]).includes(userType))
    throw new MatrixError("M_INVALID_PARAM", "Invalid user type", 400);
  const mac = requiredString(body, "mac");

  if (!macMatches(mac, sharedSecretMac(secret, { nonce, username, password, admin, userType })))
    throw new MatrixError("M_FORBIDDEN", "HMAC incorrect", 403);

  // The MAC covers the username as sent; the account is its lower-cased form (as Synapse registers it).
  const userId = await checkUsername(s, username.toLowerCase());
  const passwordHash = await hashPassword(password, s.config.password_config.scrypt_log_n);
  const res = await createAccount(s, {}, { userId, passwordHash, isAdmin: admin, userType: userType ?? null, displayname });
  return { access_token: res.access_token!, user_id: res.user_id, home_server: res.home_server, device_id: res.device_id! };
}
