// Builds a running homeserver from a config: storage (migrated), signing key, domain services with every
// extension the capabilities add (declared here, in `capabilities`), the REST and GraphQL faces on one
// Fastify server; and shuts it all down gracefully.
import { resumePartialStateRooms } from "./domain/federation/partial-state/resync.ts";
import { mergeForwardExtremities } from "./domain/rooms/dummy-events.ts";
import { renewalMailJob, startAccountValidity } from "./domain/accounts/account-validity.ts";
import { invalidateErasedUsers } from "./domain/rooms/erasure.ts";
import { autoJoinRooms } from "./domain/accounts/auto-join.ts";
import pino, { type Logger } from "pino";
import type { FastifyInstance } from "fastify";
import type { Config } from "./config/config.ts";
import { openStorage } from "./storage/database.ts";
import { loadOrCreateSigningKeys } from "./domain/signing-key.ts";
import { buildServices, startBackground, type Clock, type Services } from "./domain/services.ts";
import { ClusterTopology, topologyOf } from "./domain/cluster/topology.ts";
import type { Extensions } from "./domain/extensions.ts";
import type { LeasedWork } from "./domain/cluster/leased-work.ts";
import type { DurableConsumer } from "./domain/consumers/durable.ts";
import { createHttpServer } from "./compat/server.ts";
import { ROUTE_GROUPS } from "./compat/routes.ts";
import { mountGraphql } from "./graphql/server.ts";
import { invalidateTokenCache } from "./domain/accounts/authenticate.ts";
import { invalidateIgnoredUsers } from "./domain/account-data/ignored-users.ts";
import { leaveAllRooms, updateMemberEvents } from "./domain/rooms/account-hooks.ts";
import { indexSearch } from "./domain/search/index-hooks.ts";
import { searchIndexer } from "./domain/search/index-consumer.ts";
import { indexStickyEvents } from "./domain/sticky/index-hook.ts";
import { stickyEventsSweeper } from "./domain/sticky/expiry.ts";
import { stickyEventsProvider } from "./domain/sync/providers/sticky-events.ts";
import { indexRelations } from "./domain/relations/index-hook.ts";
import { bundleAggregations } from "./domain/relations/aggregations.ts";
import { updateDirectoryStats } from "./domain/directory/stats.ts";
import { resolveLocalAlias } from "./domain/directory/aliases.ts";
import { aliasOnCreate, canonicalAliasCheck, remoteCanonicalAliasCheck } from "./domain/directory/room-extensions.ts";
import { serverAclCheck } from "./domain/federation/server-acl.ts";
import { encryptionByDefault } from "./domain/e2ee/encryption-default.ts";
import { announceDeletedDevices, dropAccountKeys, announceDeviceUpdate, deleteDeviceKeys } from "./domain/e2ee/device-lists.ts";
import { dropOAuthGrants } from "./domain/oauth/token.ts";
import { oauthHousekeeping } from "./domain/oauth/housekeeping.ts";
import { recordSyncCommits } from "./domain/sync/stream-cache.ts";
import { kickGuestsOnRevocation } from "./domain/rooms/guest-kick.ts";
import { forgetRoomsOnLeave } from "./domain/rooms/forget-on-leave.ts";
import { carryOverOnTombstone } from "./domain/rooms/upgrade-user-state.ts";
import { typingProvider } from "./domain/sync/providers/typing.ts";
import { receiptsProvider } from "./domain/sync/providers/receipts.ts";
import { presenceProvider } from "./domain/sync/providers/presence.ts";
import { presenceFromSync } from "./domain/presence/presence.ts";
import { presenceSweeper, typingNotices } from "./domain/ephemeral/tasks.ts";
import type { Dns } from "./federation/transport.ts";
import { indexPushActions } from "./domain/push/indexer.ts";
import { addUnreadCounts } from "./domain/push/sync-counts.ts";
import { dropDevicePushers, dropUserPushers, pushGateways } from "./domain/push/install.ts";
import { startMediaRetention } from "./domain/media/retention.ts";
import { dropThreePids } from "./domain/accounts/threepids.ts";
import { scaledCacheSize } from "./domain/cache/lru.ts";
import { expireReceivedTransactions } from "./domain/federation/transaction.ts";
import { federationSenderConsumer } from "./federation/sender/consumer.ts";
import { federationSending } from "./federation/sender/sender.ts";
import { typingEduHandler, typingToFederation } from "./domain/federation/edus/typing.ts";
import { receiptEduHandler, receiptsToFederation } from "./domain/federation/edus/receipts.ts";
import { presenceEduHandler, presenceToFederation } from "./domain/federation/edus/presence.ts";
import { deviceListEduHandler, deviceListsToFederation, signingKeyEduHandler } from "./domain/federation/edus/device-lists.ts";
import { deviceListsOnFullState } from "./domain/federation/partial-state/device-lists.ts";
import { expireSeenToDevice, toDeviceEduHandler } from "./domain/federation/edus/to-device.ts";
import { forgetRejoinedDeviceLists } from "./domain/federation/e2ee/remote-device-lists.ts";
import { forgetChangedRemoteProfiles } from "./domain/federation/remote-profiles.ts";
import { FederationMediaFetcher } from "./federation/media-fetcher.ts";
import { appServiceEvents } from "./domain/appservices/consumer.ts";
import { serveListeners } from "./compat/listeners.ts";
import { withRequestIds } from "./observability/log.ts";
import type { Metrics } from "./observability/metrics.ts";
import { observeRequests } from "./observability/http-observer.ts";
import { startMetricsListener, type MetricsListener } from "./observability/metrics-listener.ts";
import { statusRoutes } from "./compat/status.ts";
import { appServiceEphemeral } from "./domain/appservices/ephemeral.ts";
import { appServiceSenders } from "./domain/appservices/install.ts";
import { aliasFromAppServices, userFromAppServices } from "./domain/appservices/queries.ts";
import { resumeRoomDeletions } from "./domain/admin/room-deletion.ts";
import { emailRenewalMailer } from "./domain/threepids/renewal-mailer.ts";
import { delayedEventSender } from "./domain/delayed-events/send-delayed.ts";
import { delayedStateOverrides } from "./domain/delayed-events/state-overrides.ts";
import { cancelDelayedEventsOf } from "./domain/delayed-events/manage.ts";
import { dropThreadSubscriptionsOf } from "./domain/threads/subscriptions.ts";
import { delayedEventsEnabled } from "./config/experimental.ts";
import { dropLocalNotificationSettings } from "./domain/account-data/local-notification-settings.ts";

