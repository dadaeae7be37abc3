// Where Weft's own OAuth 2.0 server answers: one table of paths, read by the metadata document
// (metadata.ts) and by the routes (src/compat/client/oauth*.ts), so the two cannot disagree.
import type { Services } from "../services.ts";

export const OAUTH_PATHS = {
  registration: "/_weft/oauth2/register",
  authorization: "/_weft/oauth2/authorize",
  token: "/_weft/oauth2/token",
  revocation: "/_weft/oauth2/revoke",
  deviceAuthorization: "/_weft/oauth2/device",
  deviceVerification: "/_weft/oauth2/device/verify",
  account: "/_weft/oauth2/account",
  jwks: "/_weft/oauth2/keys.json",
  userinfo: "/_weft/oauth2/userinfo",
  sso: "/_weft/oauth2/sso",
} as const;

/** The absolute URL of one of the server's OAuth endpoints (under public_baseurl). */
export function oauthUrl(s: Services, which: keyof typeof OAUTH_PATHS): string {
  return new URL(OAUTH_PATHS[which].slice(1), s.config.public_baseurl).href;
}

/** Whether this server serves the OAuth 2.0 API itself. */
export function oauthServerEnabled(s: Services): boolean {
  return s.config.oauth_server.enabled;
}
