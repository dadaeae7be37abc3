// Builds a running homeserver from a config: storage (migrated), signing key, domain services with every
// extension the capabilities add (declared here, in `capabilities`), the REST and GraphQL faces on one
// Fastify server; and shuts it all down gracefully.
import { resumePartialStateRooms } from "./domain/federation/partial-state/resync.js";
import { mergeForwardExtremities } from "./domain/rooms/dummy-events.js";
import { renewalMailJob, startAccountValidity } from "./domain/accounts/account-validity.js";
import { invalidateErasedUsers } from "./domain/rooms/erasure.js";
import { autoJoinRooms } from "./domain/accounts/auto-join.js";
import pino from "pino";
import { openStorage } from "./storage/database.js";
import { loadOrCreateSigningKeys } from "./domain/signing-key.js";
import { buildServices, startBackground } from "./domain/services.js";
import { createHttpServer } from "./compat/server.js";
import { ROUTE_GROUPS } from "./compat/routes.js";
import { mountGraphql } from "./graphql/server.js";
import { invalidateTokenCache } from "./domain/accounts/authenticate.js";
import { invalidateIgnoredUsers } from "./domain/account-data/ignored-users.js";
import { leaveAllRooms, updateMemberEvents } from "./domain/rooms/account-hooks.js";
import { indexSearch } from "./domain/search/index-hooks.js";
import { indexRelations } from "./domain/relations/index-hook.js";
import { bundleAggregations } from "./domain/relations/aggregations.js";
import { updateDirectoryStats } from "./domain/directory/stats.js";
import { resolveLocalAlias } from "./domain/directory/aliases.js";
import { aliasOnCreate, canonicalAliasCheck } from "./domain/directory/room-extensions.js";
import { serverAclCheck } from "./domain/federation/server-acl.js";
import { encryptionByDefault } from "./domain/e2ee/encryption-default.js";
import { announceDeletedDevices, dropAccountKeys, announceDeviceUpdate, deleteDeviceKeys } from "./domain/e2ee/device-lists.js";
import { recordSyncCommits } from "./domain/sync/stream-cache.js";
import { kickGuestsOnRevocation } from "./domain/rooms/guest-kick.js";
import { typingProvider } from "./domain/sync/providers/typing.js";
import { receiptsProvider } from "./domain/sync/providers/receipts.js";
import { presenceProvider } from "./domain/sync/providers/presence.js";
import { presenceFromSync } from "./domain/presence/presence.js";
import { presenceSweeper, typingNotices } from "./domain/ephemeral/tasks.js";
import { indexPushActions } from "./domain/push/indexer.js";
import { addUnreadCounts } from "./domain/push/sync-counts.js";
import { dropDevicePushers, dropUserPushers, pushGateways } from "./domain/push/install.js";
import { startMediaRetention } from "./domain/media/retention.js";
import { dropThreePids } from "./domain/accounts/threepids.js";
import { scaledCacheSize } from "./domain/cache/lru.js";
import { expireReceivedTransactions } from "./domain/federation/transaction.js";
import { federationSenderConsumer } from "./federation/sender/consumer.js";
import { federationSending } from "./federation/sender/sender.js";
import { typingEduHandler, typingToFederation } from "./domain/federation/edus/typing.js";
import { receiptEduHandler, receiptsToFederation } from "./domain/federation/edus/receipts.js";
import { presenceEduHandler, presenceToFederation } from "./domain/federation/edus/presence.js";
import { deviceListEduHandler, deviceListsToFederation, signingKeyEduHandler } from "./domain/federation/edus/device-lists.js";
import { expireSeenToDevice, toDeviceEduHandler } from "./domain/federation/edus/to-device.js";
import { forgetRejoinedDeviceLists } from "./domain/federation/e2ee/remote-device-lists.js";
import { forgetChangedRemoteProfiles } from "./domain/federation/remote-profiles.js";
import { FederationMediaFetcher } from "./federation/media-fetcher.js";
import { appServiceEvents } from "./domain/appservices/consumer.js";
import { httpListeners } from "./config/config.js";
import { withRequestIds } from "./observability/log.js";
import { observeRequests } from "./observability/http-observer.js";
import { startMetricsListener } from "./observability/metrics-listener.js";
import { statusRoutes } from "./compat/status.js";
import { appServiceEphemeral } from "./domain/appservices/ephemeral.js";
import { appServiceSenders } from "./domain/appservices/install.js";
import { aliasFromAppServices, userFromAppServices } from "./domain/appservices/queries.js";
import { resumeRoomDeletions } from "./domain/admin/room-deletion.js";
import { emailRenewalMailer } from "./domain/threepids/renewal-mailer.js";
/**
 * Everything the capabilities add to the core machinery, in one place (src/domain/extensions.ts says
 * what each list is for). Order matters where it runs in sequence (indexers, listeners).
 */