/** How long a shutdown waits for requests still being answered before ending their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface Homeserver {
  services: Services;
  app: FastifyInstance;
  /** Base URLs the listeners are serving on (e.g. http://127.0.0.1:8008). */
  urls: string[];
  /** Base URLs of the `type: metrics` listeners (GET /metrics there). */
  metricsUrls: string[];
  /** The Prometheus metrics, when enable_metrics is on. */
  metrics: Metrics | undefined;
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  clock?: Clock;
  /** Override the first listener's port (0 picks a free one: tests). */
  port?: number;
  /** DNS for federation server discovery (tests: a resolver that never leaves the machine). */
  dns?: Dns;
  /** Durable consumers added to the declared ones (embedding, tests). */
  consumers?: DurableConsumer[];
}

/**
 * Everything the capabilities add to the core machinery, in one place (src/domain/extensions.ts says
 * what each list is for). Order matters where it runs in sequence (indexers, listeners).
 */
export function capabilities(extra: { consumers?: DurableConsumer[]; config?: Config; metrics?: Metrics } = {}): Extensions {
  // The appservices consumer runs only when services are configured (it would write its position on
  // every commit for nothing); a service added later is fed from the moment it was added.
  const appServices = (extra.config?.app_services.length ?? 0) > 0;
  // Delayed events (MSC4140) are off unless configured: then a state change is checked against them.
  const delayedEvents = extra.config !== undefined && delayedEventsEnabled(extra.config);
  // Sticky events (MSC4354) are off unless experimental_features.msc4354_enabled: then kept, synced and swept.
  const sticky = extra.config?.experimental_features.msc4354_enabled === true;
  // Who runs which background work (worker options; without them, this process runs everything).
  const t = extra.config ? topologyOf(extra.config) : ClusterTopology.single();
  return {
    // In the event commit's transaction: atomic with the events.
    // Push evaluation runs after relations (it reads the threads of the batch).
    indexers: [indexSearch, indexRelations, updateDirectoryStats, indexPushActions, ...(sticky ? [indexStickyEvents] : [])],
    // Fed each commit notice at settle, after the room and event caches, before the notifier.
    // Metrics last: they count what committed.
    commitListeners: [recordSyncCommits, forgetChangedRemoteProfiles, forgetRejoinedDeviceLists, kickGuestsOnRevocation, forgetRoomsOnLeave, carryOverOnTombstone, mergeForwardExtremities, ...(extra.metrics ? [extra.metrics.countCommit] : [])],
    // After the commit, from their own persisted positions: the embedder's here; those of the pieces of
    // background work (the federation sender, search, application services...) are in `leased` below.
    consumers: extra.consumers ?? [],
    unsigned: [bundleAggregations],
    createRoom: [aliasOnCreate, encryptionByDefault],
    stateEventChecks: [canonicalAliasCheck, serverAclCheck],
    stateEventPrechecks: [remoteCanonicalAliasCheck],
    // Local aliases first; then the application services whose alias namespace holds it.
    aliasResolvers: [resolveLocalAlias, aliasFromAppServices],
    // An unknown local user looked up (profile, invite): the services whose namespace holds it.
    userQueries: [userFromAppServices],
    profileChanged: [updateMemberEvents],
    registered: [startAccountValidity, autoJoinRooms],
    renewalMailers: [emailRenewalMailer],
    deactivated: [leaveAllRooms, dropUserPushers, dropAccountKeys, dropThreePids, cancelDelayedEventsOf, dropThreadSubscriptionsOf],
    // Weft's own OAuth server: a deleted device's grant (which client may refresh its tokens) goes with it.
    deviceDeleting: [deleteDeviceKeys, dropOAuthGrants],
    // MSC3890 (with msc3890_enabled): a deleted device's local notification settings go with it.
    devicesDeleted: [announceDeletedDevices, dropDevicePushers, dropLocalNotificationSettings],
    deviceUpdated: [announceDeviceUpdate],
    syncProviders: [typingProvider, receiptsProvider, presenceProvider, ...(sticky ? [stickyEventsProvider] : [])],
    // Per joined room, after every provider ran: unread notification counts.
    syncDecorators: [addUnreadCounts],
    presenceSetters: [presenceFromSync],
    // Federation: the EDUs remote servers send, by edu_type.
    eduHandlers: [typingEduHandler, receiptEduHandler, presenceEduHandler, deviceListEduHandler, signingKeyEduHandler, toDeviceEduHandler],
    // A room joined with partial state completed: its members' device-list updates noted meanwhile, and
    // ours to the servers that missed them.
    partialStateCompleted: [deviceListsOnFullState],
    invalidationListeners: [invalidateTokenCache, invalidateIgnoredUsers, invalidateErasedUsers],
    // Started by every process: typing expiry and the presence sweeper with their stream's writer, and
    // the resyncs of this process's partial-state joins (and their stop at shutdown), wherever the join was made.
    background: [...(t.isWriter("typing") ? [typingNotices] : []), ...(t.isWriter("presence") ? [presenceSweeper] : []), resumePartialStateRooms],
    // Each piece of background work on one of the instances the worker options name for it at a time
    // (cluster/leased-work.ts; all here by default). The federation sender first: the EDU producers after
    // it hand it what they send.
    leased: leasedWork(t, { appServices, delayedEvents, sticky }),
  };
}

