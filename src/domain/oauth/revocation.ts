// The revocation endpoint (RFC 7009, spec v1.15 "Token revocation", MSC4254): a client revokes one of its
// access or refresh tokens, which ends the whole session — the device, its tokens and keys, as POST
// /logout does. An unknown token is answered alike (RFC 7009 §2.2: nothing to revoke); a token granted
// to another client, or not by the OAuth server at all, is refused.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken } from "../accounts/tokens.ts";
import { findClient } from "./client-registration.ts";
import { endSession } from "./token.ts";

export async function revokeToken(s: Services, form: Record<string, string>, clientIp: string): Promise<void> {
  s.ratelimiter.check(`oauth-token:${clientIp}`, s.config.oauth_server.rc_token);
  const clientId = form.client_id;
  if (!clientId) throw new MatrixError("invalid_client", "client_id is required", 401);
  if (!(await findClient(s, clientId))) throw new MatrixError("invalid_client", "Unknown client", 401);
  const token = form.token;
  if (!token) throw new MatrixError("invalid_request", "token is required", 400);
  const hint = form.token_type_hint;
  const hash = hashToken(token);
  const lookups = hint === "refresh_token" ? ["refresh", "access"] : ["access", "refresh"];
  let owner: { userId: string; deviceId: string | null } | null = null;
  for (const kind of lookups) {
    owner = kind === "access" ? await s.sessions.findAccessToken(hash) : await s.sessions.findRefreshToken(hash);
    if (owner) break;
  }
  if (!owner) return;
  const grant = owner.deviceId ? await s.oauth.getGrant(owner.userId, owner.deviceId) : undefined;
  if (!grant || grant.clientId !== clientId) throw new MatrixError("unauthorized_client", "This token was not granted to this client", 400);
  await endSession(s, owner.userId, owner.deviceId!);
}
