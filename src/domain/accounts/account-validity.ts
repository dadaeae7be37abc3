// Account validity (Synapse's account_validity, the contract's "expired accounts can log out"): new
// accounts expire `period` after registration; an expired account's requests get 403 M_EXPIRED_ACCOUNT,
// except logging out and asking for a renewal mail; a renewal link (token) extends it by `period`; admins
// set any expiry (POST /_synapse/admin/v1/account_validity/validity). With `renew_at`, a job mails each
// account a renewal link once when its expiry comes within renew_at, and send_mail mails one on request;
// mails go through the mailers declared in src/main.ts (`renewalMailers`).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import type { RegistrationHook } from "./auto-join.ts";
import type { BackgroundTask } from "../extensions.ts";
import { AccountValidityStore } from "../store/account-validity.ts";
import { requireAdmin } from "../admin/require-admin.ts";
import { existingLocalUser } from "../admin/users.ts";
import { invalidateUserTokens } from "./authenticate.ts";
import { hashToken } from "./tokens.ts";
import { randomString } from "../ids.ts";

/**
 * Sends a renewal link to the user (by e-mail) for an account expiring at `expirationTs`; false when it
 * could not (no address). `link()` makes the one-time token and its URL: called only when a mail leaves.
 */
export type RenewalMailer = (s: Services, userId: string, expirationTs: number, link: () => Promise<string>) => Promise<boolean>;

/** How often the renewal job looks for accounts expiring within `renew_at` (Synapse: every 30 minutes). */
const RENEWAL_JOB_INTERVAL_MS = 30 * 60_000;

const store = (s: Services) => new AccountValidityStore(s.storage.sql);

export function expiredAccount(): MatrixError {
  return new MatrixError("M_EXPIRED_ACCOUNT", "User account has expired", 403);
}

/** The account's expiry when account validity is on (null: never expires). Read with the access token. */
export async function accountExpiry(s: Services, userId: string): Promise<number | null> {
  if (!s.config.account_validity.enabled) return null;
  return store(s).expirationOf(userId);
}

/** A new account expires one period from now (a registration hook, src/main.ts). */
export const startAccountValidity: RegistrationHook = async (s, account) => {
  if (!s.config.account_validity.enabled || account.appserviceId !== undefined) return;
  await store(s).setExpiration(account.userId, s.clock.now() + s.config.account_validity.period);
};

/** POST /account_validity/send_mail: a fresh renewal link, mailed; allowed while expired (as Synapse). */
export async function sendRenewalMail(s: Services, r: Requester): Promise<void> {
  if (!s.config.account_validity.enabled) throw new MatrixError("M_UNRECOGNIZED", "Account validity is not enabled on this server", 404);
  if (s.config.account_validity.renew_at === undefined) throw new MatrixError("M_FORBIDDEN", "Account renewal via email is disabled on this server.", 403);
  const expiry = await store(s).expirationOf(r.userId);
  if (expiry === null) throw new MatrixError("M_UNKNOWN", `User has no expiration time: ${r.userId}`, 400);
  if (!(await mailRenewal(s, r.userId, expiry))) s.log.info({ userId: r.userId }, "account renewal requested, but no renewal mail could be sent (no mailer or no address)");
}

/** Mails a renewal link through the first mailer that can; marks the account as mailed for this period. */
async function mailRenewal(s: Services, userId: string, expirationTs: number): Promise<boolean> {
  const link = async () => {
    const token = randomString(32);
    await store(s).setRenewalToken(userId, hashToken(token));
    return `${s.config.public_baseurl}_matrix/client/unstable/account_validity/renew?token=${encodeURIComponent(token)}`;
  };
  for (const mail of s.extensions.renewalMailers) {
    if (await mail(s, userId, expirationTs, link)) {
      await store(s).markEmailSent(userId);
      return true;
    }
  }
  return false;
}

/** One pass of the renewal job: every account expiring within `renew_at` and not yet mailed this period. */
export async function sendDueRenewalMails(s: Services): Promise<void> {
  const renewAt = s.config.account_validity.renew_at;
  if (!s.config.account_validity.enabled || renewAt === undefined) return;
  for (const due of await store(s).expiringWithin(s.clock.now(), renewAt)) {
    try {
      await mailRenewal(s, due.userId, due.expirationTs);
    } catch (err) {
      s.log.warn({ err, userId: due.userId }, "could not send an account renewal mail");
    }
  }
}

/**
 * The renewal job (declared in src/main.ts, `background`): at start, then every 30 minutes, mails each
 * account whose expiry is within `renew_at` — once a validity period (a renewal makes it due again).
 */
export const renewalMailJob: BackgroundTask = (s) => {
  if (!s.config.account_validity.enabled || s.config.account_validity.renew_at === undefined) return () => {};
  if (s.extensions.renewalMailers.length === 0 || !s.mailer) {
    s.log.warn("account_validity.renew_at is set, but no email section (notif_from) is configured: no renewal mail will be sent");
    return () => {};
  }
  let running: Promise<void> | undefined;
  const pass = () => {
    running ??= s.inFlight.track(() => sendDueRenewalMails(s)).finally(() => (running = undefined));
  };
  pass();
  const timer = setInterval(pass, RENEWAL_JOB_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
};

/** GET /account_validity/renew?token=: extends the account by one period; the page to show and its status. */
export async function renewAccount(s: Services, token: string | undefined): Promise<{ status: number; html: string }> {
  const page = (title: string, text: string) => `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title></head><body><p>${text}</p></body></html>`;
  const invalid = { status: 404, html: page("Invalid renewal token", "Invalid renewal token.") };
  if (!s.config.account_validity.enabled || !token) return invalid;
  const hash = hashToken(token);
  const row = await store(s).byRenewalToken(hash);
  if (!row) return invalid;
  if (row.tokenUsedTs !== null) return { status: 200, html: page("Account already renewed", "Your account has already been renewed.") };
  await store(s).renewWithToken(hash, s.clock.now() + s.config.account_validity.period, s.clock.now());
  await invalidateUserTokens(s, row.userId);
  return { status: 200, html: page("Account renewed", "Your account has been successfully renewed.") };
}

/** POST /_synapse/admin/v1/account_validity/validity `{user_id, expiration_ts?, enable_renewal_emails?}`. */
export async function adminSetAccountValidity(s: Services, r: Requester, body: Record<string, unknown>): Promise<{ expiration_ts: number }> {
  requireAdmin(r);
  if (!s.config.account_validity.enabled) throw new MatrixError("M_UNKNOWN", "Account validity is not enabled on this server", 400);
  const userId = body.user_id;
  if (userId === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing param user_id", 400);
  if (typeof userId !== "string") throw new MatrixError("M_INVALID_PARAM", "user_id must be a string", 400);
  const ts = body.expiration_ts;
  if (ts !== undefined && (typeof ts !== "number" || !Number.isSafeInteger(ts) || ts < 0)) throw new MatrixError("M_INVALID_PARAM", "expiration_ts must be a non-negative integer", 400);
  const emails = body.enable_renewal_emails ?? true;
  if (typeof emails !== "boolean") throw new MatrixError("M_INVALID_PARAM", "enable_renewal_emails must be a boolean", 400);
  await existingLocalUser(s, userId);
  const expiration = typeof ts === "number" ? ts : s.clock.now() + s.config.account_validity.period;
  // With renewal mails off the account counts as already mailed, so none is sent.
  await store(s).setExpiration(userId, expiration, !emails);
  await invalidateUserTokens(s, userId);
  return { expiration_ts: expiration };
}
