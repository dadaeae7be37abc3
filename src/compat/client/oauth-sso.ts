// The legacy m.login.sso flow served by the OAuth pages (MSC3824, src/domain/oauth/legacy-sso.ts): the
// sign-in page (or the registration page for `action=register`), then the redirect to the client with a
// loginToken — straight away for sso.client_whitelist, after a "Continue" page otherwise. The same CSRF
// token and browser sign-in as the other OAuth pages.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { queryString, route, type Call } from "../http.ts";
import { OAUTH_PATHS, oauthServerEnabled } from "../../domain/oauth/endpoints.ts";
import { checkClientRedirect, pageSsoEnabled, pageSsoFinish } from "../../domain/oauth/legacy-sso.ts";
import { browserLogin } from "../../domain/oauth/browser-login.ts";
import { browserRegister, pageRegistrationOffered } from "../../domain/oauth/browser-register.ts";
import { continuePage, errorPage, loginPage, registerPage, type LoginSubject } from "../oauth-pages/page.ts";
import { asPage } from "../oauth-pages/errors.ts";
import { oauthTheme } from "../oauth-pages/theme.ts";
import { logOAuthRefusal } from "../../domain/oauth/refusal-log.ts";
import { CSRF_COOKIE, csrfToken, readCookie, sessionCookie } from "../oauth-pages/cookies.ts";
import { formFields } from "./oauth.ts";

async function handle(c: Call, s: Services, redirectUrl: string | undefined, wanted: string | undefined, form: Record<string, string> | undefined): Promise<unknown> {
  if (!pageSsoEnabled(s)) throw new MatrixError("M_UNRECOGNIZED", "Single sign-on is not configured", 404);
  const target = checkClientRedirect(redirectUrl);
  const cookies: string[] = [];
  const reply = () => (cookies.length ? c.reply.header("set-cookie", cookies) : c.reply);
  const action = c.req.url.split("?")[0]!;
  const serverName = s.config.server_name;
  const offerRegistration = pageRegistrationOffered(s);
  const subject: LoginSubject = { fields: { redirectUrl: target }, intro: `Sign in to continue to ${new URL(target).host || "your application"}.` };
  const finish = async (userId: string) => {
    const { redirect, trusted } = await pageSsoFinish(s, userId, target);
    return trusted ? reply().code(303).header("location", redirect).header("cache-control", "no-store").send() : continuePage(oauthTheme(s), reply(), redirect, userId);
  };
  const register = (csrf: string, extra: { error?: string; status?: number; username?: string } = {}) =>
    registerPage(oauthTheme(s), reply(), action, subject, csrf, { serverName, tokenField: s.config.registration_requires_token, ...extra });
  const login = (csrf: string, extra: { error?: string; status?: number; username?: string } = {}) =>
    loginPage(oauthTheme(s), reply(), action, subject, csrf, { serverName, offerRegistration, ...extra });

  if (form === undefined) {
    const csrf = csrfToken(c, s, cookies);
    if (wanted === "register" && offerRegistration) return register(csrf);
    return login(csrf);
  }
  const csrf = readCookie(c, CSRF_COOKIE);
  if (!csrf || form.csrf !== csrf) {
    logOAuthRefusal(s, "csrf_mismatch", { endpoint: "sso", ip: c.clientIp });
    return errorPage(oauthTheme(s), reply(), 403, "invalid_request", "This form has expired or was not sent from this server's page. Start again.");
  }
  s.ratelimiter.check(`oauth-authorize:${c.clientIp}`, s.config.oauth_server.rc_authorization);
  const signIn = (secret: string) => cookies.push(sessionCookie(s, secret));
  switch (form.action) {
    case "show_register":
      return offerRegistration ? register(csrf) : login(csrf);
    case "show_login":
      return login(csrf);
    case "login":
      try {
        const { userId, sessionSecret } = await browserLogin(s, form.username ?? "", form.password ?? "", c.clientIp);
        signIn(sessionSecret);
        return finish(userId);
      } catch (err) {
        if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED") throw err;
        return login(csrf, { error: err.message, status: err.httpStatus, username: form.username });
      }
    case "register":
      try {
        const { userId, sessionSecret } = await browserRegister(s, { username: form.username ?? "", password: form.password ?? "", confirm: form.confirm ?? "", token: form.token }, c.clientIp);
        signIn(sessionSecret);
        return finish(userId);
      } catch (err) {
        if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED") throw err;
        return register(csrf, { error: err.message, status: err.httpStatus, username: form.username });
      }
    default:
      return errorPage(oauthTheme(s), reply(), 400, "invalid_request", "Unknown form action");
  }
}

export function oauthSsoRoutes(app: FastifyInstance, s: Services): void {
  if (!oauthServerEnabled(s)) return;
  route(app, s, [OAUTH_PATHS.sso], { method: "GET", path: "", auth: "none", handler: (c) => asPage(s, c, () => handle(c, s, queryString(c, "redirectUrl"), queryString(c, "action"), undefined)) });
  route(app, s, [OAUTH_PATHS.sso], {
    method: "POST", path: "", auth: "none",
    handler: (c) => asPage(s, c, async () => {
      const form = formFields(c);
      return handle(c, s, form.redirectUrl, undefined, form);
    }),
  });
}
