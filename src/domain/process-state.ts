// The in-memory state one Weft process holds for its operations, declared in one place
// (Services.processState) so the inventory of what a second process would have to share, route or lease
// reads in one file: what each piece holds, who writes it, and what several processes would need instead.
// Modules read their piece as a field of `s.processState`, never from a module-level map. Pieces that
// cost something to build are filled on first use by their module; the rest are made with Services.
// In-memory state that Services held in its own parts before (rooms.lanes, rooms.cache, rooms.notifier,
// typing, sync, the federation sender's queues) is there still. Besides KeyedLanes (rooms/lanes.ts, which
// imports nothing) this file takes only types, and only from modules that already reach Services and
// back, so it adds no import cycle (transaction.ts's answer shape is spelled out below for that reason).
// Spec: none (process architecture; ARCHITECTURE.md "Growing past one process").
import type { EventStore, StoredEvent } from "./store/events.ts";
import type { ClientEvent } from "./events/format.ts";
import type { EventDraft } from "./rooms/build-event.ts";
import type { PersistOptions } from "./rooms/persist.ts";
import type { PartialStateRoom } from "./federation/partial-state/flag.ts";
import { KeyedLanes } from "./rooms/lanes.ts";
import type { LeaseKeeper } from "./cluster/leases.ts";
import type { LruCache } from "./cache/lru.ts";

/** A local message waiting in its room's group commit (rooms/append.ts). */
export interface QueuedMessage {
  draft: EventDraft;
  txn?: PersistOptions["txn"];
  admit?: () => void;
  resolve(e: StoredEvent): void;
  reject(err: unknown): void;
}

/** A page of new room events read once for every live reader woken together (rooms/live-timeline.ts). */
export interface SharedLivePage {
  page: Promise<Awaited<ReturnType<EventStore["page"]>>>;
  /** The page serialized once for every reader (undefined: reader-dependent, serialize per reader). */
  serialized?: Promise<Map<string, ClientEvent> | undefined>;
}

/** Inbound federation transactions being handled (federation/transaction.ts). */
export interface InboundTransactions {
  /** One transaction at a time per origin. */
  lanes: KeyedLanes;
  /** (origin, txnId) → its /send answer being computed (a concurrent retry shares it). The answer's shape
   *  is transaction.ts's TransactionResponse, written out: importing it would pull that file into a cycle. */
  running: Map<string, Promise<{ pdus: Record<string, { error?: string }> }>>;
  /** Transactions per origin accepted and not yet answered (over the limit: 429). */
  pending: Map<string, number>;
  /** EDU types no handler takes, already logged. */
  unknownEdus: Set<string>;
}

/** Backfill fetches of rooms' older history (federation/backfill.ts). */
export interface BackfillRuns {
  /** Room → its fetch under way (concurrent callers share it). */
  running: Map<string, Promise<number>>;
  /** Room → when it may be asked about again (after a backfill that brought nothing). */
  quietUntil: Map<string, number>;
}

/** Resyncs of partial-state rooms' full state (federation/partial-state/resync.ts). */
export interface PartialStateResyncs {
  /** Rooms whose resync runs now (one at a time per room). */
  rooms: Set<string>;
  /** Set when the background task stops: loops end at their next step. */
  stopped: boolean;
}

/** The partial_state_rooms rows mirrored in memory, and the reads waiting on them (federation/partial-state/flag.ts). */
export interface PartialStateFlags {
  /** Rooms still partial. */
  rooms: Promise<Map<string, PartialStateRoom>>;
  /** Rooms whose partial state was completed: the events-stream position from which it is complete. */
  completed: Promise<Map<string, number>>;
  /** Our joins that made a room partial (still partial or completed since). */
  joins: Promise<Set<string>>;
  /** Room → reads waiting for its full state. */
  waiters: Map<string, (() => void)[]>;
}

/** GraphQL persisted queries (graphql/persisted-queries.ts): texts registered by hash, and the operator's manifest. */
export interface PersistedQueryStore {
  /** Query texts by SHA-256, registered by clients (automatic persisted queries), bounded. */
  cache: LruCache<string, string>;
  /** The manifest's operations by hash (empty without one): the allow-list of only_registered mode. */
  registered: ReadonlyMap<string, string>;
}

/**
 * Every piece of per-process state that was kept in module-level WeakMaps (and a WeakSet) keyed by
 * Services. Each comment says what it holds and who writes it, then (→) what an operation spread over
 * several processes needs instead.
 */