/** The pieces of background work, each with its candidate instances; only those this instance may run. */
function leasedWork(t: ClusterTopology, on: { appServices: boolean; delayedEvents: boolean; sticky: boolean }): LeasedWork[] {
  const work: LeasedWork[] = [
    { name: "federation_sender", candidates: t.candidatesFor("federation_sender"), background: [federationSending, typingToFederation, receiptsToFederation, presenceToFederation, deviceListsToFederation], consumers: [federationSenderConsumer] },
    { name: "pushers", candidates: t.candidatesFor("pushers"), background: [pushGateways], consumers: [] },
    { name: "media_jobs", candidates: t.candidatesFor("media_jobs"), background: [startMediaRetention], consumers: [] },
    {
      name: "background_tasks",
      candidates: t.candidatesFor("background_tasks"),
      background: [expireReceivedTransactions, expireSeenToDevice, resumeRoomDeletions, renewalMailJob, delayedEventSender, oauthHousekeeping, ...(on.sticky ? [stickyEventsSweeper] : [])],
      // Search: the full-text index, in batches. Delayed events: state changes cancel other users'
      // delayed events for the same state.
      consumers: [searchIndexer, ...(on.delayedEvents ? [delayedStateOverrides] : [])],
    },
    // Application services: events into each interested service's persistent queue, and its senders.
    { name: "appservices", candidates: t.candidatesFor("appservices"), background: [appServiceSenders, appServiceEphemeral], consumers: on.appServices ? [appServiceEvents] : [] },
  ];
  return work.filter((w) => w.candidates.includes(t.instanceName));
}

