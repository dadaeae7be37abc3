// The login of the authorisation pages: username and password checked as POST /login checks them
// (rate limits rc_login, failed attempts counted, locked and deactivated accounts refused), then a
// browser session — a random secret in a cookie, its SHA-256 stored — lasting
// oauth_server.browser_session_lifetime, so a second authorisation in the same browser skips the password.
import { randomBytes } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken } from "../accounts/tokens.ts";
import { resolveLoginUser } from "../accounts/identifiers.ts";
import { checkPasswordLogin } from "../accounts/password-login.ts";
import { lockedError } from "../accounts/moderation.ts";

/** Checks the credentials; returns the user and a new browser session secret for the cookie. */
export async function browserLogin(s: Services, username: string, password: string, clientIp: string): Promise<{ userId: string; sessionSecret: string }> {
  s.ratelimiter.check(`login-address:${clientIp}`, s.config.rc_login.address);
  if (username.trim() === "") throw new MatrixError("M_MISSING_PARAM", "Enter your username", 400);
  const userId = resolveLoginUser(s, { identifier: { type: "m.id.user", user: username.trim() } });
  s.ratelimiter.check(`login-account:${userId}`, s.config.rc_login.account);
  await checkPasswordLogin(s, userId, password, clientIp);
  const user = await s.users.get(userId);
  if (user?.locked) throw lockedError();
  return { userId, sessionSecret: await startBrowserSession(s, userId) };
}

/** A new browser session of the user; returns the secret for the cookie. */
export async function startBrowserSession(s: Services, userId: string): Promise<string> {
  const sessionSecret = randomBytes(24).toString("base64url");
  const now = s.clock.now();
  await s.oauth.addBrowserSession(hashToken(sessionSecret), userId, now, now + s.config.oauth_server.browser_session_lifetime);
  return sessionSecret;
}

/** The user a browser session belongs to, if it is still valid and the account may still log in. */
export async function browserSessionUser(s: Services, sessionSecret: string | undefined): Promise<string | undefined> {
  if (!sessionSecret) return undefined;
  const userId = await s.oauth.browserSessionUser(hashToken(sessionSecret), s.clock.now());
  if (!userId) return undefined;
  const user = await s.users.get(userId);
  return user && !user.deactivated && !user.locked ? userId : undefined;
}

export async function browserLogout(s: Services, sessionSecret: string): Promise<void> {
  await s.oauth.deleteBrowserSession(hashToken(sessionSecret));
}
