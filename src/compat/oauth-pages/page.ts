// The HTML pages of Weft's own OAuth 2.0 authorisation endpoint (login, consent, errors): server-rendered,
// working without JavaScript (no script is allowed at all), labelled form fields, the request carried in
// hidden fields with a CSRF token (double-submit: the same value in an HttpOnly SameSite cookie). The
// content security policy lets a form's answer redirect to the client's redirect URI (browsers apply
// form-action to the redirect after a submission) and nowhere else.
import type { FastifyReply } from "fastify";
import { escapeHtml } from "../html-page.ts";
import type { ClientMetadata } from "../../domain/oauth/client-registration.ts";
import { describeScope, type GrantedScope } from "../../domain/oauth/scopes.ts";

/** What a login or consent page is about: the client, the scope it asks for, the fields its forms carry. */
export interface PageSubject {
  client: ClientMetadata;
  scope: GrantedScope;
  /** Where the client gets the answer (the code grant); the device grant has none. */
  redirectUri?: string;
  /** Hidden fields the forms send back (the request's parameters). */
  fields: Record<string, string>;
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;line-height:1.5}` +
  `label{display:block;margin-top:1rem;font-weight:600}input[type=text],input[type=password]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}` +
  `button{margin-top:1.25rem;margin-right:.5rem;padding:.5rem 1.25rem;font-size:1rem}.error{color:#a00;border:1px solid #a00;padding:.5rem}`;

/** The origin (or scheme) of a redirect URI, as a CSP source expression. */
function cspSource(redirectUri: string): string {
  const u = new URL(redirectUri);
  return u.protocol === "http:" || u.protocol === "https:" ? u.origin : u.protocol;
}

export function sendPage(reply: FastifyReply, status: number, title: string, body: string, redirectUri?: string): FastifyReply {
  const formAction = redirectUri ? `'self' ${cspSource(redirectUri)}` : `'self'`;
  return reply
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("content-security-policy", `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'`)
    .header("x-frame-options", "DENY")
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .send(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`);
}

function hiddenFields(params: Record<string, string>, csrf: string): string {
  const fields = Object.entries(params).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`);
  return fields.join("") + `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;
}

const clientName = (r: PageSubject) => r.client.client_name ?? new URL(r.client.client_uri).host;

/** What a login page is for: a client's request, or (no client) the account page or a legacy SSO login. */
export type LoginSubject = Pick<PageSubject, "fields" | "redirectUri"> & { client?: ClientMetadata; intro?: string };

export function loginPage(reply: FastifyReply, action: string, r: LoginSubject, csrf: string, opts: { serverName: string; error?: string; status?: number; username?: string; offerRegistration?: boolean }): FastifyReply {
  const error = opts.error ? `<p class="error" role="alert" id="error">${escapeHtml(opts.error)}</p>` : "";
  return sendPage(reply, opts.status ?? 200, `Sign in to ${opts.serverName}`,
    `<h1>Sign in to ${escapeHtml(opts.serverName)}</h1>` +
    (r.client ? `<p><b>${escapeHtml(clientName(r as PageSubject))}</b> wants to access your account.</p>` : `<p>${escapeHtml(r.intro ?? "Sign in to manage your account.")}</p>`) + error +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields(r.fields, csrf)}` +
    `<label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" required value="${escapeHtml(opts.username ?? "")}"${opts.error ? ` aria-describedby="error"` : ""}>` +
    `<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>` +
    `<button type="submit" name="action" value="login">Sign in</button>` +
    (opts.offerRegistration ? `<button type="submit" name="action" value="show_register" formnovalidate>Create an account</button>` : "") +
    (r.client ? `<button type="submit" name="action" value="deny" formnovalidate>Cancel</button>` : "") + `</form>`, r.redirectUri);
}

