// POST /login: password, login-token and application-service logins (spec: Client-Server API "Login").
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { resolveLoginUser } from "./identifiers.ts";
import { checkPasswordLogin } from "./password-login.ts";
import { startSession, type SessionTokens } from "./sessions.ts";
import { runDeviceUpdateHooks } from "../devices/update-device.ts";
import { appServiceForRequest, isAppServiceUser } from "./appservices.ts";
import { hashToken } from "./tokens.ts";
import { invalidateUserTokens } from "./authenticate.ts";
import { identityProviders, type IdentityProviderInfo } from "../sso/flow.ts";
import { lockedError } from "./moderation.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";
import { pageSsoEnabled } from "../oauth/legacy-sso.ts";

export interface LoginRequest {
  body: Record<string, unknown>;
  clientIp: string;
  /** The bearer token sent with the request, if any (application services log in with their as_token). */
  bearerToken?: string;
}

export type LoginResponse = SessionTokens & { home_server: string; well_known: Record<string, unknown> };

export type LoginFlow = { type: string; get_login_token?: boolean; identity_providers?: IdentityProviderInfo[]; oauth_aware_preferred?: boolean };

export function loginFlows(s: Services): LoginFlow[] {
  refuseWhenDelegated(s);
  const flows: LoginFlow[] = [];
  if (s.config.password_config.enabled && s.config.password_config.localdb_enabled) flows.push({ type: "m.login.password" });
  if (s.sso.enabled) flows.push({ type: "m.login.sso", identity_providers: identityProviders(s) });
  // Weft's own OAuth server serves m.login.sso through its pages, the flow OAuth-aware clients prefer (MSC3824).
  else if (pageSsoEnabled(s)) flows.push({ type: "m.login.sso", oauth_aware_preferred: true });
  flows.push({ type: "m.login.token", ...(s.config.login_via_existing_session.enabled ? { get_login_token: true } : {}) });
  flows.push({ type: "m.login.application_service" });
  return flows;
}

function optString(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${key} must be a string`);
  return v;
}

async function userFor(s: Services, req: LoginRequest): Promise<string> {
  const { body } = req;
  switch (body.type) {
    case "m.login.password": {
      s.ratelimiter.check(`login-address:${req.clientIp}`, s.config.rc_login.address);
      const userId = resolveLoginUser(s, body);
      s.ratelimiter.check(`login-account:${userId}`, s.config.rc_login.account);
      if (typeof body.password !== "string") throw new MatrixError("M_BAD_JSON", "password must be a string");
      await checkPasswordLogin(s, userId, body.password, req.clientIp);
      return userId;
    }
    case "m.login.token": {
      s.ratelimiter.check(`login-address:${req.clientIp}`, s.config.rc_login.address);
      if (typeof body.token !== "string") throw new MatrixError("M_MISSING_PARAM", "Missing token", 400);
      const userId = await s.sessions.consumeLoginToken(hashToken(body.token), s.clock.now());
      if (!userId) throw new MatrixError("M_FORBIDDEN", "Invalid login token", 403);
      const user = await s.users.get(userId);
      if (!user || user.deactivated) throw new MatrixError("M_USER_DEACTIVATED", "This account has been deactivated", 403);
      return userId;
    }
    case "m.login.application_service": {
      // Spec: Application Service API "Server admin style permissions"; Synapse's rules.
      if (!req.bearerToken) throw new MatrixError("M_MISSING_TOKEN", "Missing access token", 401);
      const as = appServiceForRequest(s.config, req.bearerToken, req.clientIp);
      if (!as) throw new MatrixError("M_UNKNOWN_TOKEN", "This login method is only valid for application services", 401, { soft_logout: false });
      if (as.msc4190) throw new MatrixError("M_APPSERVICE_LOGIN_UNSUPPORTED", "This application service manages its devices (MSC4190): it cannot log in", 400);
      if (as.rate_limited) s.ratelimiter.check(`login-address:${req.clientIp}`, s.config.rc_login.address);
      const userId = resolveLoginUser(s, body);
      if (!isAppServiceUser(s.config, as, userId)) throw new MatrixError("M_FORBIDDEN", "The user is not in the application service's namespace", 403);
      const user = await s.users.get(userId);
      if (!user) throw new MatrixError("M_FORBIDDEN", "Invalid username or password", 403);
      if (user.deactivated) throw new MatrixError("M_USER_DEACTIVATED", "This account has been deactivated", 403);
      return userId;
    }
    case undefined:
      throw new MatrixError("M_MISSING_PARAM", "Missing login type", 400);
    default:
      throw new MatrixError("M_UNKNOWN", "Unknown login type", 400);
  }
}

export async function login(s: Services, req: LoginRequest): Promise<LoginResponse> {
  refuseWhenDelegated(s);
  const { body } = req;
  const deviceId = optString(body, "device_id");
  const initialDisplayName = optString(body, "initial_device_display_name");
  const refreshable = body.refresh_token === true;
  if (body.refresh_token !== undefined && typeof body.refresh_token !== "boolean")
    throw new MatrixError("M_BAD_JSON", "refresh_token must be a boolean");
  if (deviceId !== undefined && (deviceId.length === 0 || deviceId.length > 255))
    throw new MatrixError("M_INVALID_PARAM", "device_id must be 1 to 255 characters", 400);

  const userId = await userFor(s, req);
  if ((await s.users.get(userId))?.locked) throw lockedError();
  const tokens = await s.db.$transaction((tx) => startSession(s, tx, { userId, deviceId, initialDisplayName, refreshable }));
  if (deviceId !== undefined) await invalidateUserTokens(s, userId);
  await runDeviceUpdateHooks(s, userId, tokens.device_id, true);
  return {
    ...tokens,
    home_server: s.config.server_name,
    well_known: { "m.homeserver": { base_url: s.config.public_baseurl } },
  };
}
