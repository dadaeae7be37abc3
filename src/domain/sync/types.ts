// The shapes of /sync: the response being built (spec: Client-Server API "GET /sync" response), the
// context every stream provider receives, and the provider interface itself. See sync.ts for how a
// capability plugs its provider in.
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StreamName } from "../rooms/notifier.ts";
import type { SyncFilter } from "../filters/sync-filter.ts";
import type { SyncToken } from "./token.ts";

export type JsonObject = Record<string, unknown>;

export interface JoinedRoomResult {
  summary?: { "m.heroes"?: string[]; "m.joined_member_count"?: number; "m.invited_member_count"?: number };
  state: { events: JsonObject[] };
  timeline: { events: JsonObject[]; limited: boolean; prev_batch: string };
  ephemeral: { events: JsonObject[] };
  account_data: { events: JsonObject[] };
  unread_notifications?: { notification_count: number; highlight_count: number };
  unread_thread_notifications?: Record<string, { notification_count: number; highlight_count: number }>;
  /** MSC4354: the room's sticky events not in its timeline (Synapse's unstable name). */
  msc4354_sticky?: { events: JsonObject[] };
}

export interface LeftRoomResult {
  state: { events: JsonObject[] };
  timeline: { events: JsonObject[]; limited: boolean; prev_batch: string };
  account_data: { events: JsonObject[] };
}

export interface SyncResult {
  rooms: {
    join: Record<string, JoinedRoomResult>;
    invite: Record<string, { invite_state: { events: JsonObject[] } }>;
    knock: Record<string, { knock_state: { events: JsonObject[] } }>;
    leave: Record<string, LeftRoomResult>;
  };
  account_data: { events: JsonObject[] };
  presence: { events: JsonObject[] };
  to_device?: { events: JsonObject[] };
  device_lists?: { changed: string[]; left: string[] };
  device_one_time_keys_count?: Record<string, number>;
  device_unused_fallback_key_types?: string[];
}

/** One /sync computation: who, with which filter, from which token (none: initial sync) to which. */
export interface SyncContext {
  s: Services;
  requester: Requester;
  filter: SyncFilter;
  /** undefined: an initial sync (everything up to `to`). */
  since: SyncToken | undefined;
  /** The positions this response reads up to; becomes next_batch. */
  to: SyncToken;
  fullState: boolean;
  /** MSC4222: rooms' `state` is the state at the end of their timeline (served as `state_after`). */
  stateAfter: boolean;
  /** Whether `since` acknowledges (deletes) the device's to-device messages up to it. */
  acknowledgeToDevice: boolean;
  result: SyncResult;
  /**
   * The rooms the user is joined to (after the room filter), filled by the events provider, which runs
   * first; later providers (account data, receipts, typing) deliver per-room data for these rooms only.
   */
  joinedRooms: Set<string>;
  /**
   * Users whose presence an incremental sync brings whether it changed or not (as Synapse): the members of
   * rooms the user joined since the token, and those who joined, were invited to or knock on the user's
   * rooms in what this sync shows. Filled by the events provider, read by the presence provider.
   */
  presenceOf: Set<string>;
  /**
   * Joined rooms new to the client in an incremental sync (joined since the token, or shown anew): filled by
   * the events provider; the sticky-events provider (MSC4354) gives them all their sticky events.
   */
  newlyJoinedRooms: Set<string>;
  /**
   * Joined rooms left out because their state is still partial (a join over federation in progress): filled
   * by the events provider; a live reader keeps listening to them (live-sync.ts).
   */
  partialJoinedRooms: Set<string>;
  /** The joined-room entry of `roomId` in the response, created empty when absent. */
  joinedRoom(roomId: string): JoinedRoomResult;
}

/**
 * A stream's provider: one module per stream in providers/<stream>.ts.
 * - `current()`: the stream's position now (0 for a stream with nothing yet). A token position above it
 *   (e.g. an in-memory stream after a restart) must be treated as "nothing new" / reset by the provider.
 * - `collect(ctx, from, to)`: writes the user's data with positions in (from, to] — all current data when
 *   `from` is undefined (initial sync) — into ctx.result; returns whether it added anything (an
 *   incremental sync with nothing added by any provider keeps waiting).
 */
export interface SyncProvider {
  readonly stream: StreamName;
  current(s: Services): Promise<number> | number;
  collect(ctx: SyncContext, from: number | undefined, to: number): Promise<boolean>;
}