export function consentPage(reply: FastifyReply, action: string, r: PageSubject, csrf: string, userId: string): FastifyReply {
  const c = r.client;
  const links = [
    `<a href="${escapeHtml(c.client_uri)}">${escapeHtml(new URL(c.client_uri).host)}</a>`,
    c.tos_uri ? `<a href="${escapeHtml(c.tos_uri)}">terms of service</a>` : "",
    c.policy_uri ? `<a href="${escapeHtml(c.policy_uri)}">privacy policy</a>` : "",
  ].filter(Boolean).join(" · ");
  const scopes = describeScope(r.scope).map((line, i) => `<li>${escapeHtml(line)} <code>${escapeHtml(r.scope.tokens[i]!)}</code></li>`).join("");
  return sendPage(reply, 200, `Allow ${clientName(r)}?`,
    `<h1>Allow <span id="client-name">${escapeHtml(clientName(r))}</span> to access your account?</h1>` +
    `<p>${links}</p><p>You are signed in as <b id="user-id">${escapeHtml(userId)}</b>.</p>` +
    `<h2 id="scopes-heading">It will be able to:</h2><ul aria-labelledby="scopes-heading">${scopes}</ul>` +
    (r.redirectUri ? `<p>It will be redirected to <code>${escapeHtml(r.redirectUri)}</code>.</p>` : `<p>Only allow this if you started signing in on that device yourself.</p>`) +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields(r.fields, csrf)}` +
    `<button type="submit" name="action" value="consent">Allow</button>` +
    `<button type="submit" name="action" value="deny">Cancel</button>` +
    `<button type="submit" name="action" value="switch">Not ${escapeHtml(userId)}? Sign in as someone else</button></form>`, r.redirectUri);
}

export function errorPage(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return sendPage(reply, status, "Authorisation failed",
    `<h1>This application cannot sign you in</h1><p role="alert">${escapeHtml(description)}</p><p>Error code: <code>${escapeHtml(error)}</code></p>`);
}

/** The device grant's first page: the code the device shows (RFC 8628 §3.3). */
export function userCodePage(reply: FastifyReply, action: string, csrf: string, opts: { serverName: string; error?: string; status?: number; typed?: string }): FastifyReply {
  const error = opts.error ? `<p class="error" role="alert" id="error">${escapeHtml(opts.error)}</p>` : "";
  return sendPage(reply, opts.status ?? 200, `Connect a device to ${opts.serverName}`,
    `<h1>Connect a device to ${escapeHtml(opts.serverName)}</h1><p>Enter the code your device shows.</p>${error}` +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields({}, csrf)}` +
    `<label for="user_code">Code</label><input type="text" id="user_code" name="user_code" autocomplete="one-time-code" autocapitalize="characters" required value="${escapeHtml(opts.typed ?? "")}"${opts.error ? ` aria-describedby="error"` : ""}>` +
    `<button type="submit" name="action" value="code">Continue</button></form>`);
}

/** A page that only says something (the device grant's end: approved or denied). */
export function messagePage(reply: FastifyReply, title: string, text: string): FastifyReply {
  return sendPage(reply, 200, title, `<h1>${escapeHtml(title)}</h1><p role="status">${escapeHtml(text)}</p>`);
}

/** The account management page (spec v1.18 "Account management"): profile and devices, one form per device. */
export function accountPage(reply: FastifyReply, action: string, csrf: string, a: { userId: string; displayName?: string; devices: { device_id: string; display_name?: string; last_seen_ts?: number }[] }, opts: { message?: string; only?: string } = {}): FastifyReply {
  const devices = a.devices.filter((d) => opts.only === undefined || d.device_id === opts.only);
  const rows = devices.map((d) =>
    `<li id="device-${escapeHtml(d.device_id)}"><b>${escapeHtml(d.display_name ?? d.device_id)}</b> <code>${escapeHtml(d.device_id)}</code>` +
    (d.last_seen_ts ? ` — last seen ${escapeHtml(new Date(d.last_seen_ts).toISOString())}` : "") +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields({ device_id: d.device_id }, csrf)}` +
    `<button type="submit" name="action" value="confirm_delete" aria-label="Sign out ${escapeHtml(d.display_name ?? d.device_id)}">Sign out</button></form></li>`).join("");
  const message = opts.message ? `<p role="status" id="message">${escapeHtml(opts.message)}</p>` : "";
  return sendPage(reply, 200, "Your account",
    `<h1>Your account</h1>${message}<h2>Profile</h2><p>User ID: <b id="user-id">${escapeHtml(a.userId)}</b></p>` +
    (a.displayName ? `<p>Display name: <b>${escapeHtml(a.displayName)}</b></p>` : "") +
    `<h2 id="devices-heading">Devices</h2><ul aria-labelledby="devices-heading">${rows || "<li>No such device</li>"}</ul>` +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields({}, csrf)}<button type="submit" name="action" value="sign_out">Sign out of this page</button></form>`);
}

