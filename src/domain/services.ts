// The typed Services object: configuration, storage, repositories, caches and shared machinery, built
// once at start-up (src/main.ts) and handed to every face. No globals, no service locator.
import type { Logger } from "pino";
import type { Config } from "../config/config.ts";
import type { Db, Storage } from "../storage/database.ts";
import { CacheRegistry } from "./cache/lru.ts";
import { InvalidationBus } from "./cache/invalidation.ts";
import { RateLimiter } from "./ratelimit.ts";
import { UserStore } from "./store/users.ts";
import { ProfileFieldStore } from "./store/profile-fields.ts";
import { InFlight } from "./server/in-flight.ts";
import { SessionStore } from "./store/sessions.ts";
import { UiaStore } from "./store/uia.ts";
import { RegistrationTokenStore } from "./store/registration-tokens.ts";
import { NonceStore } from "./store/nonces.ts";
import type { SigningKey } from "./signing-key.ts";
import { FederatedKeyRing, type CachedKey, type KeyRing } from "./keys/key-ring.ts";
import { ServerKeyStore } from "./store/server-keys.ts";
import { FederationClient } from "../federation/client.ts";
import { FederationKeyTransport } from "../federation/key-fetch.ts";
import type { Dns } from "../federation/transport.ts";
import { DeviceActivity } from "./devices/activity.ts";
import { LruCache } from "./cache/lru.ts";
import { EventStore, type StoredEvent } from "./store/events.ts";
import { StateGroupStore, type StateMap } from "./store/state-groups.ts";
import { RoomStore } from "./store/rooms.ts";
import { DirectoryStore } from "./store/directory.ts";
import { Notifier } from "./rooms/notifier.ts";
import { KeyedLanes } from "./rooms/lanes.ts";
import type { RoomSnapshot } from "./rooms/room-cache.ts";
import { createSearchStore, type SearchStore } from "./store/search.ts";
import { UserDirectoryStore } from "./store/user-directory.ts";
import { RelationStore } from "./store/relations.ts";
import { ReportStore } from "./store/reports.ts";
import { OAuthStore } from "./store/oauth.ts";
import { AccountDataStore } from "./store/account-data.ts";
import { FilterStore } from "./store/filters.ts";
import { SyncServices } from "./sync/registry.ts";
import { E2eStore } from "./store/e2ee.ts";
import { TypingState } from "./typing/typing-state.ts";
import { ReceiptStore } from "./store/receipts.ts";
import { StickyEventStore } from "./store/sticky-events.ts";
import { PresenceStore } from "./store/presence.ts";
import { PushServices } from "./push/push-services.ts";
import { MediaServices } from "./media/media-services.ts";
import { AppServiceServices } from "./appservices/appservice-services.ts";
import { ConsumerPositionStore } from "./store/consumer-positions.ts";
import { noExtensions, type Extensions } from "./extensions.ts";
import { CommitFeed, notifyReaders, updateRoomCaches } from "./consumers/commit-feed.ts";
import { ConsumerRunner } from "./consumers/durable.ts";
import { FederationSender } from "../federation/sender/sender.ts";
import { SsoServices } from "./sso/sso-services.ts";
import { DelegatedAuth } from "./oauth-delegation/delegated-auth.ts";
import { ThreepidStore } from "./store/threepids.ts";
import { Mailer } from "./threepids/mailer.ts";
import { IdentityServerAgent } from "./threepids/identity-server.ts";
import { DelayedEventServices } from "./delayed-events/delayed-event-services.ts";
import { RendezvousSessions } from "./rendezvous/session-store.ts";
import { ThreadSubscriptionStore } from "./store/thread-subscriptions.ts";
import { ThreadSubscriptionFeed, type ThreadSubscriptionServices } from "./threads/subscription-feed.ts";
import { ProcessState } from "./process-state.ts";
import { topologyOf, type ClusterTopology } from "./cluster/topology.ts";
import { InternalClient } from "./cluster/internal-client.ts";
import { startLeasedWork } from "./cluster/leased-work.ts";
import { Replication } from "./cluster/replication.ts";

/** Rooms and events: repositories, the per-room write lanes, the room cache and the notifier. */
export interface RoomServices {
  store: RoomStore;
  events: EventStore;
  stateGroups: StateGroupStore;
  cache: LruCache<string, RoomSnapshot>;
  lanes: KeyedLanes;
  /** One copy of the local members' user state into an upgraded room at a time (rooms/upgrade-user-state.ts). */
  upgradeCopies: KeyedLanes;
  notifier: Notifier;
}

