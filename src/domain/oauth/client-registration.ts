// Dynamic client registration (RFC 7591, spec v1.15 "Client registration", MSC2966): the client's
// metadata checked by the spec's rules — client_uri an https URL (http only on a loopback host, for
// development), the other URIs on its host or a subdomain, redirect URIs per application_type (web:
// https on that host; native: a private-use scheme that is the reversed host, an http loopback URI with
// no port, or a claimed https URI), public clients only (token_endpoint_auth_method "none"). Values the
// server does not understand are dropped; localized variants (`client_name#fr`) are not registered.
import { randomBytes } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";

export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
export const SUPPORTED_GRANT_TYPES = ["authorization_code", "refresh_token", DEVICE_CODE_GRANT] as const;
/** Whether a URL's hostname names the loopback interface (MSC2966's http redirect URIs, RFC 8252 §7.3). */
export const isLoopbackHost = (hostname: string): boolean => hostname === "localhost" || hostname === "127.0.0.1" || hostname === "[::1]";

/** The metadata Weft registers and answers with (RFC 7591 §3.2.1). */
export interface ClientMetadata {
  client_id: string;
  client_id_issued_at: number;
  client_uri: string;
  client_name?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  redirect_uris: string[];
  response_types: string[];
  grant_types: string[];
  token_endpoint_auth_method: "none";
  application_type: "web" | "native";
}

const invalidMetadata = (why: string) => new MatrixError("invalid_client_metadata", why, 400);
const invalidRedirect = (why: string) => new MatrixError("invalid_redirect_uri", why, 400);

function parseUrl(v: unknown, name: string, fail: (why: string) => MatrixError): URL {
  if (typeof v !== "string" || v === "") throw fail(`${name} must be a URL`);
  try {
    return new URL(v);
  } catch {
    throw fail(`${name} is not a valid URL`);
  }
}

/** Whether `host` is `base` or one of its subdomains. */
function onHost(host: string, base: string): boolean {
  return host === base || host.endsWith("." + base);
}

function checkWebUri(u: URL, clientHost: string, name: string, fail: (why: string) => MatrixError): void {
  if (u.protocol !== "https:") throw fail(`${name} must use the https scheme`);
  if (u.username !== "" || u.password !== "") throw fail(`${name} must not contain a user or password`);
  if (!onHost(u.hostname, clientHost)) throw fail(`${name} must be on the host of client_uri (${clientHost}) or a subdomain of it`);
}

/** The client URI's host in reverse-DNS notation ("example.com" → "com.example"). */
const reversedHost = (host: string) => host.split(".").reverse().join(".");

function checkRedirectUri(raw: string, clientUri: URL, type: "web" | "native"): void {
  const u = parseUrl(raw, "redirect_uri", invalidRedirect);
  if (u.hash !== "" || raw.includes("#")) throw invalidRedirect("redirect_uri must not have a fragment");
  if (type === "web") return checkWebUri(u, clientUri.hostname, "redirect_uri", invalidRedirect);
  if (u.protocol === "https:") return checkWebUri(u, clientUri.hostname, "redirect_uri", invalidRedirect); // claimed https
  if (u.protocol === "http:") {
    if (!isLoopbackHost(u.hostname)) throw invalidRedirect("an http redirect_uri must be on the loopback interface (localhost, 127.0.0.1 or [::1])");
    if (u.port !== "" || /^http:\/\/[^/]*:\d*(\/|$|\?)/i.test(raw)) throw invalidRedirect("a loopback redirect_uri must not name a port (any port is accepted when authorising)");
    if (u.username !== "" || u.password !== "") throw invalidRedirect("redirect_uri must not contain a user or password");
    return;
  }
  // A private-use scheme: the reversed host of client_uri, or under it; no authority component.
  const scheme = u.protocol.slice(0, -1);
  const base = reversedHost(clientUri.hostname);
  if (scheme !== base && !scheme.startsWith(base + ".")) throw invalidRedirect(`a private-use redirect_uri scheme must be the client_uri's host in reverse-DNS notation (${base}) or start with it`);
  if (raw.slice(scheme.length + 1).startsWith("//")) throw invalidRedirect("a private-use redirect_uri must not have an authority component");
}

