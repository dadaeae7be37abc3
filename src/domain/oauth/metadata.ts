// GET /_matrix/client/v1/auth_metadata (spec v1.15 "Server metadata discovery", MSC2965): the RFC 8414
// authorisation server metadata of Weft's own OAuth 2.0 server (server/auth-metadata.ts chooses between it
// and a delegated server). Without that server (the default) the spec's 404 M_UNRECOGNIZED: the homeserver
// does not support the OAuth 2.0 API.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { oauthServerEnabled, oauthUrl } from "./endpoints.ts";
import { SUPPORTED_GRANT_TYPES } from "./client-registration.ts";
import { ACCOUNT_ACTIONS } from "./account.ts";
import { pageRegistrationOffered } from "./browser-register.ts";
import { OPENID } from "./scopes.ts";
import { ID_TOKEN_ALG } from "./openid.ts";

export function ownAuthMetadata(s: Services): Record<string, unknown> {
  if (!oauthServerEnabled(s)) throw new MatrixError("M_UNRECOGNIZED", "This homeserver does not serve the OAuth 2.0 API", 404);
  return {
    // RFC 8414 §2: the issuer is a URL with no query or fragment; ours is the server's public base URL.
    issuer: s.config.public_baseurl,
    authorization_endpoint: oauthUrl(s, "authorization"),
    token_endpoint: oauthUrl(s, "token"),
    registration_endpoint: oauthUrl(s, "registration"),
    revocation_endpoint: oauthUrl(s, "revocation"),
    device_authorization_endpoint: oauthUrl(s, "deviceAuthorization"),
    account_management_uri: oauthUrl(s, "account"),
    account_management_actions_supported: [...ACCOUNT_ACTIONS],
    response_types_supported: ["code"],
    grant_types_supported: [...SUPPORTED_GRANT_TYPES],
    response_modes_supported: ["query", "fragment"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    ...(pageRegistrationOffered(s) ? { prompt_values_supported: ["create"] } : {}),
    scopes_supported: ["urn:matrix:client:api:*", "urn:matrix:org.matrix.msc2967.client:api:*", OPENID],
    // OpenID Connect Discovery 1.0 §3 (openid.ts).
    jwks_uri: oauthUrl(s, "jwks"),
    userinfo_endpoint: oauthUrl(s, "userinfo"),
    id_token_signing_alg_values_supported: [ID_TOKEN_ALG],
    subject_types_supported: ["public"],
    claims_supported: ["iss", "sub", "aud", "iat", "exp", "nonce", "at_hash", "preferred_username", "name"],
  };
}
