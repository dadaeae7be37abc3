// POST /register: user accounts (user-interactive auth with m.login.dummy or m.login.registration_token),
// guests, and application-service registrations; inhibit_login; passwords hashed on arrival.
// Spec: Client-Server API "Account registration", Application Service API "Server admin style permissions".
import { MatrixError, forbidden } from "../errors.ts";
import { isPlainObject } from "../events/types.ts";
import { invalidateUserTokens } from "./authenticate.ts";
import { guestToUpgrade } from "./guest-upgrade.ts";
import type { Services } from "../services.ts";
import { checkUia, finishUia, type UiaResult } from "../uia/uia.ts";
import { appServiceForRequest, exclusiveOwner, isAppServiceUser } from "./appservices.ts";
import { checkPasswordPolicy, hashPassword } from "./passwords.ts";
import { startSession, type SessionTokens } from "./sessions.ts";
import { checkUsername, generateNumericUserId } from "./usernames.ts";
import { RegistrationTokenStore } from "../store/registration-tokens.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export interface RegisterRequest {
  kind: string;
  body: Record<string, unknown>;
  path: string;
  method: string;
  clientIp: string;
  bearerToken?: string;
}

export type RegisterResponse = Partial<SessionTokens> & { user_id: string; home_server: string };

function field<T extends "string" | "boolean">(body: Record<string, unknown>, key: string, type: T) {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== type) throw new MatrixError("M_BAD_JSON", `${key} must be a ${type}`);
  return v as T extends "string" ? string : boolean;
}

export function registrationFlows(s: Services): string[][] {
  const base = s.config.registration_requires_token ? ["m.login.registration_token"] : [];
  // registrations_require_3pid: only with a validated address; else an address is optional (as Synapse).
  if (s.config.registrations_require_3pid.includes("email")) return [[...base, "m.login.email.identity"]];
  const flows = [base.length ? base : ["m.login.dummy"]];
  if (s.config.email) flows.push([...base, "m.login.email.identity"]);
  return flows;
}

export interface NewAccount {
  userId: string;
  passwordHash: string | null;
  isGuest?: boolean;
  appserviceId?: string;
  registrationToken?: string;
  /** Server admin (shared-secret and admin registrations only). */
  isAdmin?: boolean;
  /** Synapse's user_type (e.g. "support", "bot"); null for ordinary users. */
  userType?: string | null;
  /** An address a validated e-mail session proved (m.login.email.identity): added to the new account. */
  threepid?: { medium: string; address: string; validatedAt: number; sessionId: string };
  /** Initial global displayname; defaults to the localpart (none for guests). */
  displayname?: string;
  /**
   * new: create the account; guest: upgrade this guest account (it keeps its rows and profile);
   * existing: the account was made by an earlier request of the same UIA session, only log in again.
   */
  mode?: "new" | "guest" | "existing";
}

/**
 * Creates the account (user and profile rows) and, unless `inhibit_login` is set in `body`, its first
 * session (honouring device_id, initial_device_display_name, refresh_token from `body`), in one transaction.
 * A taken user id is M_USER_IN_USE. Shared by /register and the admin API's shared-secret registration.
 */
export async function createAccount(s: Services, body: Record<string, unknown>, a: NewAccount): Promise<RegisterResponse> {
  const inhibitLogin = field(body, "inhibit_login", "boolean") === true;
  const deviceId = field(body, "device_id", "string");
  const initialDisplayName = field(body, "initial_device_display_name", "string");
  const refreshable = field(body, "refresh_token", "boolean") === true;
  const localpart = a.userId.slice(1, a.userId.indexOf(":"));
  try {
    const result = await s.db.$transaction(async (tx) => {
      const mode = a.mode ?? "new";
      if (mode === "new") {
        await s.users.create(tx, {
          userId: a.userId,
          passwordHash: a.passwordHash,
          isGuest: a.isGuest,
          appserviceId: a.appserviceId,
          isAdmin: a.isAdmin,
          userType: a.userType,
          displayname: a.isGuest ? null : (a.displayname ?? localpart),
        }, s.clock.now());
      } else if (mode === "guest" && !(await s.users.upgradeGuest(tx, a.userId, a.passwordHash))) {
        throw forbidden("Cannot register taken user ID without valid guest credentials for that user.");
      }
      if (a.registrationToken && mode !== "existing") await s.registrationTokens.completeUse(tx, a.registrationToken);
      if (a.threepid && mode !== "existing") {
        await s.threepids.add(tx, { medium: a.threepid.medium, address: a.threepid.address, userId: a.userId, validatedAt: a.threepid.validatedAt, addedAt: s.clock.now() });
      }
      const base = { user_id: a.userId, home_server: s.config.server_name };
      if (inhibitLogin) return base;
      const tokens = await startSession(s, tx, { userId: a.userId, deviceId, initialDisplayName, refreshable });
      return { ...base, ...tokens };
    });
    // The guest's cached tokens no longer say "guest".
    if (a.mode === "guest") await invalidateUserTokens(s, a.userId);
    if ((a.mode ?? "new") === "new")
      for (const hook of s.extensions.registered) await hook(s, { userId: a.userId, isGuest: a.isGuest === true, appserviceId: a.appserviceId });
    return result;
  } catch (err) {
    if ((err as { code?: string }).code === "P2002") throw new MatrixError("M_USER_IN_USE", "User ID already taken.", 400);
    throw err;
  }
}