function optString(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalidMetadata(`${key} must be a string`);
  return v;
}

function stringList(body: Record<string, unknown>, key: string, fail: (why: string) => MatrixError): string[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw fail(`${key} must be an array of strings`);
  return v as string[];
}

/** Validates a registration request; returns the metadata to register (without the client id). */
export function validateClientMetadata(body: Record<string, unknown>): Omit<ClientMetadata, "client_id" | "client_id_issued_at"> {
  const clientUri = parseUrl(body.client_uri, "client_uri", invalidMetadata);
  if (clientUri.protocol !== "https:" && !(clientUri.protocol === "http:" && isLoopbackHost(clientUri.hostname)))
    throw invalidMetadata("client_uri must use the https scheme");
  if (clientUri.username !== "" || clientUri.password !== "") throw invalidMetadata("client_uri must not contain a user or password");
  const applicationType = optString(body, "application_type") ?? "web";
  if (applicationType !== "web" && applicationType !== "native") throw invalidMetadata('application_type must be "web" or "native"');
  const authMethod = optString(body, "token_endpoint_auth_method") ?? "none";
  if (authMethod !== "none") throw invalidMetadata('token_endpoint_auth_method must be "none": only public clients are supported');

  const grantTypes = (stringList(body, "grant_types", invalidMetadata) ?? ["authorization_code"]).filter((g) => (SUPPORTED_GRANT_TYPES as readonly string[]).includes(g));
  const responseTypes = (stringList(body, "response_types", invalidMetadata) ?? ["code"]).filter((r) => r === "code");
  if (grantTypes.includes("authorization_code") && responseTypes.length === 0)
    throw invalidMetadata('response_types must include "code" for the authorization_code grant');
  const redirectUris = stringList(body, "redirect_uris", invalidRedirect) ?? [];
  if (grantTypes.includes("authorization_code") && redirectUris.length === 0)
    throw invalidRedirect("redirect_uris must name at least one URI for the authorization_code grant");
  for (const uri of redirectUris) checkRedirectUri(uri, clientUri, applicationType);

  const out: Omit<ClientMetadata, "client_id" | "client_id_issued_at"> = {
    client_uri: clientUri.href,
    redirect_uris: [...new Set(redirectUris)],
    response_types: [...new Set(responseTypes)],
    grant_types: [...new Set(grantTypes)],
    token_endpoint_auth_method: "none",
    application_type: applicationType,
  };
  const name = optString(body, "client_name");
  if (name !== undefined) {
    if (name.length > 255) throw invalidMetadata("client_name is longer than 255 characters");
    out.client_name = name;
  }
  for (const key of ["logo_uri", "tos_uri", "policy_uri"] as const) {
    if (body[key] === undefined || body[key] === null) continue;
    const u = parseUrl(body[key], key, invalidMetadata);
    checkWebUri(u, clientUri.hostname, key, invalidMetadata);
    out[key] = u.href;
  }
  return out;
}

/** POST registration_endpoint: registers a client; answers its metadata with the new client_id (201). */
export async function registerClient(s: Services, body: Record<string, unknown>, clientIp: string): Promise<ClientMetadata> {
  s.ratelimiter.check(`oauth-register:${clientIp}`, s.config.oauth_server.rc_client_registration);
  const metadata = validateClientMetadata(body);
  const registered: ClientMetadata = { client_id: randomBytes(16).toString("base64url"), client_id_issued_at: Math.floor(s.clock.now() / 1000), ...metadata };
  await s.oauth.addClient(registered.client_id, registered as unknown as Record<string, unknown>, s.clock.now());
  return registered;
}

/** A registered client's metadata, or undefined. */
export async function findClient(s: Services, clientId: string): Promise<ClientMetadata | undefined> {
  return (await s.oauth.getClient(clientId)) as ClientMetadata | undefined;
}
