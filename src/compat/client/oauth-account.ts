// The account management page's browser face (spec v1.18 "Account management", account_management_uri):
// GET with the spec's `action` (and `device_id`) shows the signed-in user's profile and devices, a
// device's sign-out confirmation, the deactivation page, or the cross-signing reset approval (the
// m.oauth UIA type, MSC4312), or, with `uia_session`, the approval of a client's request that asked for
// user-interactive auth (m.oauth); POST takes the forms (login, confirm_delete, delete_device, deactivate,
// approve_reset, approve_uia, show_password, change_password, sign_out, cancel), each with the CSRF token of the cookie. Domain rules in
// src/domain/oauth/account.ts; pages in src/compat/oauth-pages.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { queryString, route, type Call } from "../http.ts";
import { OAUTH_PATHS, oauthServerEnabled } from "../../domain/oauth/endpoints.ts";
import { accountOverview, accountUrl, approveCrossSigningReset, changePasswordFromAccountPage, deactivateFromAccountPage, signOutDevice } from "../../domain/oauth/account.ts";
import { browserLogin, browserLogout, browserSessionUser } from "../../domain/oauth/browser-login.ts";
import { accountPage, crossSigningResetPage, deactivatePage, deleteDevicePage, errorPage, loginPage, messagePage, passwordPage, uiaApprovalPage } from "../oauth-pages/page.ts";
import { approveUiaSession, pendingUiaApproval } from "../../domain/uia/oauth-approval.ts";
import { asPage } from "../oauth-pages/errors.ts";
import { oauthTheme } from "../oauth-pages/theme.ts";
import { logOAuthRefusal } from "../../domain/oauth/refusal-log.ts";
import { CSRF_COOKIE, SESSION_COOKIE, csrfToken, readCookie, sessionCookie } from "../oauth-pages/cookies.ts";
import { formFields } from "./oauth.ts";

interface Wanted {
  action?: string;
  deviceId?: string;
  /** The UIA session an m.oauth stage asks the user to approve. */
  uiaSession?: string;
}

async function show(c: Call, s: Services, userId: string, csrf: string, wanted: Wanted, message?: string) {
  const action = c.req.url.split("?")[0]!;
  if (wanted.uiaSession) return uiaApprovalPage(oauthTheme(s), c.reply, action, csrf, userId, await pendingUiaApproval(s, userId, wanted.uiaSession));
  const overview = await accountOverview(s, userId);
  switch (wanted.action) {
    case "org.matrix.account_deactivate":
      return deactivatePage(oauthTheme(s), c.reply, action, csrf, userId);
    case "org.matrix.cross_signing_reset":
      return crossSigningResetPage(oauthTheme(s), c.reply, action, csrf, userId, Math.round(s.config.oauth_server.cross_signing_reset_window / 60_000));
    case "org.matrix.device_delete": {
      const device = overview.devices.find((d) => d.device_id === wanted.deviceId);
      if (device) return deleteDevicePage(oauthTheme(s), c.reply, action, csrf, device);
      return accountPage(oauthTheme(s), c.reply, action, csrf, overview, { message: "That device is not signed in to your account." });
    }
    case "org.matrix.device_view":
      return accountPage(oauthTheme(s), c.reply, action, csrf, overview, { message, only: wanted.deviceId });
    default:
      return accountPage(oauthTheme(s), c.reply, action, csrf, overview, { message });
  }
}