export interface Clock {
  now(): number;
}

export interface Services {
  config: Config;
  /** This process's name as a writer of streams (`worker_name`; "master" for the one process). */
  instanceName: string;
  /** Who writes what and who runs which background work, from the worker options (cluster/topology.ts). */
  topology: ClusterTopology;
  /** Requests to the other instances of `instance_map` (cluster/internal-client.ts); unused by a single process. */
  internal: InternalClient;
  /** Replication with the other processes over Redis (cluster/replication.ts); undefined without `redis.enabled`. */
  replication: Replication | undefined;
  /** What capabilities add to the machinery, declared in src/main.ts (extensions.ts). */
  extensions: Extensions;
  /** The commit notice of each event commit, to every in-memory index (consumers/commit-feed.ts). */
  commits: CommitFeed;
  /** The durable consumers of the events stream (consumers/durable.ts), and their positions. */
  consumers: ConsumerRunner;
  consumerPositions: ConsumerPositionStore;
  storage: Storage;
  db: Db;
  log: Logger;
  clock: Clock;
  signingKeys: SigningKey[];
  /** Verify keys of servers: our own, and remote ones fetched directly or through notaries, cached. */
  keyRing: KeyRing;
  /** Other servers' keys as stored (the notary face reads them whole). */
  serverKeys: ServerKeyStore;
  /** Outbound federation: signed requests to other servers (src/federation). */
  federation: FederationClient;
  /** Outbound federation: the per-destination send queues of PDUs and EDUs (src/federation/sender). */
  federationSender: FederationSender;
  caches: CacheRegistry;
  invalidations: InvalidationBus;
  ratelimiter: RateLimiter;
  users: UserStore;
  /** Local users' extended profile fields (spec v1.16, MSC4133). */
  profileFields: ProfileFieldStore;
  sessions: SessionStore;
  uia: UiaStore;
  registrationTokens: RegistrationTokenStore;
  /** Single sign-on: the OIDC providers, external ids and pending attempts. */
  sso: SsoServices;
  /** Delegated authentication (MSC3861): the authorization server's metadata and token introspection; unset when off. */
  oauthDelegation: DelegatedAuth | undefined;
  /** Accounts' third-party identifiers, the identity servers they were bound on, validation sessions. */
  threepids: ThreepidStore;
  /** SMTP, when the `email` section configures it. */
  mailer: Mailer | undefined;
  /** The connection pool for identity servers users name (bind, unbind, lookup, third-party invites). */
  identityServers: IdentityServerAgent;
  nonces: NonceStore;
  deviceActivity: DeviceActivity;
  rooms: RoomServices;
  /** The full-text index of room events (POST /search). */
  search: SearchStore;
  /** The user directory's reads (POST /user_directory/search). */
  userDirectory: UserDirectoryStore;
  /** The relations index (event_relations): /relations, /threads, bundled aggregations. */
  relations: RelationStore;
  /** Users' thread subscriptions (MSC4306) and their stream's wake-ups (MSC4308). */
  threadSubscriptions: ThreadSubscriptionServices;
  /** Content reports for the server admins. */
  reports: ReportStore;
  /** Weft's own OAuth 2.0 server: clients, browser logins, authorisation codes (src/domain/oauth). */
  oauth: OAuthStore;
  accountData: AccountDataStore;
  filters: FilterStore;
  /** Sync: stream providers (one slot per stream), lazy-loading memory, shutdown of long polls. */
  sync: SyncServices;
  /** Room aliases and the published room directory. */
  directory: DirectoryStore;
  /** End-to-end encryption data: keys, the device-list and to-device streams, key backups. */
  e2ee: E2eStore;
  /** The typing stream (in memory): who is typing where, until when. */
  typing: TypingState;
  /** Read receipts and the receipts stream. */
  receipts: ReceiptStore;
  /** MSC4354's sticky events and their stream (written only with experimental_features.msc4354_enabled). */
  sticky: StickyEventStore;
  /** Local users' presence and the presence stream. */
  presence: PresenceStore;
  /** Push rules, notification records and counts, pushers and their gateway queues. */
  push: PushServices;
  /** The content repository: media rows, files on disk, pending uploads, remote fetches, previews. */
  media: MediaServices;
  /** Application services: their persistent queues, sender loops and the client that reaches them. */
  appservices: AppServiceServices;
  /** Delayed events (MSC4140): the scheduled events and the timer of the next one due. */
  delayedEvents: DelayedEventServices;
  /** MSC4108's rendezvous sessions, in this process's memory (a minute each; one process, see the module). */
  rendezvous: RendezvousSessions;
  /** Requests being handled, which shutdown waits for before closing storage. */
  inFlight: InFlight;
  /** The operations' per-process in-memory state (lanes, queues, runs, mirrors): the inventory is process-state.ts. */
  processState: ProcessState;
  /** Called on shutdown, in reverse order of registration. */
  onClose: (() => Promise<void> | void)[];
}

