// The HTML pages of Weft's own OAuth 2.0 authorisation endpoint (login, consent, errors): server-rendered,
// working without JavaScript (no script is allowed at all), labelled form fields, the request carried in
// hidden fields with a CSRF token (double-submit: the same value in an HttpOnly SameSite cookie). The
// content security policy lets a form's answer redirect to the client's redirect URI (browsers apply
// form-action to the redirect after a submission) and nowhere else. Each page is a named template of the
// theme (theme.ts: built-in, or the operator's templates.custom_template_directory); the values are given
// to it plain (it escapes them), the forms' hidden fields as markup built and escaped here.
import type { FastifyReply } from "fastify";
import { escapeHtml } from "../html-page.ts";
import type { ClientMetadata } from "../../domain/oauth/client-registration.ts";
import { describeScope, type GrantedScope } from "../../domain/oauth/scopes.ts";
import { csrfInput, type Theme } from "./theme.ts";
import { SafeHtml, type TemplateContext } from "./template.ts";

/** What a login or consent page is about: the client, the scope it asks for, the fields its forms carry. */
export interface PageSubject {
  client: ClientMetadata;
  scope: GrantedScope;
  /** Where the client gets the answer (the code grant); the device grant has none. */
  redirectUri?: string;
  /** Hidden fields the forms send back (the request's parameters). */
  fields: Record<string, string>;
}

/** The origin (or scheme) of a redirect URI, as a CSP source expression. */
function cspSource(redirectUri: string): string {
  const u = new URL(redirectUri);
  return u.protocol === "http:" || u.protocol === "https:" ? u.origin : u.protocol;
}

/** Sends the named template of the theme as the page; `csrf` for the pages with forms. */
function sendPage(t: Theme, reply: FastifyReply, status: number, template: string, title: string, context: TemplateContext, opts: { redirectUri?: string; csrf?: string } = {}): FastifyReply {
  const formAction = opts.redirectUri ? `'self' ${cspSource(opts.redirectUri)}` : `'self'`;
  return reply
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("content-security-policy", `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'`)
    .header("x-frame-options", "DENY")
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .send(t.render(template, title, context, opts.csrf));
}

