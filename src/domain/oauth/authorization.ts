// The authorisation endpoint (RFC 6749 §4.1, spec v1.15 "Authorisation code grant", MSC2964): the
// request's checks (a registered client, a redirect URI registered exactly — loopback URIs of native
// clients on any port, RFC 8252 §7.3 —, response_type code, response_mode query or fragment, PKCE S256
// only, the Matrix scope), then, once the user has logged in and consented, a single-use code valid for
// oauth_server.authorization_code_lifetime, stored hashed, handed back to the client's redirect URI
// with the request's state. Errors before the redirect URI is trusted are shown to the user; later ones
// go back to the client (RFC 6749 §4.1.2.1).
import { randomBytes } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken } from "../accounts/tokens.ts";
import { findClient, isLoopbackHost, type ClientMetadata } from "./client-registration.ts";
import { parseScope, type GrantedScope } from "./scopes.ts";
import { logOAuthRefusal } from "./refusal-log.ts";

/** The request parameters the pages carry from one form to the next, as received. */
export const REQUEST_PARAMS = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "code_challenge", "code_challenge_method", "prompt", "nonce"] as const;
export type RequestParams = Partial<Record<(typeof REQUEST_PARAMS)[number], string>>;

export interface AuthorizationRequest {
  params: RequestParams;
  client: ClientMetadata;
  redirectUri: string;
  responseMode: "query" | "fragment";
  state: string | undefined;
  scope: GrantedScope;
  codeChallenge: string;
}

export type ParsedRequest =
  | { kind: "ok"; request: AuthorizationRequest }
  /** The client or redirect URI cannot be trusted: tell the user, never redirect. */
  | { kind: "invalid"; error: MatrixError }
  /** A trusted redirect URI with the error for the client. */
  | { kind: "redirect"; location: string };

const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/; // base64url of a SHA-256, unpadded (RFC 7636 §4.2)

/** Whether the redirect URI asked for is one the client registered (loopback: any port). */
function redirectMatches(client: ClientMetadata, asked: string): boolean {
  if (client.redirect_uris.includes(asked)) return true;
  if (client.application_type !== "native") return false;
  let u: URL;
  try {
    u = new URL(asked);
  } catch {
    return false;
  }
  if (u.protocol !== "http:" || !isLoopbackHost(u.hostname) || u.port === "") return false;
  u.port = "";
  return client.redirect_uris.includes(u.href);
}

/** The client's redirect URI with the answer in its query or fragment, state included. */
export function redirectWith(redirectUri: string, mode: "query" | "fragment", params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri);
  const answer = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) answer.set(k, v);
  if (mode === "query") {
    for (const [k, v] of answer) u.searchParams.append(k, v);
    return u.href;
  }
  u.hash = answer.toString();
  return u.href;
}

/** The request's checks; `ip` (the browser's) names it in the log line of a security refusal. */
export async function parseAuthorizationRequest(s: Services, params: RequestParams, ip?: string): Promise<ParsedRequest> {
  if (!params.client_id) return { kind: "invalid", error: new MatrixError("invalid_request", "client_id is missing", 400) };
  const client = await findClient(s, params.client_id);
  if (!client) {
    logOAuthRefusal(s, "invalid_client", { endpoint: "authorize", clientId: params.client_id, ip });
    return { kind: "invalid", error: new MatrixError("invalid_client", "This application is not registered with this server", 400) };
  }
  if (!params.redirect_uri) return { kind: "invalid", error: new MatrixError("invalid_request", "redirect_uri is missing", 400) };
  if (!redirectMatches(client, params.redirect_uri)) {
    logOAuthRefusal(s, "redirect_uri_mismatch", { endpoint: "authorize", clientId: client.client_id, ip });
    return { kind: "invalid", error: new MatrixError("invalid_request", "redirect_uri is not one this application registered", 400) };
  }
  const redirectUri = params.redirect_uri;
  const state = params.state;
  const mode = params.response_mode ?? "query";
  const fail = (error: string, description: string): ParsedRequest => ({
    kind: "redirect",
    location: redirectWith(redirectUri, mode === "fragment" ? "fragment" : "query", { error, error_description: description, state }),
  });
  if (mode !== "query" && mode !== "fragment") return fail("invalid_request", "response_mode must be query or fragment");
  if (params.response_type !== "code") return fail("unsupported_response_type", "response_type must be code");
  if (!client.response_types.includes("code") || !client.grant_types.includes("authorization_code"))
    return fail("unauthorized_client", "This application did not register for the authorization_code grant");
  if (!params.code_challenge) {
    logOAuthRefusal(s, "pkce_missing", { endpoint: "authorize", clientId: client.client_id, ip });
    return fail("invalid_request", "code_challenge is required (PKCE, RFC 7636)");
  }
  if (params.code_challenge_method !== "S256") {
    logOAuthRefusal(s, params.code_challenge_method ? "pkce_plain" : "pkce_missing", { endpoint: "authorize", clientId: client.client_id, ip });
    return fail("invalid_request", "code_challenge_method must be S256");
  }
  if (!CODE_CHALLENGE.test(params.code_challenge)) return fail("invalid_request", "code_challenge is not a base64url SHA-256 digest");
  if (params.prompt !== undefined && !["", "consent", "login", "create"].includes(params.prompt))
    return fail("invalid_request", `prompt "${params.prompt}" is not supported`);
  if (params.nonce !== undefined && params.nonce.length > 512) return fail("invalid_request", "nonce is too long");
  let scope: GrantedScope;
  try {
    scope = parseScope(params.scope);
  } catch (err) {
    if (err instanceof MatrixError) return fail(err.errcode, err.message);
    throw err;
  }
  return { kind: "ok", request: { params, client, redirectUri, responseMode: mode, state, scope, codeChallenge: params.code_challenge } };
}

/** The user consented: a new code for the client; returns the redirect that hands it over. */
export async function grantAuthorization(s: Services, request: AuthorizationRequest, userId: string): Promise<string> {
  const code = randomBytes(24).toString("base64url");
  const now = s.clock.now();
  await s.oauth.addAuthorizationCode(hashToken(code), {
    clientId: request.client.client_id,
    userId,
    deviceId: request.scope.deviceId,
    scope: request.scope.tokens.join(" "),
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    createdTs: now,
    expiresTs: now + s.config.oauth_server.authorization_code_lifetime,
    nonce: request.params.nonce || null,
  });
  return redirectWith(request.redirectUri, request.responseMode, { state: request.state, code });
}

/** The user refused: access_denied for the client (RFC 6749 §4.1.2.1). */
export function denyAuthorization(request: AuthorizationRequest): string {
  return redirectWith(request.redirectUri, request.responseMode, { error: "access_denied", error_description: "The user refused the authorisation", state: request.state });
}
