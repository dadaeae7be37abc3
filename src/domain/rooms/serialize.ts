// Serializes stored events for clients in batches: unsigned.age, transaction_id for the requesting device,
// prev_content / prev_sender / replaces_state for state events, and redaction (pruned content plus
// unsigned.redacted_because), erased senders' events redacted for readers not joined then (erasure.ts),
// and in timeline reads the reader's unsigned.membership at each event (membership-at-event.ts).
// One query per kind of lookup per batch, never one per event.
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StoredEvent } from "../store/events.ts";
import { toClientEvent, type ClientEvent } from "../events/format.ts";
import { redactEvent } from "../events/redaction.ts";
import { resolveRoomVersion, type RoomVersion } from "./room-versions.ts";
import { deviceKeyOf } from "./send.ts";
import { effectiveRedactions } from "./redactions.ts";
import { erasedForReader } from "./erasure.ts";
import { membershipAtEvents, type MembershipHint } from "./membership-at-event.ts";
import { STICKY_TTL_FIELD, stickyForClient } from "../sticky/sticky.ts";

export interface SerializeOptions {
  omitRoomId?: boolean;
  /** Extra unsigned fields per event id (e.g. m.relations from the relations capability). */
  extraUnsigned?: Map<string, Record<string, unknown>>;
  /** Share event content objects instead of copying them (see ClientEventOptions.shareContent). */
  shareContent?: boolean;
  /** Timeline reads: unsigned.membership, the reader's membership at each event (membership-at-event.ts), with what the caller knows. */
  membership?: boolean | MembershipHint;
}

/** Adds unsigned data per batch of served events, by event id (declared in src/main.ts: `unsigned`). */
export type UnsignedSource = (s: Services, r: Requester | undefined, events: StoredEvent[]) => Promise<Map<string, Record<string, unknown>>>;

export async function serializeEvents(
  s: Services,
  r: Requester | undefined,
  roomVersionOf: (roomId: string) => Promise<string>,
  events: StoredEvent[],
  opts: SerializeOptions = {},
): Promise<ClientEvent[]> {
  if (events.length === 0) return [];
  const now = s.clock.now();
  const replaced = await s.rooms.events.getMany(events.map((e) => e.replacesState).filter((x): x is string => !!x));
  // Redactions apply only when the one rule holds (rooms/redactions.ts), whatever their source.
  const redactions = await effectiveRedactions(s, events, roomVersionOf);
  // Erased senders' events reach readers who were not joined then only redacted (erasure.ts).
  const erased = await erasedForReader(s, r, events);
  const extra = new Map(opts.extraUnsigned ?? []);
  for (const hook of s.extensions.unsigned) for (const [id, fields] of await hook(s, r, events)) extra.set(id, { ...extra.get(id), ...fields });
  if (opts.membership && r) {
    const hint = typeof opts.membership === "function" ? opts.membership : undefined;
    for (const [id, membership] of await membershipAtEvents(s, r.userId, events, hint)) extra.set(id, { ...extra.get(id), membership });
  }

  // Each room's version once (an initial sync serializes thousands of events of a few hundred rooms).
  const versions = new Map<string, RoomVersion>();
  for (const e of events) if (!versions.has(e.roomId)) versions.set(e.roomId, resolveRoomVersion(await roomVersionOf(e.roomId)));
  const out: ClientEvent[] = [];
  // MSC4354: sticky events carry their `msc4354_sticky` and what is left of it (redacted ones are plain events).
  const sticky = s.config.experimental_features.msc4354_enabled;
  for (const e of events) {
    const v = versions.get(e.roomId)!;
    const redactedBy = redactions.get(e.eventId);
    const prev = e.replacesState ? replaced.get(e.replacesState) : undefined;
    const pdu = redactedBy || erased.has(e.eventId) ? redactEvent(e.pdu, v) : e.pdu;
    const stuck = sticky ? stickyForClient(pdu, now) : undefined;
    if (stuck?.ttl !== undefined) extra.set(e.eventId, { ...extra.get(e.eventId), [STICKY_TTL_FIELD]: stuck.ttl });
    out.push(
      toClientEvent(pdu, {
        roomVersion: v,
        eventId: e.eventId,
        roomId: e.roomId,
        omitRoomId: opts.omitRoomId,
        now,
        transactionId: transactionIdFor(r, e),
        prevContent: prev?.pdu.content,
        prevSender: prev?.pdu.sender,
        replacesState: e.replacesState ?? undefined,
        redactedBecause: redactedBy ? toClientEvent(redactedBy.pdu, { roomVersion: v, eventId: redactedBy.eventId, roomId: e.roomId, now }) : undefined,
        extraUnsigned: extra.get(e.eventId),
        shareContent: opts.shareContent,
        sticky: stuck?.field,
      }),
    );
  }
  return out;
}

/** A room-version lookup with a per-call memo, for serializeEvents. */
export function roomVersionLookup(s: Services): (roomId: string) => Promise<string> {
  const memo = new Map<string, string>();
  return async (roomId) => {
    let v = memo.get(roomId);
    if (!v) {
      // A room's version never changes: the room cache's snapshot answers when it holds the room.
      v = s.rooms.cache.get(roomId)?.version.id ?? (await s.rooms.store.getRoom(roomId))?.roomVersion ?? "1";
      memo.set(roomId, v);
    }
    return v;
  };
}

/**
 * The events serialized once for every reader (live fan-out of one room's new events), or undefined when
 * something in them depends on who reads: an erased sender's event (redacted for some readers only) or
 * unsigned data from the hooks (aggregations: current_user_participated). Each reader then gets its own
 * transaction_id through `forReader`; everything else is the same for all.
 */
export async function serializeForAnyReader(s: Services, roomVersionOf: (roomId: string) => Promise<string>, events: StoredEvent[]): Promise<ClientEvent[] | undefined> {
  if ((await erasedForReader(s, undefined, events)).size > 0) return undefined;
  for (const hook of s.extensions.unsigned) if ((await hook(s, undefined, events)).size > 0) return undefined;
  return serializeEvents(s, undefined, roomVersionOf, events);
}

/** A shared serialization of `e` (serializeForAnyReader) with the reader's transaction_id, when it sent it. */
export function forReader(r: Requester, e: StoredEvent, shared: ClientEvent): ClientEvent {
  const transactionId = transactionIdFor(r, e);
  // Object.assign, not a literal that starts with a spread (V8 gives each of those a hidden class of its own).
  return transactionId === undefined ? shared : Object.assign({}, shared, { unsigned: Object.assign({}, shared.unsigned, { transaction_id: transactionId }) });
}

/** The transaction id a reader sees on an event: only the device (or token) that sent it sees one. */
function transactionIdFor(r: Requester | undefined, e: StoredEvent): string | undefined {
  return r && e.txn && e.pdu.sender === r.userId && e.txn.deviceKey === deviceKeyOf(r) ? e.txn.txnId : undefined;
}
