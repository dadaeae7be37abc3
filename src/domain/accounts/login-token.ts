// POST /v1/login/get_token: a short-lived, single-use token for `m.login.token`, so an existing session
// can sign in a new device (Synapse's `login_via_existing_session`). Spec: Client-Server API v1.7+.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { hashToken, newToken } from "./tokens.ts";
import { reauthUia } from "../uia/flows.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export async function getLoginToken(s: Services, r: Requester, req: UiaRequest): Promise<{ login_token: string; expires_in_ms: number }> {
  refuseWhenDelegated(s);
  const cfg = s.config.login_via_existing_session;
  if (!cfg.enabled) throw new MatrixError("M_UNRECOGNIZED", "Login via an existing session is disabled", 404);
  if (r.isGuest) throw new MatrixError("M_GUEST_ACCESS_FORBIDDEN", "Guests cannot create login tokens", 403);
  s.ratelimiter.check(`get-login-token:${r.userId}`, { per_second: 1 / 60, burst_count: 1 }, { update: false });
  const uia = cfg.require_ui_auth
    ? await checkUia(s, { ...req, requester: r }, await reauthUia(s, r, { description: "sign in a new device" }))
    : undefined;
  s.ratelimiter.check(`get-login-token:${r.userId}`, { per_second: 1 / 60, burst_count: 1 });
  const token = newToken("login");
  await s.sessions.createLoginToken(hashToken(token), r.userId, s.clock.now() + cfg.token_timeout);
  if (uia) await finishUia(s, uia);
  return { login_token: token, expires_in_ms: cfg.token_timeout };
}
