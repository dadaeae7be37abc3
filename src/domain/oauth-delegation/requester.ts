// From a delegated access token to a Requester (MSC3861, MSC2967 scopes, as Synapse's delegated auth):
// the admin token acts as the admin `@__oidc_admin`; any other token is introspected (RFC 7662) and must
// be active and carry `urn:matrix:client:api:*` (or MSC2967's unstable form). The user is the one linked
// to the token's `sub` (external id of "oauth-delegated"), else `@<username>:server` — created on first
// sight and linked; the device is the `device_id` claim or the one `urn:matrix:client:device:<id>`
// scope, created on first sight; `urn:synapse:admin:*` makes the request a server admin's. With Matrix
// Authentication Service (matrix_authentication_service), which provisions both through /_synapse/mas,
// the user is `@<username>` and it and the device must exist, as Synapse's MasDelegatedAuth has it.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { SeenFrom } from "../accounts/authenticate.ts";
import { lockedError } from "../accounts/moderation.ts";
import { createAccount } from "../accounts/register.ts";
import { checkUsername } from "../accounts/usernames.ts";
import { runDeviceUpdateHooks } from "../devices/update-device.ts";
import { AuthServerUnreachable } from "./http.ts";
import type { DelegatedAuth, Introspection, TokenOwner } from "./delegated-auth.ts";

export const SCOPE_API = "urn:matrix:client:api:*";
export const UNSTABLE_SCOPE_API = "urn:matrix:org.matrix.msc2967.client:api:*";
export const SCOPE_DEVICE_PREFIX = "urn:matrix:client:device:";
export const UNSTABLE_SCOPE_DEVICE_PREFIX = "urn:matrix:org.matrix.msc2967.client:device:";
export const SCOPE_SYNAPSE_ADMIN = "urn:synapse:admin:*";
/** The external-id provider the token's `sub` is linked under (Synapse's name, so moved data matches). */
export const EXTERNAL_ID_PROVIDER = "oauth-delegated";
/** The requester of the admin token (Synapse's virtual admin; no such account exists). */
export const ADMIN_TOKEN_LOCALPART = "__oidc_admin";

const inactive = () => new MatrixError("M_UNKNOWN_TOKEN", "Token is not active", 401, { soft_logout: false });
/** The authorization server's answer cannot be used: its fault, not the client's. */
const badAnswer = (msg: string) => new MatrixError("M_UNKNOWN", msg, 502);

export interface DelegatedOptions {
  seen?: SeenFrom;
  allowLocked?: boolean;
}

/** The requester a token that is no local one stands for, on a server delegating authentication. */
export async function delegatedRequester(s: Services, d: DelegatedAuth, token: string, opts: DelegatedOptions): Promise<Requester> {
  if (d.isAdminToken(token))
    return { userId: `@${ADMIN_TOKEN_LOCALPART}:${s.config.server_name}`, deviceId: null, isGuest: false, isAdmin: true, accessTokenId: null };

  let result: Introspection;
  try {
    result = await d.introspect(token);
  } catch (err) {
    if (!(err instanceof AuthServerUnreachable)) throw err;
    s.log.warn({ err: err.message }, "token introspection failed");
    throw new MatrixError("M_UNKNOWN", "Unable to introspect the access token", 503);
  }
  if (!isActive(result, s.clock.now())) throw inactive();
  const scopes = scopeList(result.claims.scope);
  if (!scopes.includes(SCOPE_API) && !scopes.includes(UNSTABLE_SCOPE_API))
    throw new MatrixError("M_UNKNOWN_TOKEN", "Token doesn't grant access to the Matrix C-S API", 401, { soft_logout: false });

  const owner = d.ownerOf(token) ?? (await ownerOf(s, d, token, result.claims, scopes));
  if (owner.locked && !opts.allowLocked) throw lockedError();
  if (opts.seen && owner.deviceId !== null) s.deviceActivity.record({ userId: owner.userId, deviceId: owner.deviceId, ts: s.clock.now(), ...opts.seen });
  return {
    userId: owner.userId,
    deviceId: owner.deviceId,
    isGuest: false,
    isAdmin: owner.isAdmin,
    accessTokenId: null,
    ...(owner.suspended ? { suspended: true } : {}),
  };
}

/** Maps an active token's claims to its account and device (creating them if new), and remembers it. */
async function ownerOf(s: Services, d: DelegatedAuth, token: string, claims: Record<string, unknown>, scopes: string[]): Promise<TokenOwner> {
  // Matrix Authentication Service provisions users and devices itself (/_synapse/mas/*): its tokens name
  // them by `username` and must find them, as in Synapse; a device it deleted makes the token inactive.
  const mas = d.config.kind === "mas";
  const userId = mas ? masUserOf(s, claims) : await userOf(s, claims);
  const user = await s.users.get(userId);
  if (!user && mas) throw new MatrixError("M_UNKNOWN", "User not found: the authorization server has not provisioned it", 503);
  if (!user || user.deactivated) throw inactive();
  const deviceId = deviceOf(claims, scopes);
  if (deviceId !== null && mas && !(await s.sessions.getDevice(userId, deviceId))) throw inactive();
  if (deviceId !== null && !mas) await ensureDevice(s, userId, deviceId);
  const owner: TokenOwner = { userId, deviceId, isAdmin: scopes.includes(SCOPE_SYNAPSE_ADMIN), locked: user.locked, suspended: user.suspended };
  d.rememberOwner(token, owner);
  return owner;
}

