// Application-service lookups over the registrations in the config (spec: Application Service API,
// "Registration"): by as_token, namespace membership, exclusive namespaces that block normal users.
import type { Config } from "../../config/config.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";

export function appServiceByToken(config: Config, token: string): AppServiceRegistration | undefined {
  return config.app_services.find((a) => a.as_token === token);
}

export function appServiceUserId(config: Config, as: AppServiceRegistration): string {
  return `@${as.sender_localpart}:${config.server_name}`;
}

export function isInNamespace(as: AppServiceRegistration, kind: "users" | "aliases" | "rooms", id: string): boolean {
  return as.namespaces[kind].some((ns) => ns.pattern.test(id));
}

/** The application service that claims `userId` exclusively, if any. */
export function exclusiveOwner(config: Config, userId: string): AppServiceRegistration | undefined {
  return config.app_services.find(
    (as) => appServiceUserId(config, as) === userId || as.namespaces.users.some((ns) => ns.exclusive && ns.pattern.test(userId)),
  );
}