async function registerGuest(s: Services, req: RegisterRequest): Promise<RegisterResponse> {
  if (!s.config.allow_guest_access) throw new MatrixError("M_GUEST_ACCESS_FORBIDDEN", "Guest access is disabled", 403);
  s.ratelimiter.check(`register:${req.clientIp}`, s.config.rc_registration);
  const userId = await generateNumericUserId(s);
  const { device_id: _ignored, ...body } = req.body; // guests always get a fresh device
  return createAccount(s, body, { userId, passwordHash: null, isGuest: true });
}

/**
 * Registration by an application service (spec: Application Service API "Server admin style permissions"):
 * its as_token, a username in its namespace (kept as given: bridges may use the historical grammar), no
 * password and no user-interactive auth. Refused: without the token (401), outside its namespace or in
 * another's exclusive one (400 M_EXCLUSIVE); an MSC4190 service must set inhibit_login.
 */
async function registerAppServiceUser(s: Services, req: RegisterRequest): Promise<RegisterResponse> {
  if (!req.bearerToken) throw new MatrixError("M_MISSING_TOKEN", "Appservice token must be provided when using a type of m.login.application_service", 401);
  const as = appServiceForRequest(s.config, req.bearerToken, req.clientIp);
  if (!as) throw new MatrixError("M_UNKNOWN_TOKEN", "Invalid application service token", 401, { soft_logout: false });
  const username = field(req.body, "username", "string");
  if (username === undefined) throw new MatrixError("M_MISSING_PARAM", "Desired username is missing or not a string", 400);
  if (username.length > 512) throw new MatrixError("M_INVALID_USERNAME", "Invalid username", 400);
  const userId = await checkUsername(s, username, { appserviceId: as.id, skipAvailability: true });
  if (!isAppServiceUser(s.config, as, userId)) throw new MatrixError("M_EXCLUSIVE", "Invalid user localpart for this application service.", 400);
  if (as.msc4190 && field(req.body, "inhibit_login", "boolean") !== true)
    throw new MatrixError("M_APPSERVICE_LOGIN_UNSUPPORTED", "This application service manages its devices (MSC4190): inhibit_login must be true", 400);
  // Synapse records the owning service only for users of its exclusive namespaces.
  const owned = exclusiveOwner(s.config, userId)?.id === as.id;
  return createAccount(s, req.body, { userId, passwordHash: null, appserviceId: owned ? as.id : undefined });
}

