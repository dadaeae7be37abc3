// Builds a running homeserver from a config: storage (migrated), signing key, domain services, the REST
// and GraphQL faces on one Fastify server; and shuts it all down gracefully.
import pino, { type Logger } from "pino";
import type { FastifyInstance } from "fastify";
import type { Config } from "./config/config.ts";
import { openStorage } from "./storage/database.ts";
import { loadOrCreateSigningKeys } from "./domain/signing-key.ts";
import { buildServices, type Clock, type Services } from "./domain/services.ts";
import { installTokenCacheInvalidation } from "./domain/accounts/authenticate.ts";
import { createHttpServer } from "./compat/server.ts";
import { ROUTE_GROUPS } from "./compat/routes.ts";
import { mountGraphql } from "./graphql/server.ts";
import { installRoomAccountHooks } from "./domain/rooms/account-hooks.ts";
import { installSearchHooks } from "./domain/search/index-hooks.ts";
import { installRelations } from "./domain/relations/install.ts";
import { installDirectoryHooks } from "./domain/directory/install.ts";
import { installE2eeHooks } from "./domain/e2ee/install.ts";
import { installEphemeral } from "./domain/ephemeral/install.ts";
import { scaledCacheSize } from "./domain/cache/lru.ts";

export interface Homeserver {
  services: Services;
  app: FastifyInstance;
  /** Base URLs the listeners are serving on (e.g. http://127.0.0.1:8008). */
  urls: string[];
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  clock?: Clock;
  /** Override the first listener's port (0 picks a free one: tests). */
  port?: number;
}

export async function startHomeserver(config: Config, opts: StartOptions = {}): Promise<Homeserver> {
  const log = opts.log ?? pino({ level: config.log_level, base: { server: config.server_name } });
  const storage = await openStorage(config.database, { queryPlanCacheMaxSize: scaledCacheSize(config.caches, "prisma_query_plans", 200) });
  const signingKeys = await loadOrCreateSigningKeys(config.signing_key_path);
  const services = buildServices({ config, storage, log, signingKeys, clock: opts.clock });
  installTokenCacheInvalidation(services);
  installRoomAccountHooks();
  installSearchHooks();
  installRelations();
  installDirectoryHooks();
  installE2eeHooks();
  installEphemeral(services);

  const app = createHttpServer(services);
  for (const group of ROUTE_GROUPS) group(app, services);
  await mountGraphql(app, services);
  app.finishRoutes();

  // One Fastify instance listens once: the first listener's first address. (Several listeners arrive with
  // worker processes; until then extra ones are reported, not silently dropped.)
  const [first, ...rest] = config.listeners;
  if (rest.length > 0 || first!.bind_addresses.length > 1)
    log.warn("only the first listener and its first bind address are served by this process");
  const urls = [await app.listen({ port: opts.port ?? first!.port, host: first!.bind_addresses[0] })];
  log.info({ urls }, "homeserver listening");

  let closed = false;
  return {
    services,
    app,
    urls,
    async close() {
      if (closed) return;
      closed = true;
      services.inFlight.draining = true;
      services.sync.shutdown(); // waiting long polls answer now instead of at their timeout
      await app.close();
      await services.inFlight.idle(); // handlers whose client went away may still be reading
      for (const fn of [...services.onClose].reverse()) await fn();
      await storage.close();
    },
  };
}
