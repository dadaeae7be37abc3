// The typed Services object: configuration, storage, repositories, caches and shared machinery, built
// once at start-up (src/main.ts) and handed to every face. No globals, no service locator.
import type { Logger } from "pino";
import type { Config } from "../config/config.ts";
import type { Db, Storage } from "../storage/database.ts";
import { CacheRegistry } from "./cache/lru.ts";
import { InvalidationBus } from "./cache/invalidation.ts";
import { RateLimiter } from "./ratelimit.ts";
import { UserStore } from "./store/users.ts";
import { SessionStore } from "./store/sessions.ts";
import { UiaStore } from "./store/uia.ts";
import { RegistrationTokenStore } from "./store/registration-tokens.ts";
import { NonceStore } from "./store/nonces.ts";
import type { SigningKey } from "./signing-key.ts";
import { DeviceActivity } from "./devices/activity.ts";

export interface Clock {
  now(): number;
}

export interface Services {
  config: Config;
  storage: Storage;
  db: Db;
  log: Logger;
  clock: Clock;
  signingKeys: SigningKey[];
  caches: CacheRegistry;
  invalidations: InvalidationBus;
  ratelimiter: RateLimiter;
  users: UserStore;
  sessions: SessionStore;
  uia: UiaStore;
  registrationTokens: RegistrationTokenStore;
  nonces: NonceStore;
  deviceActivity: DeviceActivity;
  /** Called on shutdown, in reverse order of registration. */
  onClose: (() => Promise<void> | void)[];
}

export function buildServices(opts: {
  config: Config;
  storage: Storage;
  log: Logger;
  signingKeys: SigningKey[];
  clock?: Clock;
}): Services {
  const { config, storage, log } = opts;
  const clock = opts.clock ?? { now: () => Date.now() };
  const sessions = new SessionStore(storage.db);
  const services: Services = {
    config,
    storage,
    db: storage.db,
    log,
    clock,
    signingKeys: opts.signingKeys,
    caches: new CacheRegistry({ ...config.caches, event_cache_size: config.event_cache_size }),
    invalidations: new InvalidationBus(),
    ratelimiter: new RateLimiter(() => clock.now()),
    users: new UserStore(storage.db),
    sessions,
    uia: new UiaStore(storage.db),
    registrationTokens: new RegistrationTokenStore(storage.db),
    nonces: new NonceStore(storage.db),
    deviceActivity: new DeviceActivity(sessions, log),
    onClose: [],
  };
  services.onClose.push(() => services.deviceActivity.stop());
  return services;
}