export class ProcessState {
  /** Room message groups: local messages waiting for their room's lane, group-committed (rooms/append.ts).
   *  → one process owns a room's writes (with rooms.lanes); scale-out forwards a send to the room's owner. */
  readonly roomMessages = new Map<string, QueuedMessage[]>();

  /** Live timeline pages being read, shared by the readers one new event woke, for one turn (rooms/live-timeline.ts).
   *  → nothing shared: a read-sharing of this process's own readers; each process shares its own. */
  readonly livePages = new Map<string, SharedLivePage>();

  /** Gap-filling lanes: one /get_missing_events fill at a time per room (federation/ingest.ts).
   *  → route a room's inbound PDUs to the room's writer (or hold a per-room lease in PostgreSQL). */
  readonly gapLanes = new KeyedLanes();

  /** Inbound transactions: one at a time per origin, a retry sharing the running one, the 429 count (federation/transaction.ts).
   *  → route each origin's /send to one process (or a per-origin lease); received_transactions already dedupes what was answered. */
  readonly inboundTransactions: InboundTransactions = { lanes: new KeyedLanes(), running: new Map(), pending: new Map(), unknownEdus: new Set() };

  /** Backfill runs: one fetch per room at a time, and rooms left quiet after an empty one (federation/backfill.ts).
   *  → a per-room lease (or the room's writer backfills); quiet times are hints each process may keep alone. */
  readonly backfills: BackfillRuns = { running: new Map(), quietUntil: new Map() };

  /** Partial-state resyncs running, started by joins and the resume task (federation/partial-state/resync.ts).
   *  → one process runs background resyncs (a per-room lease), so two never complete the same room. */
  readonly partialStateResyncs: PartialStateResyncs = { rooms: new Set(), stopped: false };

  /** Partial-state flags: partial_state_rooms read once on first use, then kept by the commits that change it (federation/partial-state/flag.ts).
   *  → with replication (cluster/replication.ts) another process's commit of a local join or a completion re-reads it (reloadPartialStateFlags), waking the reads waiting here. */
  partialStateFlags: PartialStateFlags | undefined = undefined;

  /** Remote device-list queues: the tail of each remote user's updates, applied one at a time (federation/e2ee/remote-device-lists.ts).
   *  → one process applies a remote user's device-list updates (route by user to the device-list stream's writer). */
  readonly remoteDeviceListQueues = new Map<string, Promise<void>>();

  /** To-device sender lanes: a sending device's /sendToDevice requests take stream positions in arrival order (e2ee/to-device.ts).
   *  → route a device's sends to one process (the to-device stream's writer), or the order between processes is lost. */
  readonly toDeviceSenderLanes = new KeyedLanes();

  /** The HMAC key of browser media URLs, derived on first use from the signing key (media/browser-urls.ts).
   *  → nothing shared: every process derives the same key from the same signing key. */
  browserUrlKey: Buffer | undefined = undefined;

  /** Whether the directory stats of rooms published without them were filled in, on the first directory read (directory/public-rooms.ts).
   *  → nothing shared: the fill is idempotent; each process may do it once (or one background worker at start). */
  directoryStatsFilled = false;

  /** The OAuth pages' theme (templates.custom_template_directory), loaded when their routes are set up
   *  (compat/oauth-pages/theme.ts, which types it: the domain knows no page types).
   *  → nothing shared: every process reads the same directory. */
  oauthPageTheme: object | undefined = undefined;

  /** The OAuth server's ID token signing key, derived from the server's signing key on first use (oauth/openid.ts).
   *  → nothing shared: every process derives the same key. */
  oauthIdTokenKey: { key: import("node:crypto").KeyObject; jwk: Record<string, string> } | undefined = undefined;

  /** The leases this instance keeps on background work it is one of several candidates for (cluster/leased-work.ts), by name.
   *  → shared already: each is a row of worker_leases in the database; this is only this instance's side of it. */
  readonly leases = new Map<string, LeaseKeeper>();

  /** GraphQL persisted queries, made on the first GraphQL request that uses them (graphql/persisted-queries.ts).
   *  → a shared cache (or each process lets its clients register again: a miss costs one round trip). */
  persistedQueries: PersistedQueryStore | undefined = undefined;

  /** Remote events refused (rejected, soft-failed, dropped, redacted) since start, by rule (federation/refusals.ts),
   *  read by weft_federation_rejected_events_total.
   *  → nothing shared: a counter per process; Prometheus sums the processes. */
  readonly refusedEvents = new Map<string, number>();
}
