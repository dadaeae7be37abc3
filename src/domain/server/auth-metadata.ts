// The OAuth 2.0 authorization server a client should use (spec v1.15 "OAuth 2.0 API": GET
// /_matrix/client/v1/auth_metadata; MSC2965's unstable auth_metadata and auth_issuer; the client
// .well-known's `org.matrix.msc2965.authentication`). One place decides where that server is: Weft's own
// (oauth_server.enabled, src/domain/oauth/) or a delegated one (MSC3861, the issuer's metadata, fetched
// and cached); the config allows one at most. None: null, and the endpoints stay unknown (404 M_UNRECOGNIZED).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { AuthServerUnreachable } from "../oauth-delegation/http.ts";
import { ownAuthMetadata } from "../oauth/metadata.ts";
import { oauthServerEnabled, oauthUrl } from "../oauth/endpoints.ts";

const unreachable = (err: unknown): never => {
  if (err instanceof AuthServerUnreachable) throw new MatrixError("M_UNKNOWN", `The authorization server could not be reached: ${err.message}`, 503);
  throw err;
};

/** The authorization server's metadata (RFC 8414), with MSC2965's account_management_uri when known; null: none. */
export async function authMetadata(s: Services): Promise<Record<string, unknown> | null> {
  if (oauthServerEnabled(s)) return ownAuthMetadata(s);
  const d = s.oauthDelegation;
  if (!d) return null;
  const metadata = await d.issuerMetadata().catch(unreachable);
  const account = d.config.account_management_url;
  return account && metadata.account_management_uri === undefined ? { ...metadata, account_management_uri: account } : { ...metadata };
}

/** MSC2965's issuer (GET .../org.matrix.msc2965/auth_issuer); null: none. */
export async function authIssuer(s: Services): Promise<string | null> {
  if (oauthServerEnabled(s)) return s.config.public_baseurl;
  const d = s.oauthDelegation;
  if (!d) return null;
  return d.issuer().catch(unreachable);
}

/**
 * The client .well-known's `org.matrix.msc2965.authentication` (issuer and account page), or undefined.
 * It never fails: without the metadata, the configured issuer and account page are given.
 */
export async function wellKnownAuthentication(s: Services): Promise<{ issuer: string; account?: string } | undefined> {
  if (oauthServerEnabled(s)) return { issuer: s.config.public_baseurl, account: oauthUrl(s, "account") };
  const d = s.oauthDelegation;
  if (!d) return undefined;
  const issuer = await d.issuer().catch(() => d.config.issuer);
  const account = await d.accountManagementUrl();
  return { issuer, ...(account ? { account } : {}) };
}

/** The answer to a request for an unknown endpoint (as when no route matches). */
export const unrecognized = () => new MatrixError("M_UNRECOGNIZED", "Unrecognized request", 404);
