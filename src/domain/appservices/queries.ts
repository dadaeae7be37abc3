// Queries from the homeserver to application services (spec: Application Service API "Querying"): when
// a local user in a service's namespace is looked up and unknown, GET /_matrix/app/v1/users/{userId} lets
// the service create it; when a local alias in a service's namespace is unknown, GET
// /_matrix/app/v1/rooms/{roomAlias} lets it create the room and alias. Either way the lookup is retried.
// The services are asked in turn, until one answers 200 with a JSON object (as Synapse).
import type { Services } from "../services.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";
import type { AliasResolver } from "../rooms/membership.ts";
import type { UserQuery } from "../accounts/user-lookup.ts";
import { servicesForAlias, servicesForUser } from "../accounts/appservices.ts";
import { parseRoomAlias } from "../ids.ts";
import { APP_SERVICE_PREFIX, isOkObject, ServiceUnreachable } from "./client.ts";

async function ask(s: Services, services: AppServiceRegistration[], path: (as: AppServiceRegistration) => string): Promise<boolean> {
  for (const as of services) {
    if (as.url === null) continue;
    try {
      const a = await s.appservices.client.call(as, { method: "GET", path: path(as) });
      if (isOkObject(a)) return true;
      if (a.status !== 404) s.log.warn({ appservice: as.id, status: a.status }, "application service query answered an error");
    } catch (err) {
      if (!(err instanceof ServiceUnreachable)) throw err;
      s.log.warn({ appservice: as.id, reason: err.message }, "application service query failed");
    }
  }
  return false;
}

/** An unknown local user in a service's namespace: asks the services, then whether it exists now. */
export const userFromAppServices: UserQuery = async (s, userId) => {
  const services = servicesForUser(s.config, userId);
  if (services.length === 0) return false;
  const known = await ask(s, services, () => `${APP_SERVICE_PREFIX}/users/${encodeURIComponent(userId)}`);
  return known && (await s.users.exists(userId));
};

/** An unknown local alias in a service's namespace: asks the services, then reads the alias again. */
export const aliasFromAppServices: AliasResolver = async (s, alias) => {
  let serverName: string;
  try {
    serverName = parseRoomAlias(alias).serverName;
  } catch {
    return undefined;
  }
  if (serverName !== s.config.server_name) return undefined;
  const services = servicesForAlias(s.config, alias);
  if (services.length === 0) return undefined;
  if (!(await ask(s, services, () => `${APP_SERVICE_PREFIX}/rooms/${encodeURIComponent(alias)}`))) return undefined;
  return (await s.directory.getAlias(alias))?.roomId;
};
