// The cookies of the OAuth pages: the CSRF token (double-submit, SameSite=Strict) and the browser's
// sign-in (SameSite=Lax, so a client's top-level redirect to the pages still finds it), both HttpOnly,
// Secure when public_baseurl is https, scoped to the OAuth paths.
import { randomBytes } from "node:crypto";
import type { Services } from "../../domain/services.ts";
import type { Call } from "../http.ts";

export const CSRF_COOKIE = "weft_oauth_csrf";
export const SESSION_COOKIE = "weft_oauth_session";
const COOKIE_PATH = "/_weft/oauth2";

export function readCookie(c: Call, name: string): string | undefined {
  for (const part of (c.req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function cookie(s: Services, name: string, value: string, maxAgeS: number, sameSite: "Strict" | "Lax"): string {
  const secure = new URL(s.config.public_baseurl).protocol === "https:" ? "; Secure" : "";
  return `${name}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeS}; HttpOnly; SameSite=${sameSite}${secure}`;
}

/** The pages' sign-in cookie holding `secret` for oauth_server.browser_session_lifetime; "" ends it. */
export function sessionCookie(s: Services, secret: string): string {
  return secret ? cookie(s, SESSION_COOKIE, secret, Math.floor(s.config.oauth_server.browser_session_lifetime / 1000), "Lax") : cookie(s, SESSION_COOKIE, "", 0, "Lax");
}

/** The browser's CSRF token (made and set when it has none). */
export function csrfToken(c: Call, s: Services, cookies: string[]): string {
  const existing = readCookie(c, CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{32}$/.test(existing)) return existing;
  const token = randomBytes(24).toString("base64url");
  cookies.push(cookie(s, CSRF_COOKIE, token, 3600, "Strict"));
  return token;
}

