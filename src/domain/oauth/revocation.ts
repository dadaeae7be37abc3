// The revocation endpoint (RFC 7009, spec v1.15 "Token revocation", MSC4254): revoking an access or
// refresh token ends the whole session — the device, both its tokens and its keys, as POST /logout does.
// As the spec asks, client_id is optional and a token is revoked even when it names another client (so
// secret scanners can revoke leaked tokens); an unknown or already revoked token is answered 200 alike.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { hashToken } from "../accounts/tokens.ts";
import { invalidateUserTokens } from "../accounts/authenticate.ts";
import { endSession } from "./token.ts";

export async function revokeToken(s: Services, form: Record<string, string>, clientIp: string): Promise<void> {
  s.ratelimiter.check(`oauth-token:${clientIp}`, s.config.oauth_server.rc_token);
  const token = form.token;
  if (!token) throw new MatrixError("invalid_request", "token is required", 400);
  const hint = form.token_type_hint;
  if (hint !== undefined && hint !== "access_token" && hint !== "refresh_token")
    throw new MatrixError("invalid_request", "token_type_hint must be access_token or refresh_token", 400);
  const hash = hashToken(token);
  const lookups = hint === "refresh_token" ? ["refresh", "access"] : ["access", "refresh"];
  for (const kind of lookups) {
    if (kind === "access") {
      const row = await s.sessions.findAccessToken(hash);
      if (!row) continue;
      if (row.deviceId) await endSession(s, row.userId, row.deviceId);
      else {
        await s.db.accessToken.deleteMany({ where: { id: row.id } });
        await invalidateUserTokens(s, row.userId);
      }
      return;
    }
    const row = await s.sessions.findRefreshToken(hash);
    if (row) return endSession(s, row.userId, row.deviceId);
  }
}