/** Confirms signing a device out (org.matrix.device_delete). */
export function deleteDevicePage(reply: FastifyReply, action: string, csrf: string, device: { device_id: string; display_name?: string }): FastifyReply {
  const name = device.display_name ?? device.device_id;
  return sendPage(reply, 200, `Sign out ${name}?`,
    `<h1>Sign out <span id="device-name">${escapeHtml(name)}</span>?</h1><p>The device <code>${escapeHtml(device.device_id)}</code> will lose access to your account and its encryption keys on the server.</p>` +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields({ device_id: device.device_id }, csrf)}` +
    `<button type="submit" name="action" value="delete_device">Sign out the device</button><button type="submit" name="action" value="cancel">Cancel</button></form>`);
}

/** Approves a cross-signing reset (org.matrix.cross_signing_reset, the m.oauth UIA type). */
export function crossSigningResetPage(reply: FastifyReply, action: string, csrf: string, userId: string, windowMinutes: number): FastifyReply {
  return sendPage(reply, 200, "Reset your cross-signing identity?",
    `<h1>Reset your cross-signing identity?</h1><p>Signed in as <b>${escapeHtml(userId)}</b>. Your app asks to replace your cross-signing keys. ` +
    `Your other devices and contacts will have to verify you again. Only continue if you started this yourself.</p>` +
    `<p>If you allow it, your app may reset them in the next ${windowMinutes} minutes.</p>` +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields({}, csrf)}` +
    `<button type="submit" name="action" value="approve_reset">Allow the reset</button><button type="submit" name="action" value="cancel">Cancel</button></form>`);
}

/** The registration page (prompt=create): username, password twice, and the registration token if required. */
export function registerPage(reply: FastifyReply, action: string, r: LoginSubject, csrf: string, opts: { serverName: string; tokenField: boolean; error?: string; status?: number; username?: string }): FastifyReply {
  const error = opts.error ? `<p class="error" role="alert" id="error">${escapeHtml(opts.error)}</p>` : "";
  const described = opts.error ? ` aria-describedby="error"` : "";
  return sendPage(reply, opts.status ?? 200, `Create an account on ${opts.serverName}`,
    `<h1>Create an account on ${escapeHtml(opts.serverName)}</h1>` +
    (r.client ? `<p>Then <b>${escapeHtml(clientName(r as PageSubject))}</b> will ask to access it.</p>` : "") + error +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields(r.fields, csrf)}` +
    `<label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" required value="${escapeHtml(opts.username ?? "")}"${described}>` +
    `<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="new-password" required>` +
    `<label for="confirm">Confirm the password</label><input type="password" id="confirm" name="confirm" autocomplete="new-password" required>` +
    (opts.tokenField ? `<label for="token">Registration token</label><input type="text" id="token" name="token" autocomplete="off" required>` : "") +
    `<button type="submit" name="action" value="register">Create the account</button>` +
    `<button type="submit" name="action" value="show_login" formnovalidate>I already have an account</button>` +
    (r.client ? `<button type="submit" name="action" value="deny" formnovalidate>Cancel</button>` : "") + `</form>`, r.redirectUri);
}

/** Deactivation (org.matrix.account_deactivate): the password again, then for good. */
export function deactivatePage(reply: FastifyReply, action: string, csrf: string, userId: string, opts: { error?: string; status?: number } = {}): FastifyReply {
  const error = opts.error ? `<p class="error" role="alert" id="error">${escapeHtml(opts.error)}</p>` : "";
  return sendPage(reply, opts.status ?? 200, "Deactivate your account?",
    `<h1>Deactivate your account?</h1><p><b>${escapeHtml(userId)}</b> will be signed out everywhere and can never be used again. This cannot be undone.</p>${error}` +
    `<form method="post" action="${escapeHtml(action)}">${hiddenFields({}, csrf)}` +
    `<label for="password">Your password</label><input type="password" id="password" name="password" autocomplete="current-password" required${opts.error ? ` aria-describedby="error"` : ""}>` +
    `<button type="submit" name="action" value="deactivate">Deactivate the account</button><button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></form>`);
}

/** The end of a legacy SSO login for a client not in sso.client_whitelist: the user confirms where the login goes. */
export function continuePage(reply: FastifyReply, redirect: string, userId: string): FastifyReply {
  const target = new URL(redirect);
  return sendPage(reply, 200, "Continue to your application",
    `<h1>Continue to your application</h1><p>You are signing in as <b>${escapeHtml(userId)}</b> at <b>${escapeHtml(target.host || target.protocol)}</b>.</p>` +
    `<p>Only continue if you started signing in there.</p><p><a id="continue" href="${escapeHtml(redirect)}">Continue</a></p>`);
}
