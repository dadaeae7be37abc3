// The device authorisation grant's browser face (RFC 8628 §3.3, MSC4341): the verification page where
// the user enters the code their device shows (or arrives with it, verification_uri_complete), signs in,
// and approves or denies. The same CSRF token and browser sign-in as the authorisation pages
// (oauth-authorize.ts); domain rules in src/domain/oauth/device-grant.ts.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { queryString, route, type Call } from "../http.ts";
import { OAUTH_PATHS, oauthServerEnabled } from "../../domain/oauth/endpoints.ts";
import { decideDeviceGrant, pendingDeviceGrant, type PendingDeviceGrant } from "../../domain/oauth/device-grant.ts";
import { browserLogin, browserLogout, browserSessionUser } from "../../domain/oauth/browser-login.ts";
import { consentPage, errorPage, loginPage, messagePage, userCodePage, type PageSubject } from "../oauth-pages/page.ts";
import { asPage } from "../oauth-pages/errors.ts";
import { oauthTheme } from "../oauth-pages/theme.ts";
import { CSRF_COOKIE, SESSION_COOKIE, csrfToken, readCookie, sessionCookie } from "../oauth-pages/cookies.ts";
import { formFields } from "./oauth.ts";
import { logOAuthRefusal } from "../../domain/oauth/refusal-log.ts";

async function handle(c: Call, s: Services, typed: string | undefined, form: Record<string, string> | undefined): Promise<unknown> {
  const cookies: string[] = [];
  const send = () => (cookies.length ? c.reply.header("set-cookie", cookies) : c.reply);
  const action = c.req.url.split("?")[0]!;
  const serverName = s.config.server_name;
  let csrf: string;
  if (form === undefined) csrf = csrfToken(c, s, cookies);
  else {
    const expected = readCookie(c, CSRF_COOKIE);
    if (!expected || form.csrf !== expected) {
      logOAuthRefusal(s, "csrf_mismatch", { endpoint: "device", ip: c.clientIp });
      return errorPage(oauthTheme(s), send(), 403, "invalid_request", "This form has expired or was not sent from this server's page. Start again.");
    }
    csrf = expected;
    s.ratelimiter.check(`oauth-authorize:${c.clientIp}`, s.config.oauth_server.rc_authorization);
  }
  if (typed === undefined || typed === "") return userCodePage(oauthTheme(s), send(), action, csrf, { serverName });
  // Every look-up of a user code counts (a GET with ?user_code= too): codes are short, guessing is throttled.
  if (form === undefined) s.ratelimiter.check(`oauth-authorize:${c.clientIp}`, s.config.oauth_server.rc_authorization);

  let grant: PendingDeviceGrant;
  try {
    grant = await pendingDeviceGrant(s, typed);
  } catch (err) {
    if (!(err instanceof MatrixError)) throw err;
    return userCodePage(oauthTheme(s), send(), action, csrf, { serverName, error: err.message, status: 400, typed });
  }
  const subject: PageSubject = { client: grant.client, scope: grant.scope, fields: { user_code: typed } };
  const sessionSecret = readCookie(c, SESSION_COOKIE);
  const signedIn = () => browserSessionUser(s, sessionSecret);

  switch (form?.action) {
    case undefined:
    case "code": {
      const userId = await signedIn();
      return userId ? consentPage(oauthTheme(s), send(), action, subject, csrf, userId) : loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName });
    }
    case "login":
      try {
        const { userId, sessionSecret: secret } = await browserLogin(s, form.username ?? "", form.password ?? "", c.clientIp);
        cookies.push(sessionCookie(s, secret));
        return consentPage(oauthTheme(s), send(), action, subject, csrf, userId);
      } catch (err) {
        if (!(err instanceof MatrixError)) throw err;
        return loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName, error: err.message, status: err.httpStatus, username: form.username });
      }
    case "switch":
      if (sessionSecret) await browserLogout(s, sessionSecret);
      cookies.push(sessionCookie(s, ""));
      return loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName });
    case "consent": {
      const userId = await signedIn();
      if (!userId) return loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName, error: "Your sign-in has expired: sign in again.", status: 401 });
      await decideDeviceGrant(s, grant, userId);
      return messagePage(oauthTheme(s), send(), "Device connected", "You may now return to your device.");
    }
    case "deny":
      await decideDeviceGrant(s, grant, null);
      return messagePage(oauthTheme(s), send(), "Request denied", "The device was not given access to your account.");
    default:
      return errorPage(oauthTheme(s), send(), 400, "invalid_request", "Unknown form action");
  }
}

export function oauthDeviceRoutes(app: FastifyInstance, s: Services): void {
  if (!oauthServerEnabled(s)) return;
  route(app, s, [OAUTH_PATHS.deviceVerification], { method: "GET", path: "", auth: "none", handler: (c) => asPage(s, c, () => handle(c, s, queryString(c, "user_code"), undefined)) });
  route(app, s, [OAUTH_PATHS.deviceVerification], {
    method: "POST", path: "", auth: "none",
    handler: (c) => asPage(s, c, async () => {
      const form = formFields(c);
      return handle(c, s, form.user_code, form);
    }),
  });
}
