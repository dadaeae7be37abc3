// E-mail validation sessions (spec: Client-Server API "Adding Account Administrative Contact Information",
// the requestToken endpoints; Synapse's "local" 3PID handling): requestToken creates or reuses a session
// and mails a one-time link; following the link validates the session; a validated session then proves the
// address once (adding it, registering with it, resetting a password). Whether the address already
// belongs to an account never shows in the answer: the session is made alike and the mail is sent in the
// background — just not at all when the address may not be used for this purpose.
import { randomBytes } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken } from "../accounts/tokens.ts";
import { isPlainObject } from "../events/types.ts";
import { validationMail } from "./mail-templates.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export type ValidationPurpose = "register" | "add" | "password";

/** The spec's client_secret grammar: [0-9a-zA-Z.=_-], 1–255 characters. */
const CLIENT_SECRET = /^[0-9a-zA-Z.=_-]{1,255}$/;
/** How long a validated session may be used after its link was followed (Synapse: 24 hours). */
const VALIDATED_SESSION_LIFETIME_MS = 24 * 3_600_000;

/** The link paths Synapse mails, so its e-mail templates and reverse-proxy rules carry over. */
export const SUBMIT_PATHS: Record<ValidationPurpose, string> = {
  register: "_matrix/client/unstable/registration/email/submit_token",
  add: "_matrix/client/unstable/add_threepid/email/submit_token",
  password: "_synapse/client/password_reset/email/submit_token",
};

