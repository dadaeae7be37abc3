import { MatrixError } from "../errors.js";
import { isPlainObject } from "../events/types.js";
const ACL_KEY = "m.room.server_acl\u0000";
/** A glob (`*` any run of characters, `?` one) as an anchored case-insensitive expression. */
function globToRegExp(glob) {
    const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
    return new RegExp(`^${body}$`, "is");
}
function globs(v) {
    return Array.isArray(v) ? v.filter((g) => typeof g === "string").map(globToRegExp) : [];
}
export function parseServerAcl(content) {
    const c = isPlainObject(content) ? content : {};
    return { allowIpLiterals: typeof c.allow_ip_literals === "boolean" ? c.allow_ip_literals : true, allow: globs(c.allow), deny: globs(c.deny) };
}
/** The host of a server name, without its port (an IPv6 literal keeps its brackets). */
function hostOf(serverName) {
    if (serverName.startsWith("[")) {
        const end = serverName.indexOf("]");
        return end > 0 ? serverName.slice(0, end + 1) : serverName;
    }
    const colon = serverName.lastIndexOf(":");
    return colon >= 0 ? serverName.slice(0, colon) : serverName;
}
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
export function serverAllowedByAcl(acl, serverName) {
    const host = hostOf(serverName);
    if (!acl.allowIpLiterals && (host.startsWith("[") || IPV4.test(host)))
        return false;
    if (acl.deny.some((re) => re.test(host)))
        return false;
    return acl.allow.some((re) => re.test(host));
}
/** The ACL in effect in a state map (undefined: none, everyone may take part). Compiled once per ACL event. */
export async function aclOfState(s, state) {
    const eventId = state.get(ACL_KEY);
    if (!eventId)
        return undefined;
    const cache = s.caches.get("server_acls", 1000);
    const cached = cache.get(eventId);
    if (cached)
        return cached;
    const event = await s.rooms.events.get(eventId);
    if (!event)
        return undefined;
    const acl = parseServerAcl(event.pdu.content);
    cache.set(eventId, acl);
    return acl;
}
/** Whether `server` may take part in the room whose state is `state`. */
export async function serverAllowedInState(s, state, server) {
    const acl = await aclOfState(s, state);
    return !acl || serverAllowedByAcl(acl, server);
}
/** 403 M_FORBIDDEN (Synapse's words) when the room's ACL denies `server`. */
export async function assertServerAllowed(s, state, server) {
    if (!(await serverAllowedInState(s, state, server)))
        throw new MatrixError("M_FORBIDDEN", "Server is banned from room", 403);
}
/**
 * Refuses an ACL a local user sends that would deny this server (it would cut the room off from us):
 * 400 with Synapse's words and errcode (the spec is silent). Used by the state API and createRoom's
 * initial_state.
 */
export function assertAclKeepsServer(s, content) {
    if (!serverAllowedByAcl(parseServerAcl(content), s.config.server_name))
        throw new MatrixError("M_UNKNOWN", "Can't create an ACL event that denies the local server", 400);
}
/** The state API's check for m.room.server_acl (declared in src/main.ts, `stateEventChecks`). */
export const serverAclCheck = async (s, _r, _roomId, type, stateKey, content) => {
    if (type === "m.room.server_acl" && stateKey === "")
        assertAclKeepsServer(s, content);
};