export function buildServices(opts: {
  config: Config;
  storage: Storage;
  log: Logger;
  signingKeys: SigningKey[];
  clock?: Clock;
  /** DNS for server discovery (tests inject a fake). */
  dns?: Dns;
  extensions?: Extensions;
}): Services {
  const { config, storage, log } = opts;
  const extensions = opts.extensions ?? noExtensions();
  const clock = opts.clock ?? { now: () => Date.now() };
  const sessions = new SessionStore(storage.db, storage.sql);
  const caches = new CacheRegistry({ ...config.caches, event_cache_size: config.event_cache_size });
  const federation = new FederationClient({
    serverName: config.server_name,
    signingKeys: opts.signingKeys,
    ipRanges: { blacklist: config.ip_range_blacklist, whitelist: config.ip_range_whitelist },
    verifyCertificates: config.federation_verify_certificates,
    certificateWhitelist: config.federation_certificate_verification_whitelist,
    log,
    dns: opts.dns,
    now: () => clock.now(),
  });
  const serverKeys = new ServerKeyStore(storage.sql);
  // Weights approximate bytes held: a parsed event is about three times its JSON; a state map entry about
  // 150 bytes (key string, id string, map slot).
  const stateWeight = (state: ReadonlyMap<string, string>) => 200 + state.size * 150;
  const topology = topologyOf(config);
  const services: Services = {
    config,
    instanceName: topology.instanceName,
    topology,
    internal: new InternalClient(topology),
    replication: undefined, // started with the background work (startBackground)
    extensions,
    commits: undefined as unknown as CommitFeed, // set below: they need the services
    consumers: undefined as unknown as ConsumerRunner,
    consumerPositions: new ConsumerPositionStore(storage.sql),
    storage,
    db: storage.db,
    log,
    clock,
    signingKeys: opts.signingKeys,
    keyRing: new FederatedKeyRing({
      serverName: config.server_name,
      ownKeys: opts.signingKeys,
      store: serverKeys,
      transport: new FederationKeyTransport(federation),
      trustedKeyServers: config.trusted_key_servers,
      now: () => clock.now(),
      log,
      cache: caches.get<string, CachedKey>("server_keys", 10_000),
    }),
    serverKeys,
    federation,
    federationSender: undefined as unknown as FederationSender, // needs the services: set just below
    caches,
    invalidations: new InvalidationBus(),
    ratelimiter: new RateLimiter(() => clock.now(), caches.size("ratelimit_buckets", 200_000)),
    users: new UserStore(storage.db, storage.sql),
    profileFields: new ProfileFieldStore(storage.db, storage.sql.dialect),
    sessions,
    uia: new UiaStore(storage.db),
    registrationTokens: new RegistrationTokenStore(storage.db),
    sso: new SsoServices(config, storage.db),
    oauthDelegation: config.oauth_delegation ? new DelegatedAuth(config.oauth_delegation, config, caches, clock) : undefined,
    threepids: new ThreepidStore(storage.db),
    mailer: config.email ? new Mailer(config.email) : undefined,
    identityServers: new IdentityServerAgent(() => services),
    nonces: new NonceStore(storage.db),
    deviceActivity: new DeviceActivity(sessions, log),
    rooms: {
      store: new RoomStore(storage.sql),
      events: new EventStore(
        storage.sql,
        caches.get<string, StoredEvent>("event", 10_000, { weigh: (e) => 500 + e.json.length * 3, baseWeight: 64 * 1024 * 1024 }),
        caches.size("event_child_targets", 100_000),
      ),
      stateGroups: new StateGroupStore(
        storage.sql,
        caches.get<number, StateMap>("state_group_cache", 1000, { weigh: stateWeight, baseWeight: 32 * 1024 * 1024 }),
        caches.get<number, number>("state_group_chain_lengths", 100_000),
      ),
      cache: caches.get<string, RoomSnapshot>("room_snapshots", 10_000, { weigh: (r) => stateWeight(r.state) + r.extremities.length * 80, baseWeight: 64 * 1024 * 1024 }),
      lanes: new KeyedLanes(),
      upgradeCopies: new KeyedLanes(),
      notifier: new Notifier(),
    },
    search: createSearchStore(storage.sql),
    userDirectory: new UserDirectoryStore(storage.sql),
    relations: new RelationStore(storage.sql),
    threadSubscriptions: { store: new ThreadSubscriptionStore(storage.sql), feed: new ThreadSubscriptionFeed() },
    reports: new ReportStore(storage.db),
    oauth: new OAuthStore(storage.db),
    accountData: new AccountDataStore(storage.sql),
    filters: new FilterStore(storage.sql),
    sync: new SyncServices(caches, extensions.syncProviders, extensions.syncDecorators),
    directory: new DirectoryStore(storage.sql),
    e2ee: new E2eStore(storage.sql, caches.get("e2e_key_summaries", 100_000)),
    typing: new TypingState(() => clock.now(), caches.size("typing_rooms", 20_000)),
    receipts: new ReceiptStore(storage.sql),
    sticky: new StickyEventStore(storage.sql),
    presence: new PresenceStore(storage.sql, caches.get("presence_rows", 100_000)),
    push: undefined as unknown as PushServices, // needs the services it belongs to: set just below
    media: new MediaServices(storage.db, storage.sql, config, config.server_name, log),
    appservices: undefined as unknown as AppServiceServices, // needs the services it belongs to: set just below
    delayedEvents: new DelayedEventServices(storage.sql),
    rendezvous: new RendezvousSessions(clock),
    inFlight: new InFlight(),
    processState: new ProcessState(),
    onClose: [],
  };
  if (services.mailer) services.onClose.push(() => services.mailer!.close());
  services.onClose.push(() => services.identityServers.close());
  services.onClose.push(() => services.media.storage.close());
  if (services.oauthDelegation) {
    services.onClose.push(() => services.oauthDelegation!.close());
    const blocked = services.oauthDelegation.blockedAddresses();
    if (blocked.length > 0)
      log.warn({ blocked }, "the delegated authorization server's address is in ip_range_blacklist: add it to ip_range_whitelist, or no token will be accepted");
  }
  services.push = new PushServices(services);
  services.federationSender = new FederationSender(services);
  services.appservices = new AppServiceServices(services);
  // Notices wait until their stream's position is persisted (no reader may skip an uncommitted position).
  services.rooms.notifier.gate("events", services.rooms.events.streamIds);
  services.rooms.notifier.gate("account_data", services.accountData.streamIds);
  services.rooms.notifier.gate("push_rules", services.push.rules.store.streamIds);
  services.rooms.notifier.gate("to_device", services.e2ee.toDeviceIds);
  services.rooms.notifier.gate("device_lists", services.e2ee.deviceListIds);
  services.rooms.notifier.gate("sticky_events", services.sticky.streamIds);
  services.consumers = new ConsumerRunner(services, extensions.consumers);
  // The core indexes first (room and event caches), then the declared ones, then readers and consumers.
  services.commits = new CommitFeed(services, [updateRoomCaches, ...extensions.commitListeners, notifyReaders, (s, c) => s.consumers.offer(c)]);
  for (const listen of extensions.invalidationListeners) services.invalidations.subscribe((m) => listen(services, m));
  services.onClose.push(() => services.sync.shutdown());
  services.onClose.push(() => services.deviceActivity.stop());
  services.onClose.push(() => federation.close());
  services.onClose.push(() => services.internal.close());
  return services;
}

/**
 * Starts the declared background tasks, the pieces of background work this instance runs (at once, or
 * under their lease: cluster/leased-work.ts) and the declared durable consumers; their stops run on close
 * (before storage).
 */
export async function startBackground(s: Services): Promise<void> {
  // Replication first (with redis.enabled): consumers and tasks then start from positions it keeps.
  const replication = await Replication.start(s);
  if (replication) {
    s.replication = replication;
    s.onClose.push(() => replication.stop());
  }
  for (const task of s.extensions.background) s.onClose.push(task(s));
  await startLeasedWork(s, s.extensions.leased);
  s.onClose.push(() => s.consumers.stop());
  await s.consumers.start();
}
