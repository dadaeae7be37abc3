// The token endpoint (RFC 6749 §3.2, spec v1.15 "Grant types", MSC2964): the authorization_code grant
// (the code single-use and unexpired, issued to this client for this redirect URI, PKCE S256 verified —
// RFC 7636 §4.6) and the refresh_token grant (rotation as POST /refresh rotates; only the client the
// tokens were granted to may refresh them, and never for more scope; a replayed old refresh token ends
// the session). The tokens are Weft's own access and refresh tokens of the device the scope named
// (created or reused here), usable on every Client-Server endpoint; the device_code grant (RFC 8628)
// hands them over once the user approved (device-grant.ts). A replayed code ends the session it made
// (RFC 6749 §4.1.2). Errors are RFC 6749 §5.2's: invalid_request, invalid_client (401), invalid_grant,
// unauthorized_client, unsupported_grant_type, invalid_scope; a locked or deactivated account's grant is
// invalid_grant.
import { createHash, timingSafeEqual } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken } from "../accounts/tokens.ts";
import { startSession } from "../accounts/sessions.ts";
import { refresh } from "../accounts/refresh.ts";
import { invalidateUserTokens } from "../accounts/authenticate.ts";
import { runDeviceUpdateHooks } from "../devices/update-device.ts";
import { deleteDevices, type DeviceDeletionHook } from "../devices/delete-devices.ts";
import { DEVICE_CODE_GRANT, findClient, type ClientMetadata } from "./client-registration.ts";
import { pollDeviceGrant } from "./device-grant.ts";
import { grantsOpenId, idToken } from "./openid.ts";
import { logOAuthRefusal, type OAuthRefusal } from "./refusal-log.ts";

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in?: number;
  refresh_token: string;
  scope: string;
  /** OpenID Connect: with scope openid, the ID token of the sign-in (openid.ts). */
  id_token?: string;
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

const invalidRequest = (why: string) => new MatrixError("invalid_request", why, 400);
const invalidGrant = (why: string) => new MatrixError("invalid_grant", why, 400);

function required(form: Record<string, string>, key: string): string {
  const v = form[key];
  if (v === undefined || v === "") throw invalidRequest(`${key} is required`);
  return v;
}

/** The public client making the request (client_id in the body; RFC 6749 §2.3: no secret). */
async function requestingClient(s: Services, form: Record<string, string>, grantType: string, ip: string): Promise<ClientMetadata> {
  const clientId = form.client_id;
  if (!clientId) {
    logOAuthRefusal(s, "invalid_client", { endpoint: "token", ip });
    throw new MatrixError("invalid_client", "client_id is required", 401);
  }
  const client = await findClient(s, clientId);
  if (!client) {
    logOAuthRefusal(s, "invalid_client", { endpoint: "token", clientId, ip });
    throw new MatrixError("invalid_client", "Unknown client", 401);
  }
  if (!client.grant_types.includes(grantType)) throw new MatrixError("unauthorized_client", `This client did not register the ${grantType} grant`, 400);
  return client;
}

function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash("sha256").update(verifier).digest("base64url"));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

async function codeGrant(s: Services, form: Record<string, string>, ip: string): Promise<TokenResponse> {
  const client = await requestingClient(s, form, "authorization_code", ip);
  const code = required(form, "code");
  const redirectUri = required(form, "redirect_uri");
  if (!form.code_verifier) logOAuthRefusal(s, "pkce_missing", { endpoint: "token", clientId: client.client_id, ip });
  const verifier = required(form, "code_verifier");
  if (!VERIFIER.test(verifier)) throw invalidRequest("code_verifier must be 43 to 128 unreserved characters (RFC 7636 §4.1)");
  const now = s.clock.now();
  const grant = await s.oauth.consumeAuthorizationCode(hashToken(code), now);
  if (!grant) throw invalidGrant("Unknown authorization code");
  const refuse = (kind: OAuthRefusal, why: string) => {
    logOAuthRefusal(s, kind, { endpoint: "token", clientId: client.client_id, userId: grant.userId, ip, ...(grant.clientId !== client.client_id ? { grantClientId: grant.clientId } : {}) });
    return invalidGrant(why);
  };
  if (grant.alreadyUsed) {
    // A replay: whoever holds the code may have stolen it; the session it made ends (RFC 6749 §4.1.2).
    const made = await s.oauth.getGrant(grant.userId, grant.deviceId);
    if (made?.clientId === grant.clientId) await endSession(s, grant.userId, grant.deviceId);
    throw refuse("code_reused", "The authorization code has already been used");
  }
  if (grant.clientId !== client.client_id) throw refuse("code_other_client", "The authorization code was issued to another client");
  if (grant.expiresTs <= now) throw refuse("code_expired", "The authorization code has expired");
  if (grant.redirectUri !== redirectUri) throw refuse("redirect_uri_mismatch", "redirect_uri differs from the authorization request's");
  if (!pkceMatches(verifier, grant.codeChallenge)) throw refuse("pkce_mismatch", "code_verifier does not match the code_challenge (PKCE)");
  const user = await s.users.get(grant.userId);
  if (!user || user.deactivated) throw invalidGrant("The account has been deactivated");
  if (user.locked) throw invalidGrant("The account is locked");

  return issueTokens(s, client, grant.userId, grant.deviceId, grant.scope, grant.nonce);
}

