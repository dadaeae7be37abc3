import { CacheRegistry } from "./cache/lru.js";
import { InvalidationBus } from "./cache/invalidation.js";
import { RateLimiter } from "./ratelimit.js";
import { UserStore } from "./store/users.js";
import { InFlight } from "./server/in-flight.js";
import { SessionStore } from "./store/sessions.js";
import { UiaStore } from "./store/uia.js";
import { RegistrationTokenStore } from "./store/registration-tokens.js";
import { NonceStore } from "./store/nonces.js";
import { FederatedKeyRing } from "./keys/key-ring.js";
import { ServerKeyStore } from "./store/server-keys.js";
import { FederationClient } from "../federation/client.js";
import { FederationKeyTransport } from "../federation/key-fetch.js";
import { DeviceActivity } from "./devices/activity.js";
import { EventStore } from "./store/events.js";
import { StateGroupStore } from "./store/state-groups.js";
import { RoomStore } from "./store/rooms.js";
import { DirectoryStore } from "./store/directory.js";
import { Notifier } from "./rooms/notifier.js";
import { KeyedLanes } from "./rooms/lanes.js";
import { createSearchStore } from "./store/search.js";
import { UserDirectoryStore } from "./store/user-directory.js";
import { RelationStore } from "./store/relations.js";
import { ReportStore } from "./store/reports.js";
import { AccountDataStore } from "./store/account-data.js";
import { FilterStore } from "./store/filters.js";
import { SyncServices } from "./sync/registry.js";
import { E2eStore } from "./store/e2ee.js";
import { TypingState } from "./typing/typing-state.js";
import { ReceiptStore } from "./store/receipts.js";
import { PresenceStore } from "./store/presence.js";
import { PushServices } from "./push/push-services.js";
import { MediaServices } from "./media/media-services.js";
import { AppServiceServices } from "./appservices/appservice-services.js";
import { ConsumerPositionStore } from "./store/consumer-positions.js";
import { noExtensions } from "./extensions.js";
import { CommitFeed, notifyReaders, updateRoomCaches } from "./consumers/commit-feed.js";
import { ConsumerRunner } from "./consumers/durable.js";
import { FederationSender } from "../federation/sender/sender.js";
import { SsoServices } from "./sso/sso-services.js";
import { ThreepidStore } from "./store/threepids.js";
import { Mailer } from "./threepids/mailer.js";
import { IdentityServerAgent } from "./threepids/identity-server.js";
export function buildServices(opts) {
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
    const stateWeight = (state) => 200 + state.size * 150;
    const services = {
        config,
        instanceName: "master",
        extensions,
        commits: undefined, // set below: they need the services
        consumers: undefined,
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
            cache: caches.get("server_keys", 10_000),
        }),
        serverKeys,
        federation,
        federationSender: undefined, // needs the services: set just below
        caches,
        invalidations: new InvalidationBus(),
        ratelimiter: new RateLimiter(() => clock.now(), caches.size("ratelimit_buckets", 200_000)),
        users: new UserStore(storage.db, storage.sql),
        sessions,
        uia: new UiaStore(storage.db),
        registrationTokens: new RegistrationTokenStore(storage.db),
        sso: new SsoServices(config, storage.db),
        threepids: new ThreepidStore(storage.db),
        mailer: config.email ? new Mailer(config.email) : undefined,
        identityServers: new IdentityServerAgent(() => services),
        nonces: new NonceStore(storage.db),
        deviceActivity: new DeviceActivity(sessions, log),
        rooms: {
            store: new RoomStore(storage.sql),
            events: new EventStore(storage.sql, caches.get("event", 10_000, { weigh: (e) => 500 + e.json.length * 3, baseWeight: 64 * 1024 * 1024 }), caches.size("event_child_targets", 100_000)),
            stateGroups: new StateGroupStore(storage.sql, caches.get("state_group_cache", 1000, { weigh: stateWeight, baseWeight: 32 * 1024 * 1024 }), caches.get("state_group_chain_lengths", 100_000)),
            cache: caches.get("room_snapshots", 10_000, { weigh: (r) => stateWeight(r.state) + r.extremities.length * 80, baseWeight: 64 * 1024 * 1024 }),
            lanes: new KeyedLanes(),
            notifier: new Notifier(),
        },
        search: createSearchStore(storage.sql),
        userDirectory: new UserDirectoryStore(storage.sql),
        relations: new RelationStore(storage.sql),
        reports: new ReportStore(storage.db),
        accountData: new AccountDataStore(storage.sql),
        filters: new FilterStore(storage.sql),
        sync: new SyncServices(caches, extensions.syncProviders, extensions.syncDecorators),
        directory: new DirectoryStore(storage.sql),
        e2ee: new E2eStore(storage.sql, caches.get("e2e_key_summaries", 100_000)),
        typing: new TypingState(() => clock.now(), caches.size("typing_rooms", 20_000)),
        receipts: new ReceiptStore(storage.sql),
        presence: new PresenceStore(storage.sql, caches.get("presence_rows", 100_000)),
        push: undefined, // needs the services it belongs to: set just below
        media: new MediaServices(storage.db, storage.sql, config.media_store_path, config.server_name),
        appservices: undefined, // needs the services it belongs to: set just below
        inFlight: new InFlight(),
        onClose: [],
    };
    if (services.mailer)
        services.onClose.push(() => services.mailer.close());
    services.onClose.push(() => services.identityServers.close());
    services.push = new PushServices(services);
    services.federationSender = new FederationSender(services);
    services.appservices = new AppServiceServices(services);
    // Notices wait until their stream's position is persisted (no reader may skip an uncommitted position).
    services.rooms.notifier.gate("events", services.rooms.events.streamIds);
    services.rooms.notifier.gate("account_data", services.accountData.streamIds);
    services.rooms.notifier.gate("push_rules", services.push.rules.store.streamIds);
    services.rooms.notifier.gate("to_device", services.e2ee.toDeviceIds);
    services.rooms.notifier.gate("device_lists", services.e2ee.deviceListIds);
    services.consumers = new ConsumerRunner(services, extensions.consumers);
    // The core indexes first (room and event caches), then the declared ones, then readers and consumers.
    services.commits = new CommitFeed(services, [updateRoomCaches, ...extensions.commitListeners, notifyReaders, (s, c) => s.consumers.offer(c)]);
    for (const listen of extensions.invalidationListeners)
        services.invalidations.subscribe((m) => listen(services, m));
    services.onClose.push(() => services.sync.shutdown());
    services.onClose.push(() => services.deviceActivity.stop());
    services.onClose.push(() => federation.close());
    return services;
}
/** Starts the declared background tasks and durable consumers; their stops run on close (before storage). */
export async function startBackground(s) {
    for (const task of s.extensions.background)
        s.onClose.push(task(s));
    s.onClose.push(() => s.consumers.stop());
    await s.consumers.start();
}
