// Server admins' view of accounts (Synapse admin API "User Admin API"): the paged user list with profile
// attributes, one account's details, its devices, joined rooms and memberships, whois, and whether it is
// an admin. Changes to accounts are in user-changes.ts. Every operation refuses non-admins (403).
import { identifiersOf } from "./user-identifiers.ts";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseUserId } from "../ids.ts";
import { requireAdmin } from "./require-admin.ts";
import { AdminReads, USER_ORDER_COLUMNS, type AdminUserRow } from "../store/admin-reads.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export interface UserListParams {
  from?: number;
  limit?: number;
  userId?: string;
  name?: string;
  guests?: boolean;
  deactivated?: boolean;
  admins?: boolean;
  notUserTypes?: string[];
  orderBy?: string;
  dir?: string;
}

/** A user id this server hosts (400 for another server's or a malformed id, as Synapse). */
export function localUserId(s: Services, userId: string, what = "look up"): string {
  let server: string;
  try {
    server = parseUserId(userId).serverName;
  } catch {
    throw new MatrixError("M_INVALID_PARAM", "Invalid user ID", 400);
  }
  if (server !== s.config.server_name) throw new MatrixError("M_INVALID_PARAM", `Can only ${what} local users`, 400);
  return userId;
}

/** The account of a local user id, or 404 M_NOT_FOUND. */
export async function existingLocalUser(s: Services, userId: string, what?: string): Promise<AdminUserRow> {
  const row = await new AdminReads(s.storage.sql).user(localUserId(s, userId, what));
  if (!row) throw new MatrixError("M_NOT_FOUND", "User not found", 404);
  return row;
}

export function checkDirection(dir: string | undefined): "f" | "b" {
  const d = dir ?? "f";
  if (d !== "f" && d !== "b") throw new MatrixError("M_INVALID_PARAM", `Query parameter "dir" must be one of ["b", "f"]`, 400);
  return d;
}

/** `from`/`limit` of an offset-paged admin list: non-negative integers (Synapse's M_INVALID_PARAM). */
export function checkPaging(from: number | undefined, limit: number | undefined): { from: number; limit: number } {
  const f = from ?? 0;
  const l = limit ?? 100;
  if (f < 0) throw new MatrixError("M_INVALID_PARAM", "Query parameter from must be a positive integer.", 400);
  if (l < 0) throw new MatrixError("M_INVALID_PARAM", "Query parameter limit must be a positive integer.", 400);
  return { from: f, limit: l };
}

const listEntry = (u: AdminUserRow) => ({
  name: u.name,
  is_guest: u.isGuest,
  admin: u.admin,
  user_type: u.userType,
  deactivated: u.deactivated,
  erased: u.erased,
  shadow_banned: false,
  displayname: u.displayname,
  avatar_url: u.avatarUrl,
  creation_ts: u.creationTs,
  last_seen_ts: u.lastSeenTs,
  locked: u.locked,
  approved: true,
});

/** GET /v2/users: local accounts, by user id unless `order_by` says otherwise; `users`, `total`, `next_token`. */
export async function listUsers(s: Services, r: Requester, p: UserListParams): Promise<Record<string, unknown>> {
  requireAdmin(r);
  // As Synapse: a delegating server has no guests, and the default guests=true is refused.
  if (s.config.oauth_delegation && (p.guests ?? true))
    throw new MatrixError("M_INVALID_PARAM", "The guests parameter is not supported when delegating authentication (MSC3861): pass guests=false", 400);
  const { from, limit } = checkPaging(p.from, p.limit);
  const orderBy = p.orderBy ?? "name";
  if (!(orderBy in USER_ORDER_COLUMNS)) throw new MatrixError("M_INVALID_PARAM", `Unknown value for order_by: ${orderBy}`, 400);
  const dir = checkDirection(p.dir);
  await s.deviceActivity.flush(); // last_seen_ts as of now
  const { users, total } = await new AdminReads(s.storage.sql).userPage({
    userId: p.userId,
    name: p.name,
    guests: p.guests ?? true,
    deactivated: p.deactivated === true ? undefined : false,
    admins: p.admins,
    notUserTypes: p.notUserTypes ?? [],
    orderBy,
    dir,
    offset: from,
    limit,
  });
  const out: Record<string, unknown> = { users: users.map(listEntry), total };
  if (from + limit < total) out.next_token = String(from + users.length);
  return out;
}

