// REST routes of Weft's own OAuth 2.0 server that answer JSON: its metadata at RFC 8414's
// /.well-known/oauth-authorization-server (GET /_matrix/client/v1/auth_metadata, spec v1.15 "Server metadata
// discovery", is client/auth-metadata.ts, for either server) and the registration endpoint
// (RFC 7591, MSC2966), the token endpoint (RFC 6749, MSC2964) and the revocation endpoint (RFC 7009,
// MSC4254), the device authorisation endpoint (RFC 8628, MSC4341), and OpenID Connect's discovery
// document, key set and userinfo endpoint (domain/oauth/openid.ts). Served only with oauth_server.enabled (otherwise the unknown path's 404
// M_UNRECOGNIZED, which the spec asks for). OAuth endpoints answer errors as RFC 6749 §5.2
// `{error, error_description}`, not Matrix's errcode.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { route, type Call } from "../http.ts";
import { ownAuthMetadata } from "../../domain/oauth/metadata.ts";
import { registerClient } from "../../domain/oauth/client-registration.ts";
import { OAUTH_PATHS, oauthServerEnabled } from "../../domain/oauth/endpoints.ts";
import { tokenRequest } from "../../domain/oauth/token.ts";
import { revokeToken } from "../../domain/oauth/revocation.ts";
import { startDeviceAuthorization } from "../../domain/oauth/device-grant.ts";
import { jwks, userinfo } from "../../domain/oauth/openid.ts";
import { oauthTheme } from "../oauth-pages/theme.ts";

/** The fields of an application/x-www-form-urlencoded body (the first of a repeated name). */
export function formFields(c: Call): Record<string, string> {
  const type = String(c.req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new MatrixError("invalid_request", "The body must be application/x-www-form-urlencoded", 400);
  const raw = c.req.body;
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(Buffer.isBuffer(raw) ? raw.toString("utf8") : "")) if (!(k in out)) out[k] = v;
  return out;
}

/** Runs an OAuth endpoint: its errors as RFC 6749 JSON, never cached (RFC 6749 §5.1). */
export async function oauthJson(c: Call, run: () => Promise<unknown>): Promise<unknown> {
  c.reply.header("cache-control", "no-store").header("pragma", "no-cache");
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof MatrixError)) throw err;
    const retry = err.extra?.retry_after_ms;
    if (typeof retry === "number") c.reply.header("retry-after", String(Math.ceil(retry / 1000)));
    // Matrix errors of shared checks (rate limits, M_NOT_JSON) keep their code as the error.
    return c.reply.code(err.httpStatus).send({ error: err.errcode, error_description: err.message });
  }
}

export function oauthRoutes(app: FastifyInstance, s: Services): void {
  if (!oauthServerEnabled(s)) return;
  oauthTheme(s); // reads templates.custom_template_directory now: its warnings at startup, not at the first page
  // RFC 8414 §3's own discovery URL for the issuer (public_baseurl), where generic OAuth clients look.
  route(app, s, ["/.well-known/oauth-authorization-server"], { method: "GET", path: "", auth: "none", handler: () => ownAuthMetadata(s) });
  // OpenID Connect Discovery 1.0 §4: the same document where OIDC clients look; the key set; userinfo (§5.3, GET or POST).
  route(app, s, ["/.well-known/openid-configuration"], { method: "GET", path: "", auth: "none", handler: () => ownAuthMetadata(s) });
  route(app, s, [OAUTH_PATHS.jwks], { method: "GET", path: "", auth: "none", handler: () => jwks(s) });
  for (const method of ["GET", "POST"] as const)
    route(app, s, [OAUTH_PATHS.userinfo], { method, path: "", auth: "token", handler: (c) => oauthJson(c, () => userinfo(s, c.requester!)) });
  route(app, s, [OAUTH_PATHS.registration], {
    method: "POST", path: "", auth: "none",
    handler: (c) => oauthJson(c, async () => c.reply.code(201).send(await registerClient(s, c.body(), c.clientIp))),
  });
  route(app, s, [OAUTH_PATHS.token], { method: "POST", path: "", auth: "none", handler: (c) => oauthJson(c, () => tokenRequest(s, formFields(c), c.clientIp)) });
  route(app, s, [OAUTH_PATHS.deviceAuthorization], { method: "POST", path: "", auth: "none", handler: (c) => oauthJson(c, () => startDeviceAuthorization(s, formFields(c), c.clientIp)) });
  route(app, s, [OAUTH_PATHS.revocation], {
    method: "POST", path: "", auth: "none",
    handler: (c) => oauthJson(c, async () => {
      await revokeToken(s, formFields(c), c.clientIp);
      return {};
    }),
  });
}
