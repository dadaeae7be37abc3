// The device authorisation grant (RFC 8628, spec v1.18 "Device authorisation grant", MSC4341): a client
// without a browser asks for a device code and a user code (§3.1–3.2); the user enters the user code on
// the verification page, signs in and approves (or denies); meanwhile the client polls the token endpoint
// (§3.4–3.5), answered authorization_pending, slow_down (polled sooner than the interval, which then grows
// by 5 s), expired_token, access_denied, or — once — the tokens. Both codes are stored hashed.
import { randomBytes, randomInt } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken } from "../accounts/tokens.ts";
import type { DeviceGrantRow } from "../store/oauth.ts";
import { findClient, DEVICE_CODE_GRANT, type ClientMetadata } from "./client-registration.ts";
import { parseScope, type GrantedScope } from "./scopes.ts";
import { oauthUrl } from "./endpoints.ts";

/** RFC 8628 §6.1: 20 consonants, no vowels (no words), case-insensitive; 8 of them ≈ 34 bits. */
const ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const DEFAULT_INTERVAL_S = 5;

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The user code as typed (any case, with or without the dash or spaces) in its canonical form. */
export function normalizeUserCode(typed: string): string {
  return typed.toUpperCase().replace(/[^A-Z]/g, "");
}

function newUserCode(): string {
  let code = "";
  for (let i = 0; i < 8; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** POST device_authorization_endpoint (RFC 8628 §3.1): client_id and scope. */
export async function startDeviceAuthorization(s: Services, form: Record<string, string>, clientIp: string): Promise<DeviceAuthorizationResponse> {
  s.ratelimiter.check(`oauth-token:${clientIp}`, s.config.oauth_server.rc_token);
  const clientId = form.client_id;
  if (!clientId) throw new MatrixError("invalid_client", "client_id is required", 401);
  const client = await findClient(s, clientId);
  if (!client) throw new MatrixError("invalid_client", "Unknown client", 401);
  if (!client.grant_types.includes(DEVICE_CODE_GRANT)) throw new MatrixError("unauthorized_client", "This client did not register the device code grant", 400);
  const scope = parseScope(form.scope);
  const deviceCode = randomBytes(24).toString("base64url");
  const userCode = newUserCode();
  const now = s.clock.now();
  const lifetime = s.config.oauth_server.device_code_lifetime;
  await s.oauth.addDeviceGrant({
    deviceCodeHash: hashToken(deviceCode), userCodeHash: hashToken(userCode), clientId, scope: scope.tokens.join(" "), deviceId: scope.deviceId,
    createdTs: now, expiresTs: now + lifetime, intervalS: DEFAULT_INTERVAL_S,
  });
  const verification = oauthUrl(s, "deviceVerification");
  const display = `${userCode.slice(0, 4)}-${userCode.slice(4)}`;
  return {
    device_code: deviceCode,
    user_code: display,
    verification_uri: verification,
    verification_uri_complete: `${verification}?user_code=${display}`,
    expires_in: Math.floor(lifetime / 1000),
    interval: DEFAULT_INTERVAL_S,
  };
}

export interface PendingDeviceGrant {
  row: DeviceGrantRow;
  client: ClientMetadata;
  scope: GrantedScope;
}

/** The pending request a typed user code names, or an error for the page. */
export async function pendingDeviceGrant(s: Services, typed: string): Promise<PendingDeviceGrant> {
  const code = normalizeUserCode(typed);
  const row = code.length === 8 ? await s.oauth.deviceGrant({ userCodeHash: hashToken(code) }) : undefined;
  if (!row || row.status !== "pending" || row.expiresTs <= s.clock.now())
    throw new MatrixError("invalid_request", "This code is not valid or has expired: check it, or start again on your device", 400);
  const client = await findClient(s, row.clientId);
  if (!client) throw new MatrixError("invalid_request", "This code is not valid", 400);
  return { row, client, scope: parseScope(row.scope) };
}

/** The user approved (with their account) or denied the request. */
export async function decideDeviceGrant(s: Services, grant: PendingDeviceGrant, userId: string | null): Promise<void> {
  const moved = userId === null
    ? await s.oauth.moveDeviceGrant(grant.row.deviceCodeHash, "pending", "denied")
    : await s.oauth.moveDeviceGrant(grant.row.deviceCodeHash, "pending", "approved", userId);
  if (!moved) throw new MatrixError("invalid_request", "This request was already answered", 400);
}

/**
 * The token endpoint's device_code grant (RFC 8628 §3.4–3.5): the grant ready for tokens (now marked
 * exchanged), or the error the client is to act on.
 */
export async function pollDeviceGrant(s: Services, client: ClientMetadata, deviceCode: string): Promise<DeviceGrantRow & { userId: string }> {
  const row = await s.oauth.deviceGrant({ deviceCodeHash: hashToken(deviceCode) });
  if (!row || row.clientId !== client.client_id) throw new MatrixError("invalid_grant", "Unknown device code", 400);
  const now = s.clock.now();
  if (row.status === "exchanged") throw new MatrixError("invalid_grant", "The device code has already been used", 400);
  if (row.expiresTs <= now) throw new MatrixError("expired_token", "The device code has expired: start again", 400);
  if (row.lastPolledTs !== null && now - row.lastPolledTs < row.intervalS * 1000) {
    await s.oauth.notePoll(row.deviceCodeHash, now, row.intervalS + 5);
    throw new MatrixError("slow_down", `Poll at most every ${row.intervalS + 5} seconds`, 400);
  }
  await s.oauth.notePoll(row.deviceCodeHash, now, row.intervalS);
  if (row.status === "pending") throw new MatrixError("authorization_pending", "The user has not answered yet", 400);
  if (row.status === "denied") throw new MatrixError("access_denied", "The user refused the authorisation", 400);
  if (!(await s.oauth.moveDeviceGrant(row.deviceCodeHash, "approved", "exchanged"))) throw new MatrixError("invalid_grant", "The device code has already been used", 400);
  return { ...row, userId: row.userId! };
}