async function handle(c: Call, s: Services, wanted: Wanted, form: Record<string, string> | undefined): Promise<unknown> {
  const cookies: string[] = [];
  const reply = () => (cookies.length ? c.reply.header("set-cookie", cookies) : c.reply);
  const action = c.req.url.split("?")[0]!;
  const serverName = s.config.server_name;
  const sessionSecret = readCookie(c, SESSION_COOKIE);
  const fields: Record<string, string> = {
    ...(wanted.action ? { mgmt_action: wanted.action } : {}),
    ...(wanted.deviceId ? { mgmt_device_id: wanted.deviceId } : {}),
    ...(wanted.uiaSession ? { mgmt_uia_session: wanted.uiaSession } : {}),
  };
  if (form === undefined) {
    const csrf = csrfToken(c, s, cookies);
    reply();
    const userId = await browserSessionUser(s, sessionSecret);
    return userId ? show(c, s, userId, csrf, wanted) : loginPage(oauthTheme(s), c.reply, action, { fields }, csrf, { serverName });
  }
  const csrf = readCookie(c, CSRF_COOKIE);
  if (!csrf || form.csrf !== csrf) {
    logOAuthRefusal(s, "csrf_mismatch", { endpoint: "account", ip: c.clientIp });
    return errorPage(oauthTheme(s), c.reply, 403, "invalid_request", "This form has expired or was not sent from this server's page. Start again.");
  }
  s.ratelimiter.check(`oauth-authorize:${c.clientIp}`, s.config.oauth_server.rc_authorization);
  if (form.action === "login") {
    try {
      const { sessionSecret: secret } = await browserLogin(s, form.username ?? "", form.password ?? "", c.clientIp);
      cookies.push(sessionCookie(s, secret));
      return reply().code(303).header("location", accountUrl(s, wanted.action, wanted.deviceId, wanted.uiaSession)).send();
    } catch (err) {
      if (!(err instanceof MatrixError)) throw err;
      return loginPage(oauthTheme(s), c.reply, action, { fields }, csrf, { serverName, error: err.message, status: err.httpStatus, username: form.username });
    }
  }
  const userId = await browserSessionUser(s, sessionSecret);
  if (!userId) return loginPage(oauthTheme(s), c.reply, action, { fields }, csrf, { serverName, error: "Your sign-in has expired: sign in again.", status: 401 });
  switch (form.action) {
    case "confirm_delete":
      return show(c, s, userId, csrf, { action: "org.matrix.device_delete", deviceId: form.device_id });
    case "delete_device":
      if (!form.device_id) throw new MatrixError("invalid_request", "device_id is missing", 400);
      await signOutDevice(s, userId, form.device_id);
      return show(c, s, userId, csrf, {}, `The device ${form.device_id} was signed out.`);
    case "deactivate":
      try {
        await deactivateFromAccountPage(s, userId, form.password ?? "", c.clientIp);
      } catch (err) {
        if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED") throw err;
        return deactivatePage(oauthTheme(s), c.reply, action, csrf, userId, { error: err.message, status: err.httpStatus });
      }
      if (sessionSecret) await browserLogout(s, sessionSecret);
      cookies.push(sessionCookie(s, ""));
      reply();
      return messagePage(oauthTheme(s), c.reply, "Account deactivated", "Your account has been deactivated and signed out everywhere.");
    case "show_password":
      return passwordPage(oauthTheme(s), c.reply, action, csrf, userId);
    case "change_password":
      try {
        await changePasswordFromAccountPage(s, userId, { current: form.current ?? "", next: form.new_password ?? "", confirm: form.confirm ?? "" }, sessionSecret!, c.clientIp);
      } catch (err) {
        if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED") throw err;
        return passwordPage(oauthTheme(s), c.reply, action, csrf, userId, { error: err.message, status: err.httpStatus });
      }
      return show(c, s, userId, csrf, {}, "Your password was changed. Your other sign-ins to these pages have ended.");
    case "approve_uia": {
      const pending = await pendingUiaApproval(s, userId, form.uia_session ?? "");
      try {
        await approveUiaSession(s, userId, pending, form.password ?? "", c.clientIp);
      } catch (err) {
        if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED") throw err;
        return uiaApprovalPage(oauthTheme(s), c.reply, action, csrf, userId, pending, { error: err.message, status: err.httpStatus });
      }
      return messagePage(oauthTheme(s), c.reply, "Request approved", `Return to your app to finish: ${pending.description}.`);
    }
    case "approve_reset":
      await approveCrossSigningReset(s, userId);
      return messagePage(oauthTheme(s), c.reply, "Reset allowed", "Return to your app to finish resetting your cross-signing identity.");
    case "cancel":
      return show(c, s, userId, csrf, {});
    case "sign_out":
      if (sessionSecret) await browserLogout(s, sessionSecret);
      cookies.push(sessionCookie(s, ""));
      reply();
      return messagePage(oauthTheme(s), c.reply, "Signed out", "You have signed out of this page. Your devices stay signed in.");
    default:
      return errorPage(oauthTheme(s), c.reply, 400, "invalid_request", "Unknown form action");
  }
}

export function oauthAccountRoutes(app: FastifyInstance, s: Services): void {
  if (!oauthServerEnabled(s)) return;
  route(app, s, [OAUTH_PATHS.account], {
    method: "GET", path: "", auth: "none",
    handler: (c) => asPage(s, c, () => handle(c, s, { action: queryString(c, "action"), deviceId: queryString(c, "device_id"), uiaSession: queryString(c, "uia_session") }, undefined)),
  });
  route(app, s, [OAUTH_PATHS.account], {
    method: "POST", path: "", auth: "none",
    handler: (c) => asPage(s, c, async () => {
      const form = formFields(c);
      return handle(c, s, { action: form.mgmt_action, deviceId: form.mgmt_device_id, uiaSession: form.mgmt_uia_session }, form);
    }),
  });
}
