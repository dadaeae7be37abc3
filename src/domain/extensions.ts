// What capabilities add to the core machinery, declared once in src/main.ts and carried on Services
// (`s.extensions`): nothing registers itself at import time or into module-level arrays, so the import
// graph and main.ts show every plug-in. ARCHITECTURE "Consumers of the event stream".
//  - the event pipeline: in-transaction indexers (atomic with the events), in-memory commit listeners
//    (fed the commit notice at settle), durable consumers (their own persisted position);
//  - serving events: unsigned data per batch;
//  - room operations: createRoom additions, checks on local state events, alias resolution;
//  - users: queries about unknown local users (application services);
//  - accounts and devices: profile changes, deactivation, device deletion and updates;
//  - sync: stream providers (one slot per stream), `set_presence`;
//  - process-wide: invalidation listeners and background tasks (started with the server, stopped on close).
import type { RenewalMailer } from "./accounts/account-validity.ts";
import type { RegistrationHook } from "./accounts/auto-join.ts";
import type { Services } from "./services.ts";
import type { Fence } from "./cluster/leases.ts";
import type { LeasedWork } from "./cluster/leased-work.ts";
import type { Invalidation } from "./cache/invalidation.ts";
import type { EventIndexer } from "./rooms/pipeline/commit.ts";
import type { CommitListener } from "./consumers/commit-feed.ts";
import type { DurableConsumer } from "./consumers/durable.ts";
import type { UnsignedSource } from "./rooms/serialize.ts";
import type { CreateRoomExtension } from "./rooms/create-room.ts";
import type { StateEventCheck } from "./rooms/send.ts";
import type { AliasResolver } from "./rooms/membership.ts";
import type { ProfileChangeHook } from "./profile/profile.ts";
import type { DeactivationHook } from "./accounts/deactivate.ts";
import type { DeviceDeletionHook, DevicesDeletedHook } from "./devices/delete-devices.ts";
import type { DeviceUpdateHook } from "./devices/update-device.ts";
import type { SyncProvider } from "./sync/types.ts";
import type { PresenceSetter, SyncDecorator } from "./sync/registry.ts";
import type { EduHandler } from "./federation/edu.ts";
import type { UserQuery } from "./accounts/user-lookup.ts";
import type { PartialStateCompletedHook } from "./federation/partial-state/resync.ts";

/** A process-wide task: started once the services exist; the function it returns stops it. */
/**
 * Started with the server (or when this instance takes the work's lease: `fence` is then the lease
 * check for each transaction that advances the work's positions, cluster/leases.ts); returns its stop.
 */
export type BackgroundTask = (s: Services, fence?: Fence) => () => void | Promise<void>;

export interface Extensions {
  /** Run inside every event commit, in order, with its timeline events; a throw fails the commit. */
  indexers: EventIndexer[];
  /** In-memory indexes fed each commit notice when its transaction settles (after the core ones). */
  commitListeners: CommitListener[];
  /** After-commit consumers reading the events stream from their own persisted position. */
  consumers: DurableConsumer[];
  /** Unsigned fields added to events as they are served (bundled aggregations ...). */
  unsigned: UnsignedSource[];
  /** Additions to POST /createRoom (initial state, writes in the room's commit). */
  createRoom: CreateRoomExtension[];
  /** Checks on a local state event before it is built (e.g. m.room.canonical_alias → M_BAD_ALIAS). */
  stateEventChecks: StateEventCheck[];
  /** The same, for checks that ask other servers: run before the room's lane (they would hold up its events). */
  stateEventPrechecks: StateEventCheck[];
  /** Room alias → room id (the first that knows wins). */
  aliasResolvers: AliasResolver[];
  /** Asked, in order, about an unknown local user that a lookup names (application services may create it). */
  userQueries: UserQuery[];
  /** After a profile change was stored. */
  profileChanged: ProfileChangeHook[];
  /** After an account was created (auto-joined rooms ...). */
  registered: RegistrationHook[];
  /** Senders of account renewal links (e-mail), tried in order until one sends. */
  renewalMailers: RenewalMailer[];
  /** After an account was deactivated. */
  deactivated: DeactivationHook[];
  /** Inside the transaction deleting devices (their data goes with them). */
  deviceDeleting: DeviceDeletionHook[];
  /** After devices were deleted. */
  devicesDeleted: DevicesDeletedHook[];
  /** After a device was created or renamed. */
  deviceUpdated: DeviceUpdateHook[];
  /** Sync providers replacing their stream's placeholder (sync/registry.ts). */
  syncProviders: SyncProvider[];
  /** Per-room additions to the joined rooms of a /sync response, after every provider ran (unread counts). */
  syncDecorators: SyncDecorator[];
  /** Called with a /sync's `set_presence`. */
  presenceSetters: PresenceSetter[];
  /** Handlers of the EDUs remote servers send (by edu_type; federation /send dispatches to them). */
  eduHandlers: EduHandler[];
  /** In the transaction that completes a room joined with partial state (device lists of its members). */
  partialStateCompleted: PartialStateCompletedHook[];
  /** Cache invalidation messages (s.invalidations), e.g. dropping cached access tokens. */
  invalidationListeners: ((s: Services, m: Invalidation) => void)[];
  background: BackgroundTask[];
  /**
   * Work that runs on one instance at a time among the candidates the worker options name for it (one
   * candidate: that instance, no lease; several: the holder of its lease, cluster/leased-work.ts).
   * Only the pieces this instance is a candidate for.
   */
  leased: LeasedWork[];
}

/** No extensions: the bare machinery (each list empty). */
export function noExtensions(): Extensions {
  return {
    indexers: [],
    commitListeners: [],
    consumers: [],
    unsigned: [],
    createRoom: [],
    stateEventChecks: [],
    stateEventPrechecks: [],
    aliasResolvers: [],
    userQueries: [],
    profileChanged: [],
    registered: [],
    renewalMailers: [],
    deactivated: [],
    deviceDeleting: [],
    devicesDeleted: [],
    deviceUpdated: [],
    syncProviders: [],
    syncDecorators: [],
    presenceSetters: [],
    eduHandlers: [],
    partialStateCompleted: [],
    invalidationListeners: [],
    background: [],
    leased: [],
  };
}
