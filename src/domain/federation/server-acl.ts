// Server access control lists (m.room.server_acl): whether a server may take part in a room. The one
// rule, applied to the origin of inbound PDUs and room EDUs, to the servers that read a room through
// federation, and to the destinations a room's events go to. Matching is on the server's host without
// its port, case-insensitively: denied when `allow_ip_literals` is false and the host is an IP literal,
// when a `deny` glob matches, or when no `allow` glob does (no `allow`: nobody). Malformed fields read
// as Synapse reads them (a non-list is empty, non-strings are skipped, a non-boolean
// allow_ip_literals is true). A local ACL that would shut out this server itself is refused (400, as
// Synapse), matched — as Synapse's self-check does — against this server's full name, port included: a
// server `localhost:8008` may deny "localhost" to shut out `localhost:8448`.
// Spec: Client-Server API "Server Access Control Lists (ACLs) for rooms".
import type { Services } from "../services.ts";
import { MatrixError } from "../errors.ts";
import { isPlainObject } from "../events/types.ts";
import type { StateEventCheck } from "../rooms/send.ts";

export interface ServerAcl {
  allowIpLiterals: boolean;
  allow: RegExp[];
  deny: RegExp[];
}

const ACL_KEY = "m.room.server_acl\u0000";

/** A glob (`*` any run of characters, `?` one) as an anchored case-insensitive expression. */
function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "is");
}

function globs(v: unknown): RegExp[] {
  return Array.isArray(v) ? v.filter((g): g is string => typeof g === "string").map(globToRegExp) : [];
}

export function parseServerAcl(content: unknown): ServerAcl {
  const c = isPlainObject(content) ? content : {};
  return { allowIpLiterals: typeof c.allow_ip_literals === "boolean" ? c.allow_ip_literals : true, allow: globs(c.allow), deny: globs(c.deny) };
}

/** The host of a server name, without its port (an IPv6 literal keeps its brackets). */
function hostOf(serverName: string): string {
  if (serverName.startsWith("[")) {
    const end = serverName.indexOf("]");
    return end > 0 ? serverName.slice(0, end + 1) : serverName;
  }
  const colon = serverName.lastIndexOf(":");
  return colon >= 0 ? serverName.slice(0, colon) : serverName;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Whether the ACL lets in `name`, matched as it is (a host, or — for the self-check — a full server name). */
function nameAllowedByAcl(acl: ServerAcl, name: string): boolean {
  if (!acl.allowIpLiterals && (name.startsWith("[") || IPV4.test(name))) return false;
  if (acl.deny.some((re) => re.test(name))) return false;
  return acl.allow.some((re) => re.test(name));
}

/** Whether the ACL lets `serverName` take part: its host is matched, without the port (the spec's rule). */
export function serverAllowedByAcl(acl: ServerAcl, serverName: string): boolean {
  return nameAllowedByAcl(acl, hostOf(serverName));
}

/** The ACL in effect in a state map (undefined: none, everyone may take part). Compiled once per ACL event. */
export async function aclOfState(s: Services, state: ReadonlyMap<string, string>): Promise<ServerAcl | undefined> {
  const eventId = state.get(ACL_KEY);
  if (!eventId) return undefined;
  const cache = s.caches.get<string, ServerAcl>("server_acls", 1000);
  const cached = cache.get(eventId);
  if (cached) return cached;
  const event = await s.rooms.events.get(eventId);
  if (!event) return undefined;
  const acl = parseServerAcl(event.pdu.content);
  cache.set(eventId, acl);
  return acl;
}

/** Whether `server` may take part in the room whose state is `state`. */
export async function serverAllowedInState(s: Services, state: ReadonlyMap<string, string>, server: string): Promise<boolean> {
  const acl = await aclOfState(s, state);
  return !acl || serverAllowedByAcl(acl, server);
}

/** 403 M_FORBIDDEN (Synapse's words) when the room's ACL denies `server`. */
export async function assertServerAllowed(s: Services, state: ReadonlyMap<string, string>, server: string): Promise<void> {
  if (!(await serverAllowedInState(s, state, server))) throw new MatrixError("M_FORBIDDEN", "Server is banned from room", 403);
}

/**
 * Refuses an ACL a local user sends that would deny this server (it would cut the room off from us):
 * 400 with Synapse's words and errcode (the spec is silent). The server's full name is matched, port and
 * all, as Synapse's check does (only servers' hosts are matched otherwise), so on a host shared with
 * another server, an ACL denying the host is taken and shuts the other one out. Used by the state API and
 * createRoom's initial_state.
 */
export function assertAclKeepsServer(s: Services, content: unknown): void {
  if (!nameAllowedByAcl(parseServerAcl(content), s.config.server_name))
    throw new MatrixError("M_UNKNOWN", "Can't create an ACL event that denies the local server", 400);
}

/** The state API's check for m.room.server_acl (declared in src/main.ts, `stateEventChecks`). */
export const serverAclCheck: StateEventCheck = async (s, _r, _roomId, type, stateKey, content) => {
  if (type === "m.room.server_acl" && stateKey === "") assertAclKeepsServer(s, content);
};