export async function register(s: Services, req: RegisterRequest): Promise<RegisterResponse> {
  if (s.config.oauth_delegation) return registerUnderDelegation(s, req);
  if (req.kind === "guest") return registerGuest(s, req);
  if (req.kind !== "user") throw new MatrixError("M_INVALID_PARAM", "kind must be 'user' or 'guest'", 400);
  const auth = req.body.auth as Record<string, unknown> | undefined;
  if (req.body.type === "m.login.application_service" || auth?.type === "m.login.application_service")
    return registerAppServiceUser(s, req);

  if (!s.config.enable_registration) throw new MatrixError("M_FORBIDDEN", "Registration has been disabled", 403);
  const rateKey = `register:${req.clientIp}`;
  s.ratelimiter.check(rateKey, s.config.rc_registration, { update: false });

  // A session that already registered an account answers a retry with that account (registration is
  // idempotent, as Synapse: a client that lost the answer retries with the completed session).
  const sessionId = isPlainObject(req.body.auth) && typeof req.body.auth.session === "string" ? req.body.auth.session : undefined;
  const registered = sessionId ? (await s.uia.get(sessionId))?.serverData.registered_user_id : undefined;

  // Refuse what can never succeed before asking for authentication (as Synapse does).
  const username = field(req.body, "username", "string")?.toLowerCase();
  const guestToken = field(req.body, "guest_access_token", "string");
  const guest = guestToken !== undefined ? await guestToUpgrade(s, guestToken, username) : undefined;
  if (username !== undefined && !guest && registered !== `@${username}:${s.config.server_name}`) await checkUsername(s, username);
  const password = field(req.body, "password", "string");
  if (password !== undefined) checkPasswordPolicy(password, s.config.password_config.policy);

  const uia: UiaResult = await checkUia(
    s,
    { path: req.path, method: req.method, body: req.body, clientIp: req.clientIp },
    {
      flows: registrationFlows(s),
      description: "register a new account",
      onNewParams: async (body) =>
        typeof body.password === "string" ? { password_hash: await hashPassword(body.password, s.config.password_config.scrypt_log_n) } : {},
    },
  );
  const params = uia.params;
  const done = uia.serverData.registered_user_id;
  if (typeof done === "string") return createAccount(s, params, { userId: done, passwordHash: null, mode: "existing" });
  const finalUsername = typeof params.username === "string" ? params.username.toLowerCase() : undefined;
  const userId = guest ?? (finalUsername !== undefined ? await checkUsername(s, finalUsername) : await generateNumericUserId(s));
  s.ratelimiter.check(rateKey, s.config.rc_registration);
  const token = uia.completed.get("m.login.registration_token");
  const email = uia.completed.get("m.login.email.identity") as { medium: string; address: string; validated_at: number; sid: string } | undefined;
  if (email && (await s.threepids.owner(email.medium, email.address)) !== null)
    throw new MatrixError("M_THREEPID_IN_USE", "This address is already in use", 400);
  const result = await createAccount(s, params, {
    threepid: email && { medium: email.medium, address: email.address, validatedAt: email.validated_at, sessionId: email.sid },
    userId,
    passwordHash: (uia.serverData.password_hash as string | undefined) ?? null,
    registrationToken: typeof token === "string" ? token : undefined,
    mode: guest ? "guest" : "new",
  });
  if (email) await s.threepids.deleteSession(email.sid);
  // The session stays (until it expires) to answer retries with the same account.
  await s.uia.setServerData(uia.sessionId, { ...uia.serverData, registered_user_id: userId });
  return result;
}

/**
 * /register on a server delegating authentication (MSC3861): only application services register, and
 * get no session (the authorization server owns sessions) — Synapse's RegisterAppServiceOnlyRestServlet.
 */
async function registerUnderDelegation(s: Services, req: RegisterRequest): Promise<RegisterResponse> {
  if (req.body.type !== "m.login.application_service")
    throw new MatrixError("M_FORBIDDEN", "Registration has been disabled. Only m.login.application_service registrations are allowed.", 403);
  if (field(req.body, "inhibit_login", "boolean") !== true)
    throw new MatrixError("M_APPSERVICE_LOGIN_UNSUPPORTED", "This server uses OAuth2, so the inhibit_login parameter must be set to true for appservice registrations.", 400);
  if (req.kind === "guest") throw new MatrixError("M_FORBIDDEN", "Guest access is disabled", 403);
  if (req.kind !== "user") throw new MatrixError("M_UNRECOGNIZED", `Do not understand membership kind: ${req.kind}`, 400);
  return registerAppServiceUser(s, req);
}

/** GET /register/available */
export async function usernameAvailable(s: Services, username: string, clientIp: string): Promise<void> {
  refuseWhenDelegated(s);
  if (!s.config.enable_registration) throw new MatrixError("M_FORBIDDEN", "Registration has been disabled", 403);
  s.ratelimiter.check(`register-available:${clientIp}`, { per_second: 0.1, burst_count: 20 });
  await checkUsername(s, username.toLowerCase());
}

/** GET /v1/register/m.login.registration_token/validity */
export async function registrationTokenValid(s: Services, token: string, clientIp: string): Promise<boolean> {
  refuseWhenDelegated(s);
  if (!s.config.registration_requires_token) throw new MatrixError("M_FORBIDDEN", "Registration tokens are not enabled", 403);
  s.ratelimiter.check(`registration-token-validity:${clientIp}`, { per_second: 0.1, burst_count: 20 });
  return RegistrationTokenStore.isValid(await s.registrationTokens.get(token), s.clock.now());
}