/** RFC 7662 `active`, and not past `exp` (RFC 7662) or `expires_in` (MAS, from when it was fetched). */
function isActive(r: Introspection, now: number): boolean {
  if (!r.active) return false;
  const { exp, expires_in } = r.claims;
  if (typeof exp === "number" && exp * 1000 <= now) return false;
  if (typeof expires_in === "number" && r.retrievedAtMs + expires_in * 1000 <= now) return false;
  return true;
}

function scopeList(scope: unknown): string[] {
  return typeof scope === "string" ? scope.split(" ").filter((t) => t.length > 0) : [];
}

/** The account of the token: linked to its `sub`, else named by its `username` (created if new). */
async function userOf(s: Services, claims: Record<string, unknown>): Promise<string> {
  const sub = claims.sub;
  if (typeof sub !== "string" || sub.length === 0) throw new MatrixError("M_UNKNOWN_TOKEN", "Invalid sub claim in the introspection result", 401, { soft_logout: false });
  const linked = await s.sso.store.userForExternalId(EXTERNAL_ID_PROVIDER, sub);
  if (linked) return linked;

  const username = claims.username;
  if (typeof username !== "string" || username.length === 0) throw badAnswer("Invalid username claim in the introspection result");
  const userId = `@${username}:${s.config.server_name}`;
  if (!(await s.users.exists(userId))) await provision(s, username, typeof claims.name === "string" ? claims.name : undefined);
  try {
    await s.sso.store.linkExternalId(EXTERNAL_ID_PROVIDER, sub, userId);
  } catch (err) {
    // A concurrent first request linked it meanwhile: that link stands.
    if ((err as { code?: string }).code !== "P2002") throw err;
    const now = await s.sso.store.userForExternalId(EXTERNAL_ID_PROVIDER, sub);
    if (!now) throw err;
    return now;
  }
  return userId;
}

/** MAS names the user by its `username` claim alone (Synapse's MasDelegatedAuth). */
function masUserOf(s: Services, claims: Record<string, unknown>): string {
  const username = claims.username;
  if (typeof username !== "string" || username.length === 0) throw badAnswer("Invalid username claim in the introspection result");
  return `@${username}:${s.config.server_name}`;
}

/** Creates the account the authorization server named (it decided the name: only validity is checked). */
async function provision(s: Services, localpart: string, displayname: string | undefined): Promise<void> {
  let userId: string;
  try {
    userId = await checkUsername(s, localpart);
  } catch (err) {
    if (err instanceof MatrixError && err.errcode === "M_USER_IN_USE") return; // created meanwhile
    throw badAnswer(`The username claim "${localpart}" is not a valid username: ${(err as Error).message}`);
  }
  try {
    await createAccount(s, { inhibit_login: true }, { userId, passwordHash: null, displayname });
    s.log.info({ userId }, "provisioned a user of the delegated authorization server");
  } catch (err) {
    if (!(err instanceof MatrixError && err.errcode === "M_USER_IN_USE")) throw err;
  }
}

/** The `device_id` claim (MAS compatibility sessions), else the one device scope; null: none. */
function deviceOf(claims: Record<string, unknown>, scopes: string[]): string | null {
  let deviceId: string | null;
  if (claims.device_id !== undefined && claims.device_id !== null) {
    if (typeof claims.device_id !== "string") throw badAnswer("Invalid device ID in introspection result");
    deviceId = claims.device_id;
  } else {
    const ids = new Set<string>();
    for (const t of scopes) {
      if (t.startsWith(UNSTABLE_SCOPE_DEVICE_PREFIX)) ids.add(t.slice(UNSTABLE_SCOPE_DEVICE_PREFIX.length));
      else if (t.startsWith(SCOPE_DEVICE_PREFIX)) ids.add(t.slice(SCOPE_DEVICE_PREFIX.length));
    }
    if (ids.size > 1) throw badAnswer("Multiple device IDs in scope");
    deviceId = ids.values().next().value ?? null;
  }
  if (deviceId !== null && (deviceId.length < 1 || deviceId.length > 255 || deviceId.includes("\0")))
    throw badAnswer("Invalid device ID in introspection result");
  return deviceId;
}

/** Creates the device on first sight (device list updates follow, as after a login). */
async function ensureDevice(s: Services, userId: string, deviceId: string): Promise<void> {
  if (await s.sessions.getDevice(userId, deviceId)) return;
  let created: boolean;
  try {
    created = await s.db.$transaction(async (tx) => {
      if (await s.sessions.getDevice(userId, deviceId, tx)) return false;
      await s.sessions.upsertDevice(tx, userId, deviceId, null, s.clock.now());
      return true;
    });
  } catch (err) {
    // A concurrent first request created it meanwhile (Prisma's upsert is no atomic one on PostgreSQL).
    if ((err as { code?: string }).code !== "P2002") throw err;
    created = false;
  }
  if (created) await runDeviceUpdateHooks(s, userId, deviceId, true);
}