export function capabilities(extra = {}) {
    // The appservices consumer runs only when services are configured (it would write its position on
    // every commit for nothing); a service added later is fed from the moment it was added.
    const appServices = (extra.config?.app_services.length ?? 0) > 0;
    return {
        // In the event commit's transaction: atomic with the events.
        // Push evaluation runs after relations (it reads the threads of the batch).
        indexers: [indexSearch, indexRelations, updateDirectoryStats, indexPushActions],
        // Fed each commit notice at settle, after the room and event caches, before the notifier.
        // Metrics last: they count what committed.
        commitListeners: [recordSyncCommits, forgetChangedRemoteProfiles, forgetRejoinedDeviceLists, kickGuestsOnRevocation, mergeForwardExtremities, ...(extra.metrics ? [extra.metrics.countCommit] : [])],
        // After the commit, from their own persisted positions. Application services: events into each
        // interested service's persistent queue.
        consumers: [federationSenderConsumer, ...(appServices ? [appServiceEvents] : []), ...(extra.consumers ?? [])],
        unsigned: [bundleAggregations],
        createRoom: [aliasOnCreate, encryptionByDefault],
        stateEventChecks: [canonicalAliasCheck, serverAclCheck],
        // Local aliases first; then the application services whose alias namespace holds it.
        aliasResolvers: [resolveLocalAlias, aliasFromAppServices],
        // An unknown local user looked up (profile, invite): the services whose namespace holds it.
        userQueries: [userFromAppServices],
        profileChanged: [updateMemberEvents],
        registered: [startAccountValidity, autoJoinRooms],
        renewalMailers: [emailRenewalMailer],
        deactivated: [leaveAllRooms, dropUserPushers, dropAccountKeys, dropThreePids],
        deviceDeleting: [deleteDeviceKeys],
        devicesDeleted: [announceDeletedDevices, dropDevicePushers],
        deviceUpdated: [announceDeviceUpdate],
        syncProviders: [typingProvider, receiptsProvider, presenceProvider],
        // Per joined room, after every provider ran: unread notification counts.
        syncDecorators: [addUnreadCounts],
        presenceSetters: [presenceFromSync],
        // Federation: the EDUs remote servers send, by edu_type.
        eduHandlers: [typingEduHandler, receiptEduHandler, presenceEduHandler, deviceListEduHandler, signingKeyEduHandler, toDeviceEduHandler],
        invalidationListeners: [invalidateTokenCache, invalidateIgnoredUsers, invalidateErasedUsers],
        // The federation sender first: the EDU producers after it hand it what they send.
        background: [typingNotices, presenceSweeper, pushGateways, startMediaRetention, federationSending, typingToFederation, receiptsToFederation, presenceToFederation, deviceListsToFederation, expireReceivedTransactions, expireSeenToDevice, appServiceSenders, appServiceEphemeral, resumeRoomDeletions, renewalMailJob, resumePartialStateRooms],
    };
}
export async function startHomeserver(config, opts = {}) {
    // Every line logged while a request is handled carries its id (src/observability/log.ts).
    const log = withRequestIds(opts.log ?? pino({ level: config.log_level, base: { server: config.server_name } }));
    for (const warning of config.warnings)
        log.warn(`config: ${warning}`);
    // prom-client is loaded only when metrics are on.
    const metrics = config.enable_metrics ? new (await import("./observability/metrics.js")).Metrics() : undefined;
    const storage = await openStorage(config.database, {
        queryPlanCacheMaxSize: scaledCacheSize(config.caches, "prisma_query_plans", 200),
        timer: metrics ? (client, operation, seconds) => metrics.observeQuery(client, operation, seconds) : undefined,
        onPrismaLoad: (operation) => log.info({ operation, ...(process.env.WEFT_TRACE_PRISMA ? { stack: new Error().stack } : {}) }, "storage: Prisma client loaded (first used by this operation)"),
    });
    const signingKeys = await loadOrCreateSigningKeys(config.signing_key_path);
    const services = buildServices({ config, storage, log, signingKeys, clock: opts.clock, dns: opts.dns, extensions: capabilities({ consumers: opts.consumers, config, metrics }) });
    services.media.remoteFetcher = new FederationMediaFetcher(services);
    await startBackground(services);
    // The observer's hooks before any route, so every route is observed.
    const app = createHttpServer(services, { observe: (a) => observeRequests(a, log, metrics) });
    statusRoutes(app, services, metrics);
    for (const group of ROUTE_GROUPS)
        group(app, services);
    await mountGraphql(app, services);
    await app.after(); // route groups in their own context (media) are registered by now
    app.finishRoutes();
    metrics?.watch(services, () => app.websocketServer?.clients.size ?? 0);
    // One Fastify instance listens once: the first http listener's first address. (Several listeners arrive
    // with worker processes; until then extra ones are reported, not silently dropped.)
    const [first, ...rest] = httpListeners(config);
    if (rest.length > 0 || first.bind_addresses.length > 1)
        log.warn("only the first listener and its first bind address are served by this process");
    const urls = [await app.listen({ port: opts.port ?? first.port, host: first.bind_addresses[0] })];
    log.info({ urls }, "homeserver listening");
    // Synapse's `type: metrics` listeners, each a small server of its own.
    const metricsListeners = [];
    for (const listener of config.listeners.filter((l) => l.type === "metrics")) {
        if (!metrics) {
            log.warn({ port: listener.port }, "a metrics listener is configured, but enable_metrics is not true: not started");
            continue;
        }
        try {
            metricsListeners.push(await startMetricsListener(listener, metrics, log));
        }
        catch (err) {
            await app.close();
            await Promise.all(metricsListeners.map((m) => m.close()));
            for (const fn of [...services.onClose].reverse())
                await fn();
            await storage.close();
            throw err;
        }
    }
    if (metricsListeners.length > 0)
        log.info({ urls: metricsListeners.map((m) => m.url) }, "metrics listening");
    let closed = false;
    return {
        services,
        app,
        urls,
        metricsUrls: metricsListeners.map((m) => m.url),
        metrics,
        async close() {
            if (closed)
                return;
            closed = true;
            await Promise.all(metricsListeners.map((m) => m.close()));
            services.inFlight.draining = true;
            services.sync.shutdown(); // waiting long polls answer now instead of at their timeout
            services.media.uploads.wakeAll(); // so do downloads waiting for content still to be uploaded
            await app.close();
            await services.inFlight.idle(); // handlers whose client went away may still be reading
            for (const fn of [...services.onClose].reverse())
                await fn();
            await storage.close();
        },
    };
}
