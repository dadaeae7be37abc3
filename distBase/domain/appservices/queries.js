import { servicesForAlias, servicesForUser } from "../accounts/appservices.js";
import { parseRoomAlias } from "../ids.js";
import { APP_SERVICE_PREFIX, isOkObject, ServiceUnreachable } from "./client.js";
async function ask(s, services, path) {
    for (const as of services) {
        if (as.url === null)
            continue;
        try {
            const a = await s.appservices.client.call(as, { method: "GET", path: path(as) });
            if (isOkObject(a))
                return true;
            if (a.status !== 404)
                s.log.warn({ appservice: as.id, status: a.status }, "application service query answered an error");
        }
        catch (err) {
            if (!(err instanceof ServiceUnreachable))
                throw err;
            s.log.warn({ appservice: as.id, reason: err.message }, "application service query failed");
        }
    }
    return false;
}
/** An unknown local user in a service's namespace: asks the services, then whether it exists now. */
export const userFromAppServices = async (s, userId) => {
    const services = servicesForUser(s.config, userId);
    if (services.length === 0)
        return false;
    const known = await ask(s, services, () => `${APP_SERVICE_PREFIX}/users/${encodeURIComponent(userId)}`);
    return known && (await s.users.exists(userId));
};
/** An unknown local alias in a service's namespace: asks the services, then reads the alias again. */
export const aliasFromAppServices = async (s, alias) => {
    let serverName;
    try {
        serverName = parseRoomAlias(alias).serverName;
    }
    catch {
        return undefined;
    }
    if (serverName !== s.config.server_name)
        return undefined;
    const services = servicesForAlias(s.config, alias);
    if (services.length === 0)
        return undefined;
    if (!(await ask(s, services, () => `${APP_SERVICE_PREFIX}/rooms/${encodeURIComponent(alias)}`)))
        return undefined;
    return (await s.directory.getAlias(alias))?.roomId;
};