/** The tokens of a grant: a session of the scope's device (created or reused), bound to the client. */
async function issueTokens(s: Services, client: ClientMetadata, userId: string, deviceId: string, scope: string, nonce?: string | null): Promise<TokenResponse> {
  const now = s.clock.now();
  const tokens = await s.db.$transaction(async (tx) => {
    const t = await startSession(s, tx, { userId, deviceId, initialDisplayName: client.client_name, refreshable: true });
    await s.oauth.setGrant(tx, { userId, deviceId, clientId: client.client_id, scope }, now);
    return t;
  });
  await invalidateUserTokens(s, userId);
  await runDeviceUpdateHooks(s, userId, tokens.device_id, true);
  return {
    access_token: tokens.access_token,
    token_type: "Bearer",
    ...(tokens.expires_in_ms !== undefined ? { expires_in: Math.floor(tokens.expires_in_ms / 1000) } : {}),
    refresh_token: tokens.refresh_token!,
    scope,
    ...(grantsOpenId(scope) ? { id_token: idToken(s, { clientId: client.client_id, userId, accessToken: tokens.access_token, nonce }) } : {}),
  };
}

async function deviceCodeGrant(s: Services, form: Record<string, string>, ip: string): Promise<TokenResponse> {
  const client = await requestingClient(s, form, DEVICE_CODE_GRANT, ip);
  const grant = await pollDeviceGrant(s, client, required(form, "device_code"));
  const user = await s.users.get(grant.userId);
  if (!user || user.deactivated) throw invalidGrant("The account has been deactivated");
  if (user.locked) throw invalidGrant("The account is locked");
  return issueTokens(s, client, grant.userId, grant.deviceId, grant.scope);
}

async function refreshGrant(s: Services, form: Record<string, string>, ip: string): Promise<TokenResponse> {
  const client = await requestingClient(s, form, "refresh_token", ip);
  const token = required(form, "refresh_token");
  const tokenHash = hashToken(token);
  const row = await s.sessions.findRefreshToken(tokenHash);
  if (!row) {
    const retired = await s.oauth.retiredRefreshToken(tokenHash);
    if (retired) {
      logOAuthRefusal(s, "refresh_token_replayed", { endpoint: "token", clientId: client.client_id, userId: retired.userId, ip });
      await endSession(s, retired.userId, retired.deviceId);
      throw invalidGrant("The refresh token has already been used: the session has ended");
    }
  }
  const grant = row ? await s.oauth.getGrant(row.userId, row.deviceId) : undefined;
  if (!row || !grant) throw invalidGrant("Unknown refresh token");
  if (grant.clientId !== client.client_id) {
    logOAuthRefusal(s, "cross_client_refresh", { endpoint: "token", clientId: client.client_id, grantClientId: grant.clientId, userId: row.userId, ip });
    throw invalidGrant("The refresh token was issued to another client");
  }
  if (form.scope !== undefined && form.scope !== "") {
    const granted = new Set(grant.scope.split(" "));
    const extra = form.scope.split(" ").filter((t) => t !== "" && !granted.has(t));
    if (extra.length > 0) logOAuthRefusal(s, "scope_escalation", { endpoint: "token", clientId: client.client_id, userId: row.userId, ip });
    if (extra.length > 0) throw new MatrixError("invalid_scope", `The refresh cannot add scope the user did not grant (${extra.join(" ")})`, 400);
  }
  // A refresh token already replaced by a pair the client has used: someone replays an old token, so the
  // session is taken to be compromised and ends (spec "Refresh token grant").
  if (row.nextTokenId !== null && (await s.sessions.refreshSessionUsed(row.nextTokenId))) {
    logOAuthRefusal(s, "refresh_token_replayed", { endpoint: "token", clientId: client.client_id, userId: row.userId, ip });
    await endSession(s, row.userId, row.deviceId);
    throw invalidGrant("The refresh token has already been used: the session has ended");
  }
  let next;
  try {
    next = await refresh(s, token);
    await s.oauth.retireRefreshToken(tokenHash, row.userId, row.deviceId, s.clock.now());
  } catch (err) {
    if (err instanceof MatrixError && err.errcode === "M_UNKNOWN_TOKEN") throw invalidGrant(err.message);
    throw err;
  }
  return {
    access_token: next.access_token,
    token_type: "Bearer",
    ...(next.expires_in_ms !== undefined ? { expires_in: Math.floor(next.expires_in_ms / 1000) } : {}),
    refresh_token: next.refresh_token,
    scope: grant.scope,
  };
}

/** POST token_endpoint with the form's fields. */
export async function tokenRequest(s: Services, form: Record<string, string>, clientIp: string): Promise<TokenResponse> {
  s.ratelimiter.check(`oauth-token:${clientIp}`, s.config.oauth_server.rc_token);
  const grantType = required(form, "grant_type");
  switch (grantType) {
    case "authorization_code":
      return codeGrant(s, form, clientIp);
    case "refresh_token":
      return refreshGrant(s, form, clientIp);
    case DEVICE_CODE_GRANT:
      return deviceCodeGrant(s, form, clientIp);
    default:
      throw new MatrixError("unsupported_grant_type", `grant_type ${grantType} is not supported`, 400);
  }
}

/** Ends an OAuth session: the device with its tokens and keys (as POST /logout), and so its grant. */
export async function endSession(s: Services, userId: string, deviceId: string): Promise<void> {
  await deleteDevices(s, userId, [deviceId]);
}

/** A device's grant goes with the device, however it is deleted (a DeviceDeletionHook, src/main.ts). */
export const dropOAuthGrants: DeviceDeletionHook = async (tx, userId, deviceIds) => {
  await tx.oAuthGrant.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
  await tx.oAuthRetiredRefreshToken.deleteMany({ where: { userId, deviceId: { in: deviceIds } } });
};
