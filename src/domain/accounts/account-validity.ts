// Account validity (Synapse's account_validity, the contract's "expired accounts can log out"): new
// accounts expire `period` after registration; an expired account's requests get 403 M_EXPIRED_ACCOUNT,
// except logging out and asking for a renewal mail; a renewal link (token) extends it by `period`; admins
// set any expiry (POST /_synapse/admin/v1/account_validity/validity). The renewal mail goes through the
// mailers declared in src/main.ts (`renewalMailers`); without one the token is made but no mail leaves.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import type { RegistrationHook } from "./auto-join.ts";
import { AccountValidityStore } from "../store/account-validity.ts";
import { requireAdmin } from "../admin/require-admin.ts";
import { existingLocalUser } from "../admin/users.ts";
import { invalidateUserTokens } from "./authenticate.ts";
import { hashToken } from "./tokens.ts";
import { randomString } from "../ids.ts";

/** Sends the renewal link to the user (by e-mail); false when it could not (no address). */
export type RenewalMailer = (s: Services, userId: string, renewalUrl: string) => Promise<boolean>;

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

/** POST /account_validity/send_mail: a fresh renewal token, mailed as a link; allowed while expired. */
export async function sendRenewalMail(s: Services, r: Requester): Promise<void> {
  if (!s.config.account_validity.enabled) throw new MatrixError("M_UNRECOGNIZED", "Account validity is not enabled on this server", 404);
  const token = randomString(32);
  if ((await store(s).expirationOf(r.userId)) === null) await store(s).setExpiration(r.userId, s.clock.now() + s.config.account_validity.period);
  await store(s).setRenewalToken(r.userId, hashToken(token));
  const url = `${s.config.public_baseurl}_matrix/client/unstable/account_validity/renew?token=${encodeURIComponent(token)}`;
  for (const mail of s.extensions.renewalMailers) if (await mail(s, r.userId, url)) return void (await store(s).markEmailSent(r.userId));
  s.log.info({ userId: r.userId }, "account renewal requested, but no renewal mail could be sent (no mailer or no address)");
}

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
  invalidateUserTokens(s, row.userId);
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
  invalidateUserTokens(s, userId);
  return { expiration_ts: expiration };
}