function str(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (v === undefined || v === null) throw new MatrixError("M_MISSING_PARAM", `Missing param ${key}`, 400);
  if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${key} must be a string`, 400);
  return v;
}

export function checkClientSecret(secret: string): string {
  if (!CLIENT_SECRET.test(secret)) throw new MatrixError("M_INVALID_PARAM", "Invalid client_secret parameter", 400);
  return secret;
}

/** Synapse's canonicalise_email: trimmed, one "@", case folded; refused when it cannot be an address. */
export function canonicalEmail(raw: string): string {
  const address = raw.trim();
  const parts = address.split("@");
  if (
    parts.length !== 2 || !parts[0] || !parts[1] || address.length > 320 ||
    /[\s<>()[\]\\,;:"\x00-\x1f\x7f]/.test(address) || /^\.|\.$|\.\./.test(parts[1])
  )
    throw new MatrixError("M_INVALID_PARAM", "Unable to parse email address", 400);
  return `${parts[0].toLowerCase()}@${parts[1].toLowerCase()}`;
}

function checkNextLink(link: string | undefined): string | null {
  if (link === undefined) return null;
  let u: URL;
  try {
    u = new URL(link);
  } catch {
    throw new MatrixError("M_INVALID_PARAM", "next_link is not a URL", 400);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new MatrixError("M_INVALID_PARAM", "next_link must be an http(s) URL", 400);
  return link;
}

/** Refuses what the config forbids, before anything else is looked at. */
export function requireEmail(s: Services, purpose: ValidationPurpose): void {
  if (purpose === "add" && !s.config.enable_3pid_changes) throw new MatrixError("M_FORBIDDEN", "3PID changes are disabled on this server", 400);
  if (!s.config.email) throw new MatrixError("M_THREEPID_MEDIUM_NOT_SUPPORTED", "This server does not send e-mail: e-mail addresses cannot be validated", 400);
  if (purpose === "register" && !s.config.enable_registration) throw new MatrixError("M_FORBIDDEN", "Registration has been disabled", 403);
  if (purpose === "password" && !s.config.password_config.enabled) throw new MatrixError("M_FORBIDDEN", "Password resets are disabled on this server", 403);
}

/** May this address be used for the purpose? Never told to the requester. */
async function usable(s: Services, purpose: ValidationPurpose, address: string): Promise<boolean> {
  const owner = await s.threepids.owner("email", address);
  return purpose === "password" ? owner !== null : owner === null;
}

/** POST .../email/requestToken: `{sid}`, the same whatever the address's state. */
export async function requestEmailToken(s: Services, purpose: ValidationPurpose, body: Record<string, unknown>, clientIp: string): Promise<{ sid: string }> {
  refuseWhenDelegated(s);
  requireEmail(s, purpose);
  const secret = checkClientSecret(str(body, "client_secret"));
  const address = canonicalEmail(str(body, "email"));
  const attempt = body.send_attempt;
  if (attempt === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing param send_attempt", 400);
  if (typeof attempt !== "number" || !Number.isSafeInteger(attempt) || attempt < 0) throw new MatrixError("M_INVALID_PARAM", "send_attempt must be a non-negative integer", 400);
  const nextLink = checkNextLink(body.next_link === undefined || body.next_link === null ? undefined : str(body, "next_link"));
  s.ratelimiter.check(`3pid-validation-ip:${clientIp}`, s.config.rc_3pid_validation);
  s.ratelimiter.check(`3pid-validation:${address}`, s.config.rc_3pid_validation);

  const now = s.clock.now();
  const email = s.config.email!;
  const secretHash = hashToken(secret);
  await s.threepids.deleteSessionsBefore(now - VALIDATED_SESSION_LIFETIME_MS - email.validation_token_lifetime);
  let session = await s.threepids.sessionFor(secretHash, "email", address, purpose);
  // A retry with the same send_attempt gets the same session and no second mail (spec: send_attempt).
  if (session && attempt <= session.lastSendAttempt) return { sid: session.sessionId };
  const send = await usable(s, purpose, address);
  const token = randomBytes(24).toString("base64url");
  const expiry = now + email.validation_token_lifetime;
  if (session) {
    await s.threepids.newToken(session.sessionId, hashToken(token), expiry, attempt, nextLink);
  } else {
    session = {
      sessionId: randomBytes(18).toString("base64url"),
      medium: "email",
      address,
      clientSecretHash: secretHash,
      purpose,
      lastSendAttempt: attempt,
      tokenHash: hashToken(token),
      tokenExpiryTs: expiry,
      nextLink,
      validatedAt: null,
      createdTs: now,
    };
    await s.threepids.createSession(session);
  }
  if (send) {
    const link = new URL(SUBMIT_PATHS[purpose], s.config.public_baseurl);
    link.searchParams.set("token", token);
    link.searchParams.set("client_secret", secret);
    link.searchParams.set("sid", session.sessionId);
    const mail = validationMail(s, purpose, address, link.href);
    // In the background: the answer must not take longer for an address that gets mail.
    void s.mailer!.send(mail).catch((err: unknown) => s.log.warn({ err: (err as Error).message, purpose }, "could not send a validation e-mail"));
  }
  return { sid: session.sessionId };
}

/** Following the mailed link: validates the session. Returns where to send the browser next, if anywhere. */
export async function submitEmailToken(s: Services, purpose: ValidationPurpose, q: Record<string, string | undefined>): Promise<{ nextLink: string | null }> {
  const { token, sid, client_secret: secret } = q;
  if (!token || !sid || !secret) throw new MatrixError("M_MISSING_PARAM", "The link is incomplete: token, sid and client_secret are needed", 400);
  const session = await s.threepids.session(sid);
  const fail = () => new MatrixError("M_THREEPID_AUTH_FAILED", "This link is not valid, or has expired: ask for a new one", 400);
  if (!session || session.purpose !== purpose || session.clientSecretHash !== hashToken(secret)) throw fail();
  if (session.validatedAt !== null) return { nextLink: session.nextLink }; // followed twice: still fine
  if (session.tokenHash !== hashToken(token) || session.tokenExpiryTs < s.clock.now()) throw fail();
  await s.threepids.markValidated(sid, s.clock.now());
  return { nextLink: session.nextLink };
}

export interface ProvenThreepid {
  sessionId: string;
  medium: string;
  address: string;
  validatedAt: number;
}

/** The address a validated session proves (`threepid_creds` / `{sid, client_secret}`), else M_THREEPID_AUTH_FAILED. */
export async function provenThreepid(s: Services, creds: unknown): Promise<ProvenThreepid> {
  if (!isPlainObject(creds)) throw new MatrixError("M_MISSING_PARAM", "Missing threepid_creds", 400);
  const sid = str(creds, "sid");
  const secret = checkClientSecret(str(creds, "client_secret"));
  const session = await s.threepids.session(sid);
  if (!session || session.clientSecretHash !== hashToken(secret) || session.validatedAt === null || s.clock.now() - session.validatedAt > VALIDATED_SESSION_LIFETIME_MS)
    throw new MatrixError("M_THREEPID_AUTH_FAILED", "No validated 3pid session found", 400);
  return { sessionId: sid, medium: session.medium, address: session.address, validatedAt: session.validatedAt };
}