/** GET /v2/users/{userId}: one local account with its profile (creation_ts in seconds, as Synapse). */
export async function userDetails(s: Services, r: Requester, userId: string): Promise<Record<string, unknown>> {
  requireAdmin(r);
  await s.deviceActivity.flush();
  const u = await existingLocalUser(s, userId);
  const { approved: _a, ...entry } = listEntry(u);
  return {
    ...entry,
    creation_ts: Math.floor(u.creationTs / 1000),
    ...(await identifiersOf(s, userId)),
    appservice_id: u.appserviceId,
    consent_server_notice_sent: null,
    consent_version: null,
    consent_ts: null,
    suspended: u.suspended,
  };
}

/** GET /v2/users/{userId}/devices: the account's devices as the client API shows them, with `total`. */
export async function userDevices(s: Services, r: Requester, userId: string): Promise<{ devices: Record<string, unknown>[]; total: number }> {
  requireAdmin(r);
  await existingLocalUser(s, userId);
  await s.deviceActivity.flush();
  const devices = (await s.sessions.listDevices(userId)).map((d) => ({
    device_id: d.deviceId,
    display_name: d.displayName ?? null,
    last_seen_ip: d.lastSeenIp ?? null,
    last_seen_user_agent: d.lastSeenUserAgent ?? null,
    last_seen_ts: d.lastSeenTs ?? null,
    user_id: userId,
  }));
  return { devices, total: devices.length };
}

/** GET /v1/users/{userId}/joined_rooms: rooms the user (local or remote) is joined to here. */
export async function userJoinedRooms(s: Services, r: Requester, userId: string): Promise<{ joined_rooms: string[]; total: number }> {
  requireAdmin(r);
  try {
    parseUserId(userId);
  } catch {
    throw new MatrixError("M_INVALID_PARAM", "Invalid user ID", 400);
  }
  const rooms = await s.rooms.store.roomsOfUser(userId, "join");
  return { joined_rooms: rooms, total: rooms.length };
}

/** GET /v1/users/{userId}/memberships: every room membership this server knows of the user. */
export async function userMemberships(s: Services, r: Requester, userId: string): Promise<{ memberships: Record<string, string> }> {
  requireAdmin(r);
  try {
    parseUserId(userId);
  } catch {
    throw new MatrixError("M_INVALID_PARAM", "Invalid user ID", 400);
  }
  const rows = await s.storage.sql.all<{ room_id: string; membership: string }>(`SELECT room_id, membership FROM room_memberships WHERE user_id = ?`, [userId]);
  return { memberships: Object.fromEntries(rows.map((x) => [x.room_id, x.membership])) };
}

/**
 * Whois (GET /v1/whois/{userId}, and the client API's GET /admin/whois/{userId}): the sessions of a local
 * user, one connection per device with its last IP and user agent. An admin may ask about anyone, a
 * user about themselves (spec "GET /_matrix/client/v3/admin/whois/{userId}").
 */
export async function whois(s: Services, r: Requester, userId: string): Promise<Record<string, unknown>> {
  if (r.userId !== userId) requireAdmin(r);
  await existingLocalUser(s, userId);
  await s.deviceActivity.flush();
  const devices: Record<string, { sessions: { connections: Record<string, unknown>[] }[] }> = {};
  for (const d of await s.sessions.listDevices(userId)) {
    // The spec's ip and user_agent are strings: one the device never sent (no User-Agent header) is left out.
    const connections = d.lastSeenTs != null ? [{ ...(d.lastSeenIp != null ? { ip: d.lastSeenIp } : {}), last_seen: d.lastSeenTs, ...(d.lastSeenUserAgent != null ? { user_agent: d.lastSeenUserAgent } : {}) }] : [];
    devices[d.deviceId] = { sessions: [{ connections }] };
  }
  return { user_id: userId, devices };
}

/** GET /v1/users/{userId}/admin */
export async function isServerAdmin(s: Services, r: Requester, userId: string): Promise<{ admin: boolean }> {
  refuseWhenDelegated(s);
  requireAdmin(r);
  return { admin: (await existingLocalUser(s, userId, "get admin status of")).admin };
}