export async function startHomeserver(config: Config, opts: StartOptions = {}): Promise<Homeserver> {
  // Every line logged while a request is handled carries its id (src/observability/log.ts).
  const log = withRequestIds(opts.log ?? pino({ level: config.log_level, base: { server: config.server_name } }));
  for (const warning of config.warnings) log.warn(`config: ${warning}`);
  // prom-client is loaded only when metrics are on.
  const metrics = config.enable_metrics ? new (await import("./observability/metrics.ts")).Metrics() : undefined;
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
  const app = createHttpServer(services, { observe: (a) => observeRequests(a, log, metrics, config.log_request_context) });
  statusRoutes(app, services, metrics);
  for (const group of ROUTE_GROUPS) group(app, services);
  await mountGraphql(app, services);
  await app.after(); // route groups in their own context (media) are registered by now
  metrics?.watch(services, () => app.websocketServer?.clients.size ?? 0);

  // Every http listener on every bind address, each with its own resources (compat/listeners.ts).
  const serving = await serveListeners(app, services, opts.port);
  const urls = serving.urls;
  log.info({ urls }, "homeserver listening");

  // Synapse's `type: metrics` listeners, each a small server of its own.
  const metricsListeners: MetricsListener[] = [];
  for (const listener of config.listeners.filter((l) => l.type === "metrics")) {
    if (!metrics) {
      log.warn({ port: listener.port }, "a metrics listener is configured, but enable_metrics is not true: not started");
      continue;
    }
    try {
      metricsListeners.push(await startMetricsListener(listener, metrics, log));
    } catch (err) {
      await Promise.all([serving.close(), app.close()]);
      await Promise.all(metricsListeners.map((m) => m.close()));
      for (const fn of [...services.onClose].reverse()) await fn();
      await storage.close();
      throw err;
    }
  }
  if (metricsListeners.length > 0) log.info({ urls: metricsListeners.map((m) => m.url) }, "metrics listening");

  let closed = false;
  return {
    services,
    app,
    urls,
    metricsUrls: metricsListeners.map((m) => m.url),
    metrics,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(metricsListeners.map((m) => m.close()));
      services.inFlight.draining = true;
      services.sync.shutdown(); // waiting long polls answer now instead of at their timeout
      services.media.uploads.wakeAll(); // so do downloads waiting for content still to be uploaded
      // Requests still answering get a grace period; then their connections are ended (a client that stopped
      // reading a response must not hold the shutdown forever).
      const force = setTimeout(() => {
        app.server.closeAllConnections();
        serving.closeAll();
      }, SHUTDOWN_GRACE_MS);
      force.unref();
      await Promise.all([serving.close(), app.close()]);
      clearTimeout(force);
      await services.inFlight.idle(); // handlers whose client went away may still be reading
      for (const fn of [...services.onClose].reverse()) await fn();
      await storage.close();
    },
  };
}
