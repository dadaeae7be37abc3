// The application services of the config and the one home of their namespace rules (spec: Application
// Service API, "Registration"): finding a service by its as_token or id, whether a user, alias or room id
// is in a service's namespace, and who owns an id exclusively. User namespaces count local users only.
import { createHash } from "node:crypto";
import { ipInRanges } from "../net/ip-ranges.js";
const indexes = new WeakMap();
function indexOf(config) {
    let index = indexes.get(config.app_services);
    if (!index) {
        index = {
            byTokenHash: new Map(config.app_services.map((a) => [tokenDigest(a.as_token), a])),
            byId: new Map(config.app_services.map((a) => [a.id, a])),
        };
        indexes.set(config.app_services, index);
    }
    return index;
}
/** Tokens are compared by digest, so a lookup's timing says nothing about how much of a guess matched. */
function tokenDigest(token) {
    return createHash("sha256").update(token).digest("base64");
}
export function appServiceByToken(config, token) {
    if (config.app_services.length === 0)
        return undefined;
    return indexOf(config).byTokenHash.get(tokenDigest(token));
}
/**
 * The service whose as_token a request carries, when the request may speak for it: a service limited by
 * its `ip_range_whitelist` is not one when it calls from elsewhere (Synapse: its token is then unknown).
 */
export function appServiceForRequest(config, token, clientIp) {
    const as = appServiceByToken(config, token);
    if (!as || as.ip_range_whitelist.length === 0)
        return as;
    return clientIp !== undefined && ipInRanges(clientIp, as.ip_range_whitelist) ? as : undefined;
}
export function appServiceById(config, id) {
    return indexOf(config).byId.get(id);
}
export function appServiceUserId(config, as) {
    return `@${as.sender_localpart}:${config.server_name}`;
}
function isLocalUserId(config, userId) {
    return userId.startsWith("@") && userId.endsWith(`:${config.server_name}`) && userId.indexOf(":") === userId.length - config.server_name.length - 1;
}
/** Whether `id` matches one of the service's namespaces of `kind` (the regex only; see isAppServiceUser). */
export function isInNamespace(as, kind, id) {
    return as.namespaces[kind].some((ns) => ns.pattern.test(id));
}
/** The service's own users: its sender and the local users its user namespaces match. */
export function isAppServiceUser(config, as, userId) {
    if (!isLocalUserId(config, userId))
        return false;
    return userId === appServiceUserId(config, as) || isInNamespace(as, "users", userId);
}
/** The application service that claims a local user id exclusively (its sender, or an exclusive namespace). */
export function exclusiveOwner(config, userId) {
    if (!isLocalUserId(config, userId))
        return undefined;
    return config.app_services.find((as) => appServiceUserId(config, as) === userId || as.namespaces.users.some((ns) => ns.exclusive && ns.pattern.test(userId)));
}
/** The application service that claims a room alias exclusively, if any. */
export function exclusiveAliasOwner(config, alias) {
    return config.app_services.find((as) => as.namespaces.aliases.some((ns) => ns.exclusive && ns.pattern.test(alias)));
}
/** Whether the service's requests escape rate limits: `rate_limited: false`, and always for its sender. */
export function isRateLimitExempt(config, appserviceId, userId) {
    const as = appserviceId === undefined ? undefined : appServiceById(config, appserviceId);
    return as !== undefined && (!as.rate_limited || userId === appServiceUserId(config, as));
}
/** Services whose user namespace (or sender) holds this local user: those asked about an unknown one. */
export function servicesForUser(config, userId) {
    return config.app_services.filter((as) => isAppServiceUser(config, as, userId));
}
/** Services whose alias namespace holds this alias. */
export function servicesForAlias(config, alias) {
    return config.app_services.filter((as) => isInNamespace(as, "aliases", alias));
}
/** Services that declare a third-party protocol. */
export function servicesForProtocol(config, protocol) {
    return config.app_services.filter((as) => as.protocols.includes(protocol));
}
