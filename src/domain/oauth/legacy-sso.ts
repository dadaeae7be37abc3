// OAuth 2.0 aware clients (spec v1.18 "OAuth 2.0 aware clients", MSC3824): with Weft's own OAuth server
// on and no OIDC provider configured, the legacy API's m.login.sso flow is served by the OAuth pages —
// GET /login/sso/redirect sends the browser to the pages' sign-in (or registration, with
// `action=register`), which end in a two-minute single-use loginToken for the client's redirectUrl (after a
// confirmation unless it is in sso.client_whitelist, as single sign-on does). /login then lists
// m.login.sso with `oauth_aware_preferred: true`, beside m.login.password.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken, newToken } from "../accounts/tokens.ts";
import { SSO_LOGIN_TOKEN_LIFETIME_MS } from "../sso/flow.ts";
import { oauthServerEnabled, oauthUrl } from "./endpoints.ts";

/** Whether m.login.sso is served by the OAuth pages. */
export function pageSsoEnabled(s: Services): boolean {
  return oauthServerEnabled(s) && !s.sso.enabled;
}

export function checkClientRedirect(redirectUrl: string | undefined): string {
  if (!redirectUrl) throw new MatrixError("M_MISSING_PARAM", "Missing redirectUrl", 400);
  let u: URL;
  try {
    u = new URL(redirectUrl);
  } catch {
    throw new MatrixError("M_INVALID_PARAM", "redirectUrl must be an absolute URL", 400);
  }
  if (u.protocol === "javascript:" || u.protocol === "data:") throw new MatrixError("M_INVALID_PARAM", "redirectUrl must be an absolute URL", 400);
  return redirectUrl;
}

/** GET /login/sso/redirect: where the browser goes (the pages, with the client's redirectUrl and action). */
export function pageSsoStart(s: Services, redirectUrl: string | undefined, action: string | undefined): string {
  if (!pageSsoEnabled(s)) throw new MatrixError("M_UNRECOGNIZED", "Single sign-on is not configured", 404);
  const u = new URL(oauthUrl(s, "sso"));
  u.searchParams.set("redirectUrl", checkClientRedirect(redirectUrl));
  if (action === "register" || action === "login") u.searchParams.set("action", action);
  return u.href;
}

/** The signed-in user's login token, in the redirect to the client, and whether that client is trusted. */
export async function pageSsoFinish(s: Services, userId: string, redirectUrl: string): Promise<{ redirect: string; trusted: boolean }> {
  const token = newToken("login");
  await s.sessions.createLoginToken(hashToken(token), userId, s.clock.now() + SSO_LOGIN_TOKEN_LIFETIME_MS);
  const u = new URL(checkClientRedirect(redirectUrl));
  u.searchParams.append("loginToken", token);
  return { redirect: u.href, trusted: s.config.sso.client_whitelist.some((prefix) => redirectUrl.startsWith(prefix)) };
}
