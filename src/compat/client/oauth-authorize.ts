// The authorisation endpoint's browser face (RFC 6749 §4.1, MSC2964): GET shows the login page (or the
// consent page for a browser already signed in; the registration page with prompt=create), POST takes the
// forms — login, register, consent, deny, switch user. Every POST needs the CSRF token of the form to
// equal the cookie's (else 403, nothing happens); the request's parameters come back in hidden fields and
// are checked again each time. Domain rules live in src/domain/oauth; the pages in src/compat/oauth-pages.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { route, type Call } from "../http.ts";
import { OAUTH_PATHS, oauthServerEnabled } from "../../domain/oauth/endpoints.ts";
import { REQUEST_PARAMS, denyAuthorization, grantAuthorization, parseAuthorizationRequest, type AuthorizationRequest, type RequestParams } from "../../domain/oauth/authorization.ts";
import { browserLogin, browserLogout, browserSessionUser } from "../../domain/oauth/browser-login.ts";
import { consentPage, errorPage, loginPage, registerPage, type PageSubject } from "../oauth-pages/page.ts";
import { asPage } from "../oauth-pages/errors.ts";
import { oauthTheme } from "../oauth-pages/theme.ts";
import { browserRegister, pageRegistrationOffered } from "../../domain/oauth/browser-register.ts";
import { formFields } from "./oauth.ts";
import { logOAuthRefusal } from "../../domain/oauth/refusal-log.ts";
import { CSRF_COOKIE, SESSION_COOKIE, csrfToken, readCookie, sessionCookie } from "../oauth-pages/cookies.ts";

function pick(source: Record<string, unknown>): RequestParams {
  const out: RequestParams = {};
  for (const k of REQUEST_PARAMS) {
    const v = Array.isArray(source[k]) ? (source[k] as unknown[])[0] : source[k];
    if (typeof v === "string") out[k] = v;
  }
  return out;
}

async function handle(c: Call, s: Services, params: RequestParams, form: Record<string, string> | undefined): Promise<unknown> {
  const cookies: string[] = [];
  const send = () => (cookies.length ? c.reply.header("set-cookie", cookies) : c.reply);
  const parsed = await parseAuthorizationRequest(s, params, c.clientIp);
  if (parsed.kind === "invalid") return errorPage(oauthTheme(s), send(), 400, parsed.error.errcode, parsed.error.message);
  if (parsed.kind === "redirect") return send().code(303).header("location", parsed.location).header("cache-control", "no-store").send();
  const request: AuthorizationRequest = parsed.request;
  const subject: PageSubject = {
    client: request.client,
    scope: request.scope,
    redirectUri: request.redirectUri,
    fields: Object.fromEntries(Object.entries(request.params).filter(([, v]) => v !== undefined)) as Record<string, string>,
  };
  const action = c.req.url.split("?")[0]!;
  const sessionSecret = readCookie(c, SESSION_COOKIE);
  const serverName = s.config.server_name;

  const offerRegistration = pageRegistrationOffered(s);
  const register = (csrf: string, extra: { error?: string; status?: number; username?: string } = {}) =>
    registerPage(oauthTheme(s), send(), action, subject, csrf, { serverName, tokenField: s.config.registration_requires_token, ...extra });
  if (form === undefined) {
    const csrf = csrfToken(c, s, cookies);
    if (params.prompt === "create" && offerRegistration) return register(csrf);
    const userId = params.prompt === "login" ? undefined : await browserSessionUser(s, sessionSecret);
    return userId ? consentPage(oauthTheme(s), send(), action, subject, csrf, userId) : loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName, offerRegistration });
  }

  const expected = readCookie(c, CSRF_COOKIE);
  if (!expected || form.csrf !== expected) {
    logOAuthRefusal(s, "csrf_mismatch", { endpoint: "authorize", clientId: request.client.client_id, ip: c.clientIp });
    return errorPage(oauthTheme(s), send(), 403, "invalid_request", "This form has expired or was not sent from this server's page. Go back to the application and start again.");
  }
  const csrf = expected;
  s.ratelimiter.check(`oauth-authorize:${c.clientIp}`, s.config.oauth_server.rc_authorization);
  const redirect = (location: string) => send().code(303).header("location", location).header("cache-control", "no-store").send();

  switch (form.action) {
    case "deny":
      return redirect(denyAuthorization(request));
    case "switch":
      if (sessionSecret) await browserLogout(s, sessionSecret);
      cookies.push(sessionCookie(s, ""));
      return loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName });
    case "show_register":
      return offerRegistration ? register(csrf) : loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName });
    case "show_login":
      return loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName, offerRegistration });
    case "register":
      try {
        const { userId, sessionSecret: secret } = await browserRegister(s, { username: form.username ?? "", password: form.password ?? "", confirm: form.confirm ?? "", token: form.token }, c.clientIp);
        cookies.push(sessionCookie(s, secret));
        return consentPage(oauthTheme(s), send(), action, subject, csrf, userId);
      } catch (err) {
        if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED") throw err;
        return register(csrf, { error: err.message, status: err.httpStatus, username: form.username });
      }
    case "login": {
      try {
        const { userId, sessionSecret: secret } = await browserLogin(s, form.username ?? "", form.password ?? "", c.clientIp);
        cookies.push(sessionCookie(s, secret));
        return consentPage(oauthTheme(s), send(), action, subject, csrf, userId);
      } catch (err) {
        if (!(err instanceof MatrixError)) throw err;
        return loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName, offerRegistration, error: err.message, status: err.httpStatus, username: form.username });
      }
    }
    case "consent": {
      const userId = await browserSessionUser(s, sessionSecret);
      if (!userId) return loginPage(oauthTheme(s), send(), action, subject, csrf, { serverName, error: "Your sign-in has expired: sign in again.", status: 401 });
      return redirect(await grantAuthorization(s, request, userId));
    }
    default:
      return errorPage(oauthTheme(s), send(), 400, "invalid_request", "Unknown form action");
  }
}

export function oauthAuthorizeRoutes(app: FastifyInstance, s: Services): void {
  if (!oauthServerEnabled(s)) return;
  route(app, s, [OAUTH_PATHS.authorization], { method: "GET", path: "", auth: "none", handler: (c) => asPage(s, c, () => handle(c, s, pick(c.query), undefined)) });
  route(app, s, [OAUTH_PATHS.authorization], {
    method: "POST", path: "", auth: "none",
    handler: (c) => asPage(s, c, async () => {
      const form = formFields(c);
      return handle(c, s, pick(form), form);
    }),
  });
}
