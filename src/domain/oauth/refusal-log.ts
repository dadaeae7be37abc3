// The log line of a security refusal of Weft's OAuth 2.0 server (issue 38: "refused and logged"): one
// warn line per refused request through the server's logger, with a stable message per kind and the
// fields `oauth_refusal` (the kind), `client_id`, `ip` and `user_id` where known. It never carries a
// code, token, verifier, password or CSRF value (not even hashed). The checks themselves are RFC 6749
// §4.1.2/§5.2, RFC 7636 §4.6 and the spec's "Refresh token grant"; ordinary user mistakes (a wrong
// password) are not refusals here.
import type { Services } from "../services.ts";

const MESSAGES = {
  pkce_missing: "OAuth request refused: no PKCE code challenge or verifier",
  pkce_plain: "OAuth request refused: PKCE method is not S256",
  pkce_mismatch: "OAuth request refused: PKCE code_verifier does not match",
  code_reused: "OAuth request refused: authorization code reused, its session ended",
  code_expired: "OAuth request refused: authorization code expired",
  code_other_client: "OAuth request refused: authorization code of another client",
  redirect_uri_mismatch: "OAuth request refused: redirect_uri mismatch",
  scope_escalation: "OAuth request refused: refresh asked for more scope than granted",
  cross_client_refresh: "OAuth request refused: refresh token of another client",
  refresh_token_replayed: "OAuth request refused: refresh token replayed, its session ended",
  csrf_mismatch: "OAuth form refused: CSRF token missing or wrong",
  invalid_client: "OAuth request refused: unknown or missing client",
} as const;

export type OAuthRefusal = keyof typeof MESSAGES;

export interface RefusalContext {
  /** The client that made the request (as it named itself: an unknown one's id is cut short). */
  clientId?: string | undefined;
  ip?: string | undefined;
  userId?: string | undefined;
  /** Where the refusal happened: "authorize", "token", or the page of a CSRF refusal. */
  endpoint?: string;
  /** The client the code or token was really issued to, when it differs from the requesting one. */
  grantClientId?: string;
}

/** Logs the refusal once, at warn. */
export function logOAuthRefusal(s: Services, kind: OAuthRefusal, ctx: RefusalContext): void {
  s.log.warn(
    {
      oauth_refusal: kind,
      ...(ctx.endpoint !== undefined ? { endpoint: ctx.endpoint } : {}),
      ...(ctx.clientId ? { client_id: ctx.clientId.slice(0, 200) } : {}),
      ...(ctx.grantClientId !== undefined ? { grant_client_id: ctx.grantClientId } : {}),
      ...(ctx.userId !== undefined ? { user_id: ctx.userId } : {}),
      ...(ctx.ip !== undefined ? { ip: ctx.ip } : {}),
    },
    MESSAGES[kind],
  );
}
