// Registration on the authorisation pages (spec v1.15 "User registration": `prompt=create`, OpenID
// Connect's "Initiating User Registration"): offered when this server lets anyone register with a
// password — enable_registration, password login on, no e-mail required (those registrations need
// /register's e-mail validation) — with the registration token field when registration_requires_token.
// The same rules as POST /register: the username's, the password policy, rc_registration.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { checkUsername } from "../accounts/usernames.ts";
import { checkPasswordPolicy, hashPassword } from "../accounts/passwords.ts";
import { createAccount } from "../accounts/register.ts";
import { RegistrationTokenStore } from "../store/registration-tokens.ts";
import { startBrowserSession } from "./browser-login.ts";

export function pageRegistrationOffered(s: Services): boolean {
  const c = s.config;
  return c.enable_registration && c.password_config.enabled && c.password_config.localdb_enabled && !c.registrations_require_3pid.includes("email");
}

export interface PageRegistration {
  username: string;
  password: string;
  confirm: string;
  token?: string;
}

/** Creates the account and signs the browser in; returns the user and the browser session's secret. */
export async function browserRegister(s: Services, f: PageRegistration, clientIp: string): Promise<{ userId: string; sessionSecret: string }> {
  if (!pageRegistrationOffered(s)) throw new MatrixError("M_FORBIDDEN", "Registration has been disabled", 403);
  const rateKey = `register:${clientIp}`;
  s.ratelimiter.check(rateKey, s.config.rc_registration, { update: false });
  const username = f.username.trim().toLowerCase();
  if (username === "") throw new MatrixError("M_MISSING_PARAM", "Choose a username", 400);
  const userId = await checkUsername(s, username);
  if (f.password !== f.confirm) throw new MatrixError("M_INVALID_PARAM", "The two passwords differ", 400);
  if (f.password === "") throw new MatrixError("M_MISSING_PARAM", "Choose a password", 400);
  checkPasswordPolicy(f.password, s.config.password_config.policy);
  let registrationToken: string | undefined;
  if (s.config.registration_requires_token) {
    const token = f.token?.trim() ?? "";
    if (!RegistrationTokenStore.isValid(await s.registrationTokens.get(token), s.clock.now()))
      throw new MatrixError("M_FORBIDDEN", "This registration token is not valid", 403);
    await s.registrationTokens.addPending(token);
    registrationToken = token;
  }
  const passwordHash = await hashPassword(f.password, s.config.password_config.scrypt_log_n);
  s.ratelimiter.check(rateKey, s.config.rc_registration);
  await createAccount(s, { inhibit_login: true }, { userId, passwordHash, registrationToken });
  return { userId, sessionSecret: await startBrowserSession(s, userId) };
}