function hiddenFields(params: Record<string, string>, csrf: string): SafeHtml {
  const fields = Object.entries(params).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`);
  return new SafeHtml(fields.join("") + csrfInput(escapeHtml(csrf)));
}

const clientName = (c: ClientMetadata) => c.client_name ?? new URL(c.client_uri).host;

/** What a login page is for: a client's request, or (no client) the account page or a legacy SSO login. */
export type LoginSubject = Pick<PageSubject, "fields" | "redirectUri"> & { client?: ClientMetadata; intro?: string };

export function loginPage(t: Theme, reply: FastifyReply, action: string, r: LoginSubject, csrf: string, opts: { serverName: string; error?: string; status?: number; username?: string; offerRegistration?: boolean }): FastifyReply {
  return sendPage(t, reply, opts.status ?? 200, "oauth_login.html", `Sign in to ${opts.serverName}`, {
    server_name: opts.serverName,
    client_name: r.client ? clientName(r.client) : undefined,
    intro: r.intro ?? "Sign in to manage your account.",
    error: opts.error,
    username: opts.username ?? "",
    offer_registration: opts.offerRegistration ?? false,
    form_action: action,
    form_fields: hiddenFields(r.fields, csrf),
  }, { redirectUri: r.redirectUri, csrf });
}

export function consentPage(t: Theme, reply: FastifyReply, action: string, r: PageSubject, csrf: string, userId: string): FastifyReply {
  const c = r.client;
  return sendPage(t, reply, 200, "oauth_consent.html", `Allow ${clientName(c)}?`, {
    client_name: clientName(c),
    client_uri: c.client_uri,
    client_host: new URL(c.client_uri).host,
    tos_uri: c.tos_uri,
    policy_uri: c.policy_uri,
    user_id: userId,
    scopes: describeScope(r.scope).map((description, i) => ({ description, token: r.scope.tokens[i]! })),
    redirect_uri: r.redirectUri,
    form_action: action,
    form_fields: hiddenFields(r.fields, csrf),
  }, { redirectUri: r.redirectUri, csrf });
}

export function errorPage(t: Theme, reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return sendPage(t, reply, status, "oauth_error.html", "Authorisation failed", { error, description });
}

/** The device grant's first page: the code the device shows (RFC 8628 §3.3). */
export function userCodePage(t: Theme, reply: FastifyReply, action: string, csrf: string, opts: { serverName: string; error?: string; status?: number; typed?: string }): FastifyReply {
  return sendPage(t, reply, opts.status ?? 200, "oauth_device.html", `Connect a device to ${opts.serverName}`, {
    server_name: opts.serverName,
    error: opts.error,
    user_code: opts.typed ?? "",
    form_action: action,
    form_fields: hiddenFields({}, csrf),
  }, { csrf });
}

/** A page that only says something (the device grant's end: approved or denied). */
export function messagePage(t: Theme, reply: FastifyReply, title: string, text: string): FastifyReply {
  return sendPage(t, reply, 200, "oauth_message.html", title, { title, text });
}

/** The account management page (spec v1.18 "Account management"): profile and devices, one form per device. */
export function accountPage(t: Theme, reply: FastifyReply, action: string, csrf: string, a: { userId: string; displayName?: string; devices: { device_id: string; display_name?: string; last_seen_ts?: number }[] }, opts: { message?: string; only?: string } = {}): FastifyReply {
  const devices = a.devices.filter((d) => opts.only === undefined || d.device_id === opts.only);
  return sendPage(t, reply, 200, "oauth_account.html", "Your account", {
    message: opts.message,
    user_id: a.userId,
    display_name: a.displayName,
    devices: devices.map((d) => ({
      device_id: d.device_id,
      name: d.display_name ?? d.device_id,
      last_seen: d.last_seen_ts ? new Date(d.last_seen_ts).toISOString() : undefined,
      form_fields: hiddenFields({ device_id: d.device_id }, csrf),
    })),
    form_action: action,
    form_fields: hiddenFields({}, csrf),
  }, { csrf });
}

/** Confirms signing a device out (org.matrix.device_delete). */
export function deleteDevicePage(t: Theme, reply: FastifyReply, action: string, csrf: string, device: { device_id: string; display_name?: string }): FastifyReply {
  const name = device.display_name ?? device.device_id;
  return sendPage(t, reply, 200, "oauth_device_delete.html", `Sign out ${name}?`, {
    device_name: name,
    device_id: device.device_id,
    form_action: action,
    form_fields: hiddenFields({ device_id: device.device_id }, csrf),
  }, { csrf });
}

/** Approves a cross-signing reset (org.matrix.cross_signing_reset, the m.oauth UIA type). */
export function crossSigningResetPage(t: Theme, reply: FastifyReply, action: string, csrf: string, userId: string, windowMinutes: number): FastifyReply {
  return sendPage(t, reply, 200, "oauth_cross_signing_reset.html", "Reset your cross-signing identity?", {
    user_id: userId,
    window_minutes: windowMinutes,
    form_action: action,
    form_fields: hiddenFields({}, csrf),
  }, { csrf });
}

/** The registration page (prompt=create): username, password twice, and the registration token if required. */
export function registerPage(t: Theme, reply: FastifyReply, action: string, r: LoginSubject, csrf: string, opts: { serverName: string; tokenField: boolean; error?: string; status?: number; username?: string }): FastifyReply {
  return sendPage(t, reply, opts.status ?? 200, "oauth_register.html", `Create an account on ${opts.serverName}`, {
    server_name: opts.serverName,
    client_name: r.client ? clientName(r.client) : undefined,
    error: opts.error,
    username: opts.username ?? "",
    token_field: opts.tokenField,
    form_action: action,
    form_fields: hiddenFields(r.fields, csrf),
  }, { redirectUri: r.redirectUri, csrf });
}

/** Deactivation (org.matrix.account_deactivate): the password again, then for good. */
export function deactivatePage(t: Theme, reply: FastifyReply, action: string, csrf: string, userId: string, opts: { error?: string; status?: number } = {}): FastifyReply {
  return passwordFormPage(t, reply, "oauth_deactivate.html", "Deactivate your account?", action, csrf, userId, opts);
}

/** A signed-in user's form that asks for their password (an error shown above it after a failure). */
function passwordFormPage(t: Theme, reply: FastifyReply, template: string, title: string, action: string, csrf: string, userId: string, opts: { error?: string; status?: number }): FastifyReply {
  return sendPage(t, reply, opts.status ?? 200, template, title, {
    user_id: userId,
    error: opts.error,
    form_action: action,
    form_fields: hiddenFields({}, csrf),
  }, { csrf });
}

/** The password change: the current password, the new one twice. */
export function passwordPage(t: Theme, reply: FastifyReply, action: string, csrf: string, userId: string, opts: { error?: string; status?: number } = {}): FastifyReply {
  return passwordFormPage(t, reply, "oauth_password.html", "Change your password", action, csrf, userId, opts);
}

/** The approval of a client's request that asked for user-interactive auth (the m.oauth stage). */
export function uiaApprovalPage(t: Theme, reply: FastifyReply, action: string, csrf: string, userId: string, pending: { sessionId: string; description: string; needsPassword: boolean }, opts: { error?: string; status?: number } = {}): FastifyReply {
  return sendPage(t, reply, opts.status ?? 200, "oauth_uia_approval.html", "Approve this request?", {
    user_id: userId,
    description: pending.description,
    needs_password: pending.needsPassword,
    error: opts.error,
    form_action: action,
    form_fields: hiddenFields({ uia_session: pending.sessionId }, csrf),
  }, { csrf });
}

/** The end of a legacy SSO login for a client not in sso.client_whitelist: the user confirms where the login goes. */
export function continuePage(t: Theme, reply: FastifyReply, redirect: string, userId: string): FastifyReply {
  const target = new URL(redirect);
  return sendPage(t, reply, 200, "oauth_continue.html", "Continue to your application", { user_id: userId, target: target.host || target.protocol, redirect });
}
