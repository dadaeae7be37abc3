// Sync provider of the room-events stream: rooms.join (timeline, state, summary), rooms.invite (stripped
// invite_state), rooms.knock (knock_state) and rooms.leave (kicks, bans, rejections; archived rooms with
// include_leave), from the user's memberships. Timelines are the newest `limit` visible, matching events
// (gappy: `limited` + a `prev_batch` /messages accepts; over missing history, from after the hole:
// timeline-gaps.ts) — a room's whole history in the DAG's order (depth), what came since a token in
// arrival order — with the user's unsigned.membership at each; `state` is the state at the start of the
// timeline — on initial/full-state syncs and newly joined rooms all of it, with what the timeline does not
// show taken from the state at its end (state events filtered out or on a fork beside it), else the change
// between the since-token and the timeline start — with lazy-loaded members (timeline senders and the user, minus
// those the device already has); with MSC4222's state_after, the state at the timeline's end instead (all
// of it, or what changed since the token). The state at a timeline's start is read from the state group of its
// first event (never by undoing current state: once history forks the two differ). Reads are batched over
// all rooms: memberships, newest events (one windowed query), state groups, member counts: a few queries
// whatever the number of rooms.
// Spec: Client-Server API "Syncing", MSC4222 ("state_after"), "Lazy-loading room members", "Stripped state", "History visibility".
import type { Services } from "../../services.ts";
import type { StoredEvent } from "../../store/events.ts";
import { SyncReads, type UserMembership } from "../../store/sync-reads.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import { matchesFilter } from "../../filters/room-event-filter.ts";
import { partialStateView } from "../../federation/partial-state/flag.ts";
import { membersFromAuthEvents } from "../partial-state-members.ts";
import { DEFAULT_TIMELINE_LIMIT, includeRedundantMembers, lazyLoadMembers, pickEventFields, roomWanted, type SyncFilter } from "../../filters/sync-filter.ts";
import { filterVisible } from "../../rooms/visibility.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import { ignoredUsers, withoutIgnored } from "../../account-data/ignored-users.ts";
import { inviteRulesOf } from "../../account-data/invite-filter.ts";
import { serializeEvents } from "../../rooms/serialize.ts";
import { redactEvent as redactPdu } from "../../events/redaction.ts";
import { resolveRoomVersion } from "../../rooms/room-versions.ts";
import { streamToken } from "../../rooms/read.ts";
import { stateBeforeEvent } from "../../rooms/state-before.ts";
import { signOwnEvents } from "../../rooms/own-signature.ts";
import type { MembershipHint } from "../../rooms/membership-at-event.ts";
import { markGaps } from "../timeline-gaps.ts";
import type { Requester } from "../../accounts/requester.ts";
import type { JsonObject, SyncContext, SyncProvider } from "../types.ts";
import { STRIPPED_STATE_TYPES } from "../../rooms/stripped-state.ts";

const MEMBER = "m.room.member";

/** The room-events stream's position: the persisted-up-to position (src/domain/store/ids.ts). */
export function eventsPosition(s: Services): { get(): Promise<number> } {
  return { get: () => s.rooms.events.streamIds.current() };
}

interface RoomPlan {
  m: UserMembership;
  section: "join" | "leave";
  /** Timeline range (after, upTo]. */
  after: number;
  upTo: number;
  fullState: boolean;
  /** The room is new to the client in an incremental sync (joined since the token): its timeline is limited unless it shows every visible event. */
  newToClient: boolean;
}

/**
 * Whether a timeline is chosen in the DAG's order (depth, then stream position) rather than by stream
 * position: a room's whole history (initial syncs, rooms new to the client) is shown as the room's DAG
 * has it, so a fork's branch that arrived late sorts where it happened (as Synapse, and /messages'
 * neighbourhood); what happened since a token is shown in the order it arrived.
 */
const inDagOrder = (p: RoomPlan) => p.after === 0;

interface Timeline {
  /** Returned events, oldest first. */
  events: StoredEvent[];
  /**
   * Events the client asked for were left out: an older visible event the filter matches (events the
   * filter excludes are not left out), or, in a room new to the client, any visible event not shown.
   */
  limited: boolean;
  /** Some event of the range before the timeline's start was not shown (so state may have changed unseen). */
  gap: boolean;
  /** Every event looked at, newest first (down to the oldest one that decided the timeline). */
  scanned: StoredEvent[];
}

/** Renders stored events per the filter's event_format and event_fields. One batch for many rooms. */
export async function renderEvents(s: Services, r: Requester, filter: SyncFilter, events: StoredEvent[], versions: Map<string, string>, omitRoomId = true, timeline?: MembershipHint): Promise<JsonObject[]> {
  const lookup = async (roomId: string) => versions.get(roomId) ?? (await s.rooms.store.getRoom(roomId))?.roomVersion ?? "1";
  const federation = filter.event_format === "federation";
  // The response is serialized at once and never changed: events share their content objects. Timeline
  // events carry the reader's unsigned.membership at each (state events, often many, do not: as Synapse).
  const out = await serializeEvents(s, r, lookup, events, { omitRoomId: omitRoomId && !federation, shareContent: true, membership: timeline ?? false });
  if (federation) {
    // The PDU as federation carries it (redacted if it was), with its event id and the unsigned data
    // clients get (age, transaction_id ...), as Synapse's federation format: signed, as it is served.
    await signOwnEvents(s, events, lookup);
    const rendered = [];
    for (const [i, e] of events.entries()) {
      const unsigned = out[i]!.unsigned as JsonObject | undefined;
      const pdu = unsigned?.redacted_because ? redactPdu(e.pdu, resolveRoomVersion(await lookup(e.roomId))) : e.pdu;
      rendered.push(pickEventFields({ ...pdu, event_id: e.eventId, ...(unsigned ? { unsigned } : {}) } as JsonObject, filter.event_fields));
    }
    return rendered;
  }
  return out.map((e) => pickEventFields(e as unknown as JsonObject, filter.event_fields));
}

/** The state after a timeline: its start with the timeline's state events applied in order. */
function stateAtEnd(start: ReadonlyMap<string, string>, events: readonly StoredEvent[]): ReadonlyMap<string, string> {
  if (!events.some((e) => e.pdu.state_key !== undefined)) return start;
  const end = new Map(start);
  for (const e of events) if (e.pdu.state_key !== undefined) end.set(stateKeyOf(e.pdu.type, e.pdu.state_key), e.eventId);
  return end;
}

/**
 * Visible events for the user: events after a join they still hold need no state lookups. State events
 * that are the room's current state are always shown in a timeline, whatever the history visibility (as
 * Synapse: a member who rejoins sees who joined while they were away, even under `joined`).
 */
async function visibleEvents(s: Services, userId: string, m: UserMembership, events: StoredEvent[]): Promise<Set<string>> {
  const fast = m.membership === "join" ? await withoutIgnored(s, userId, events.filter((e) => e.streamOrdering >= m.streamOrdering)) : [];
  const slow = m.membership === "join" ? events.filter((e) => e.streamOrdering < m.streamOrdering) : events;
  const ok = new Set(fast.map((e) => e.eventId));
  for (const e of await filterVisible(s, userId, slow, m.membership)) ok.add(e.eventId);
  const hiddenState = slow.filter((e) => e.pdu.state_key !== undefined && !ok.has(e.eventId));
  if (hiddenState.length > 0) {
    const current = (await loadRoom(s, m.roomId))?.state;
    for (const e of hiddenState) if (current?.get(stateKeyOf(e.pdu.type, e.pdu.state_key!)) === e.eventId) ok.add(e.eventId);
  }
  return ok;
}

/** The most events one extra read of a timeline asks for. */
const MAX_TIMELINE_READ = 1000;

/**
 * Selects the timeline of one room from its newest events: the newest `limit` visible events the filter
 * matches, reading further back while filtering thinned them, and past the limit until it is known
 * whether a wanted event was left out (a few reads at most: past them the timeline counts as limited).
 */
async function selectTimeline(s: Services, userId: string, plan: RoomPlan, newest: StoredEvent[], fetched: number, limit: number, filter: SyncFilter): Promise<Timeline> {
  const picked: StoredEvent[] = [];
  let batch = newest;
  let exhausted = batch.length < fetched;
  let leftOut = false;
  // Every event of the range was looked at, down to its start.
  let complete = false;
  let oldestScanned: StoredEvent | undefined;
  const scanned: StoredEvent[] = [];
  for (let round = 0; ; round++) {
    const visible = await visibleEvents(s, userId, plan.m, batch);
    let stopped = false;
    for (const e of batch) {
      oldestScanned = e;
      scanned.push(e);
      const shown = visible.has(e.eventId);
      const wanted = shown && matchesFilter(filter.room.timeline, e.pdu, e.roomId);
      if (picked.length < limit) {
        if (wanted) picked.push(e);
        else if (plan.newToClient && shown) leftOut = true;
      } else if (wanted || (plan.newToClient && shown)) leftOut = true;
      if (picked.length >= limit && leftOut) {
        stopped = e !== batch[batch.length - 1] || !exhausted;
        break;
      }
    }
    if (leftOut && picked.length >= limit) {
      complete = !stopped;
      break;
    }
    if (exhausted || batch.length === 0) {
      complete = true;
      break;
    }
    if (round >= 5) break;
    const oldest = batch[batch.length - 1]!;
    const want = Math.min(MAX_TIMELINE_READ, Math.max(limit - picked.length, 1) * 4 * 2 ** round);
    batch = inDagOrder(plan)
      ? await s.rooms.events.pageInDag(plan.m.roomId, { after: plan.after, upTo: plan.upTo, below: { depth: Number(oldest.pdu.depth), stream: oldest.streamOrdering }, limit: want })
      : await s.rooms.events.page(plan.m.roomId, { after: plan.after, upTo: oldest.streamOrdering - 1, dir: "b", limit: want });
    exhausted = batch.length < want;
  }
  const first = picked[picked.length - 1];
  return { events: picked.reverse(), limited: leftOut || !complete, gap: !complete || (oldestScanned !== undefined && oldestScanned !== first), scanned };
}

/**
 * The user's member events in the state of these rooms at stream position `pos` (from the state group
 * of each room's last event up to `pos`), by room. A few batched reads, whatever the number of rooms.
 */
async function memberEventsAt(s: Services, reads: SyncReads, userId: string, roomIds: string[], pos: number): Promise<Map<string, StoredEvent>> {
  const out = new Map<string, StoredEvent>();
  if (roomIds.length === 0) return out;
  const groups = await reads.stateGroupsAt(roomIds, pos);
  const states = await s.rooms.stateGroups.getMany(groups.values());
  const ids = new Map<string, string>();
  for (const [roomId, group] of groups) {
    const id = states.get(group)?.get(stateKeyOf(MEMBER, userId));
    if (id) ids.set(roomId, id);
  }
  const events = await s.rooms.events.getMany(ids.values());
  for (const [roomId, id] of ids) {
    const e = events.get(id);
    if (e) out.set(roomId, e);
  }
  return out;
}

/**
 * The memberships as they were at stream position `to`: a row changed after it (by a commit that landed
 * after this sync took its token) is replaced by the member event in the room's state at `to`; a room
 * the user had no membership in at `to` is dropped.
 */
export async function membershipsAt(s: Services, reads: SyncReads, userId: string, ms: UserMembership[], to: number): Promise<UserMembership[]> {
  const later = ms.filter((m) => m.streamOrdering > to);
  if (later.length === 0) return ms;
  const at = await memberEventsAt(s, reads, userId, later.map((m) => m.roomId), to);
  const out: UserMembership[] = [];
  for (const m of ms) {
    if (m.streamOrdering <= to) out.push(m);
    else {
      const e = at.get(m.roomId);
      if (e) out.push({ ...m, membership: String(e.pdu.content.membership), eventId: e.eventId, streamOrdering: e.streamOrdering });
    }
  }
  return out;
}

/**
 * Rooms joined with partial state, as a sync that does not lazy-load members sees them (as Synapse does):
 * hidden until the state is complete, then shown as newly joined. Lazy-loading syncs see them at once.
 */
interface PartialRooms {
  partial: ReadonlySet<string>;
  completedAt: ReadonlyMap<string, number>;
}

/**
 * What each room of the user shows. `joinedBefore`: rooms whose membership changed since the token but
 * that were joined at it; `joinedAndLeft`: rooms left since the token that were joined since it (they
 * are new to the client: the leave comes with the room's full state, as a newly joined room).
 */
function plan(ctx: SyncContext, memberships: UserMembership[], to: number, joinedBefore: Set<string>, joinedAndLeft: Set<string>, partial?: PartialRooms): { rooms: RoomPlan[]; invites: UserMembership[]; knocks: UserMembership[] } {
  const from = ctx.since?.events;
  const rooms: RoomPlan[] = [];
  const invites: UserMembership[] = [];
  const knocks: UserMembership[] = [];
  for (const m of memberships) {
    if (!roomWanted(ctx.filter, m.roomId)) continue;
    const changed = from === undefined || m.streamOrdering > from;
    switch (m.membership) {
      case "join": {
        if (partial?.partial.has(m.roomId)) {
          ctx.partialJoinedRooms.add(m.roomId);
          break;
        }
        ctx.joinedRooms.add(m.roomId);
        const completed = partial?.completedAt.get(m.roomId);
        const shownAnew = from !== undefined && completed !== undefined && completed > from;
        if (from === undefined) rooms.push({ m, section: "join", after: 0, upTo: to, fullState: true, newToClient: false });
        else if (shownAnew || (changed && !joinedBefore.has(m.roomId))) {
          rooms.push({ m, section: "join", after: 0, upTo: to, fullState: true, newToClient: true });
          ctx.newlyJoinedRooms.add(m.roomId);
        }
        else rooms.push({ m, section: "join", after: from, upTo: to, fullState: ctx.fullState, newToClient: false });
        break;
      }
      case "invite":
        if (changed) invites.push(m);
        break;
      case "knock":
        if (changed) knocks.push(m);
        break;
      case "leave":
      case "ban":
        // A forgotten room stays out of initial syncs and later ones, but a leave made since the token is
        // still shown (as Synapse): the user's other devices learn the room was left however soon it was
        // forgotten (Complement's "Leave for forgotten room shows up in v2 incremental /sync").
        if (m.forgotten && !(from !== undefined && changed)) break;
        if (from === undefined) {
          if (ctx.filter.room.include_leave) rooms.push({ m, section: "leave", after: 0, upTo: m.streamOrdering, fullState: true, newToClient: false });
        } else if (changed && joinedAndLeft.has(m.roomId)) rooms.push({ m, section: "leave", after: 0, upTo: m.streamOrdering, fullState: true, newToClient: true });
        else if (changed) rooms.push({ m, section: "leave", after: from, upTo: m.streamOrdering, fullState: ctx.fullState, newToClient: false });
        else if (ctx.fullState && ctx.filter.room.include_leave) rooms.push({ m, section: "leave", after: m.streamOrdering, upTo: m.streamOrdering, fullState: true, newToClient: false });
        break;
    }
  }
  return { rooms, invites, knocks };
}

/**
 * The stripped state stored with an invite received over federation (`unsigned.invite_room_state`,
 * checked when it arrived) or with a knock on a remote room (`unsigned.knock_room_state`, from the
 * send_knock answer), each entry in the Client-Server stripped form.
 */
function receivedInviteState(invite: StoredEvent | undefined): JsonObject[] {
  const list = invite?.pdu.unsigned?.["invite_room_state"] ?? invite?.pdu.unsigned?.["knock_room_state"];
  if (!Array.isArray(list)) return [];
  return list.map((e: Record<string, unknown>) => ({ type: e.type, state_key: e.state_key, sender: e.sender, content: e.content }));
}

export async function strippedState(s: Services, reads: SyncReads, ms: UserMembership[], versions: Map<string, string>, r: Requester, filter: SyncFilter): Promise<Map<string, JsonObject[]>> {
  const out = new Map<string, JsonObject[]>();
  if (ms.length === 0) return out;
  const current = await reads.currentState(ms.map((m) => m.roomId));
  const ids: string[] = [];
  const idsByRoom = new Map<string, string[]>();
  for (const m of ms) {
    const state = current.get(m.roomId)!;
    const list = STRIPPED_STATE_TYPES.map((t) => state.get(stateKeyOf(t, ""))).filter((x): x is string => !!x);
    idsByRoom.set(m.roomId, list);
    ids.push(...list, m.eventId);
  }
  const events = await s.rooms.events.getMany(ids);
  // The membership event itself (invite or knock) is sent whole; its sender's member event stripped.
  const own = await renderEvents(s, r, filter, ms.map((m) => events.get(m.eventId)).filter((e): e is StoredEvent => !!e), versions, false);
  const senderIds = ms.map((m) => {
    const e = events.get(m.eventId);
    return e ? current.get(m.roomId)!.get(stateKeyOf(MEMBER, e.pdu.sender)) : undefined;
  });
  const senders = await s.rooms.events.getMany(senderIds.filter((x): x is string => !!x && x !== ""));
  ms.forEach((m, i) => {
    const strip = (e: StoredEvent | undefined) => (e ? { type: e.pdu.type, state_key: e.pdu.state_key ?? "", sender: e.pdu.sender, content: e.pdu.content } : undefined);
    // A room whose state this server does not hold (an invite received over federation): the stripped
    // state the inviting server sent with the invite.
    const list: JsonObject[] =
      current.get(m.roomId)!.size === 0
        ? receivedInviteState(events.get(m.eventId))
        : idsByRoom.get(m.roomId)!.map((id) => strip(events.get(id))).filter((x): x is NonNullable<typeof x> => !!x);
    const inviter = senderIds[i] && senderIds[i] !== m.eventId ? strip(senders.get(senderIds[i]!)) : undefined;
    if (inviter) list.push(inviter);
    const self = own.find((e) => e.event_id === m.eventId);
    if (self) list.push(self);
    out.set(m.roomId, list);
  });
  return out;
}

/**
 * Invites but those from users the user ignores, and those its invite rules ignore or block (MSC4155's
 * filter; invite blocking, spec v1.18: "MUST NOT be served over client synchronisation endpoints" — an
 * invite made before the block, or by a server admin, stays out too; Synapse 1.163 hides only ignored ones).
 */
export async function withoutIgnoredInviters(s: Services, userId: string, invites: UserMembership[]): Promise<UserMembership[]> {
  if (invites.length === 0) return invites;
  const [ignored, rules] = await Promise.all([ignoredUsers(s, userId), inviteRulesOf(s, userId)]);
  if (ignored.size === 0 && !rules) return invites;
  const events = await s.rooms.events.getMany(invites.map((m) => m.eventId));
  return invites.filter((m) => {
    const sender = events.get(m.eventId)?.pdu.sender ?? "";
    return !ignored.has(sender) && (rules?.(sender) ?? "allow") === "allow";
  });
}

export const eventsProvider: SyncProvider = {
  stream: "events",
  current: (s) => s.rooms.events.streamIds.now(),
  async collect(ctx, from, to) {
    const { s, requester: r, filter } = ctx;
    const userId = r.userId;
    const reads = new SyncReads(s.storage.sql);
    // A membership newer than `to` (committed after the token was taken) is read as it was at `to`.
    const memberships = await membershipsAt(s, reads, userId, await s.sync.streamCache.membershipsOf(userId, () => reads.membershipsOf(userId)), to);
    const versions = new Map(memberships.map((m) => [m.roomId, m.roomVersion]));
    // Rooms whose membership changed since the token but were joined then (e.g. a new display name).
    // Rooms left since the token whose leave replaced a join made since it: joined within the batch
    // unless the user was joined at the token too (the join replaced was then a profile change).
    const joinedBefore = new Set<string>();
    const joinedAndLeft = new Set<string>();
    if (from !== undefined) {
      const rejoined = memberships.filter((m) => m.membership === "join" && m.streamOrdering > from).map((m) => m.roomId);
      const left = memberships.filter((m) => (m.membership === "leave" || m.membership === "ban") && m.streamOrdering > from);
      const leaves = left.length > 0 ? await s.rooms.events.getMany(left.map((m) => m.eventId)) : new Map<string, StoredEvent>();
      const replaced = leaves.size > 0 ? await s.rooms.events.getMany([...leaves.values()].map((e) => e.replacesState).filter((x): x is string => !!x)) : new Map<string, StoredEvent>();
      const leftAfterJoining = left
        .filter((m) => {
          const prev = replaced.get(leaves.get(m.eventId)?.replacesState ?? "");
          return prev?.pdu.content.membership === "join" && prev.streamOrdering > from;
        })
        .map((m) => m.roomId);
      for (const roomId of leftAfterJoining) joinedAndLeft.add(roomId);
      for (const [roomId, e] of await memberEventsAt(s, reads, userId, [...rejoined, ...leftAfterJoining], from)) {
        if (e.pdu.content.membership !== "join") continue;
        joinedBefore.add(roomId);
        joinedAndLeft.delete(roomId);
      }
    }
    const partial = lazyLoadMembers(filter) ? undefined : await partialStateView(s);
    const { rooms, invites, knocks } = plan(ctx, memberships, to, joinedBefore, joinedAndLeft, partial);
    let added = false;

    // Invites and knocks: stripped state. Invites sent by users this user ignores (or that its invite
    // rules ignore or block) are not shown.
    const shownInvites = await withoutIgnoredInviters(s, userId, invites);
    for (const [list, section, field] of [[shownInvites, "invite", "invite_state"], [knocks, "knock", "knock_state"]] as const) {
      const stripped = await strippedState(s, reads, list, versions, r, filter);
      for (const [roomId, events] of stripped) {
        (ctx.result.rooms[section] as Record<string, unknown>)[roomId] = { [field]: { events } };
        added = true;
      }
    }
    if (rooms.length === 0) return added;

    // Timelines: the newest limit+1 events of every room in as few windowed queries as there are ranges.
    const limit = filter.room.timeline.limit ?? DEFAULT_TIMELINE_LIMIT;
    const fetch = limit + 1;
    const groups = new Map<string, RoomPlan[]>();
    for (const p of rooms) {
      const k = `${p.after}:${p.upTo}:${inDagOrder(p)}`;
      const g = groups.get(k);
      if (g) g.push(p);
      else groups.set(k, [p]);
    }
    // Rooms unchanged since the token, and the new events of the others, come from memory when it knows.
    const newestIds = new Map<string, string[]>();
    for (const g of groups.values()) {
      if (limit === 0 && g[0]!.after === g[0]!.upTo) continue;
      const { after, upTo } = g[0]!;
      // (Memory holds each room's latest events by stream position: DAG-ordered reads go to storage.)
      const dag = inDagOrder(g[0]!);
      const { found, misses } = dag ? { found: new Map<string, string[]>(), misses: g.map((p) => p.m.roomId) } : await s.sync.streamCache.newestEventIdsOf(s, g.map((p) => p.m.roomId), after, upTo, fetch);
      for (const [roomId, ids] of found) newestIds.set(roomId, ids);
      if (misses.length > 0) for (const [roomId, ids] of await reads.newestEventIds(misses, after, upTo, fetch, dag ? "dag" : "stream")) newestIds.set(roomId, ids);
    }
    const loaded = await s.rooms.events.getMany([...newestIds.values()].flat());
    const timelines = new Map<string, Timeline>();
    for (const p of rooms) {
      const newest = (newestIds.get(p.m.roomId) ?? []).map((id) => loaded.get(id)!).filter(Boolean);
      timelines.set(p.m.roomId, await selectTimeline(s, userId, p, newest, fetch, limit, filter));
    }
    await markGaps(s, timelines, from);

    // A leave out of band (an invite rejected, the room's state never held here) is the leave's whole
    // timeline, as in Synapse.
    const leaveEvents = await s.rooms.events.getMany(rooms.filter((p) => p.section === "leave").map((p) => p.m.eventId));
    for (const p of rooms) {
      const e = p.section === "leave" ? leaveEvents.get(p.m.eventId) : undefined;
      if (e?.outlier && timelines.get(p.m.roomId)!.events.length === 0 && e.streamOrdering > p.after) timelines.set(p.m.roomId, { events: [e], limited: false, gap: false, scanned: [e] });
    }

    // Which rooms appear: all on initial/full-state syncs and for membership changes; else those with events.
    const shown = rooms.filter((p) => p.fullState || p.section === "leave" || timelines.get(p.m.roomId)!.events.length > 0);

    // The state at the start of each timeline: the state before its first event, from that event's state
    // group (held by the room's snapshot when it is the current one: no query). The state at the end of
    // the range (for an empty timeline, its start too; for a full-state room, what the timeline does not
    // show of it): the room's snapshot when it is not ahead of `to` (no query), else the group of its last
    // event up to `to`; or the leave's group.
    const joinedShown = shown.filter((p) => p.section === "join");
    const atEnd = new Map<string, ReadonlyMap<string, string>>();
    const endGroup = new Map<string, number>();
    const unsettled: string[] = [];
    for (const p of shown) {
      const roomId = p.m.roomId;
      if (!p.fullState && timelines.get(roomId)!.events.length > 0) continue;
      if (p.section === "leave") {
        const group = leaveEvents.get(p.m.eventId)?.stateGroup;
        if (group !== undefined && group !== null) endGroup.set(roomId, group);
        continue;
      }
      const snap = s.rooms.cache.get(roomId);
      if (snap?.position !== undefined && snap.position <= to) atEnd.set(roomId, snap.state);
      else unsettled.push(roomId);
    }
    if (unsettled.length > 0) for (const [roomId, group] of await reads.stateGroupsAt(unsettled, to)) endGroup.set(roomId, group);
    const known = new Map<number, ReadonlyMap<string, string>>();
    const firstGroups: number[] = [];
    for (const p of shown) {
      const group = timelines.get(p.m.roomId)!.events[0]?.stateGroup;
      if (group === undefined || group === null) continue;
      const snap = s.rooms.cache.get(p.m.roomId);
      if (snap?.stateGroup === group) known.set(group, snap.state);
      else firstGroups.push(group);
    }
    const groupStates = await s.rooms.stateGroups.getMany([...firstGroups, ...endGroup.values()]);
    for (const [group, state] of known) groupStates.set(group, state);
    const atStart = new Map<string, ReadonlyMap<string, string>>();
    const endOf = (roomId: string) => {
      const group = endGroup.get(roomId);
      return atEnd.get(roomId) ?? (group !== undefined ? groupStates.get(group) : undefined);
    };
    for (const p of shown) {
      const roomId = p.m.roomId;
      const first = timelines.get(roomId)!.events[0];
      if (!first) {
        atStart.set(roomId, endOf(roomId) ?? new Map<string, string>());
        continue;
      }
      const group = first.stateGroup;
      const after = group !== undefined && group !== null ? groupStates.get(group) : undefined;
      atStart.set(roomId, stateBeforeEvent(first, after ?? new Map<string, string>()));
    }
    // A full-state room's `state`: the state at the timeline's start for what the timeline changes, the
    // state at the range's end for the rest (as Synapse's union of both less the timeline): state events
    // the timeline does not show — filtered out, or on a branch of the DAG beside it — still reach the
    // client (Complement TestSyncOmitsStateChangeOnFilteredEvents).
    const fullStateOf = (p: RoomPlan): ReadonlyMap<string, string> => {
      const roomId = p.m.roomId;
      const start = atStart.get(roomId)!;
      const end = endOf(roomId);
      const events = timelines.get(roomId)!.events;
      if (!end || events.length === 0) return start;
      if (ctx.stateAfter) return end;
      const touched = new Set(events.filter((e) => e.pdu.state_key !== undefined).map((e) => stateKeyOf(e.pdu.type, e.pdu.state_key!)));
      const out = new Map(start);
      for (const [k, id] of end) if (!touched.has(k)) out.set(k, id);
      return out;
    };
    const fullStates = new Map(shown.filter((p) => p.fullState).map((p) => [p.m.roomId, fullStateOf(p)]));

    // The state entries to send per room.
    const lazy = lazyLoadMembers(filter);
    const redundant = includeRedundantMembers(filter);
    const deviceKey = `${userId}|${r.deviceId ?? ""}`;
    if (from === undefined || ctx.fullState) s.sync.sentMembers.delete(deviceKey);
    let sent = s.sync.sentMembers.get(deviceKey);
    if (!sent) s.sync.sentMembers.set(deviceKey, (sent = new Map()));
    const stateIds = new Map<string, string[]>();
    const stateKeys = new Map<string, Set<string>>();
    // Where gappy incremental timelines' gaps start: the state at the since-token, per room.
    const limitedAfter = shown.filter((p) => !p.fullState && timelines.get(p.m.roomId)!.gap);
    const sinceGroups = new Map<string, number>();
    for (const after of new Set(limitedAfter.map((p) => p.after))) {
      const rooms = limitedAfter.filter((p) => p.after === after).map((p) => p.m.roomId);
      for (const [roomId, group] of await reads.stateGroupsAt(rooms, after)) sinceGroups.set(roomId, group);
    }
    const sinceStates = await s.rooms.stateGroups.getMany(sinceGroups.values());
    // Rooms joined with partial state: the senders' member events their own events cite.
    const partialRooms = lazy ? (await partialStateView(s)).partial : new Set<string>();
    const cited = await membersFromAuthEvents(
      s,
      shown.filter((p) => partialRooms.has(p.m.roomId)).map((p) => ({ roomId: p.m.roomId, state: atStart.get(p.m.roomId)!, events: timelines.get(p.m.roomId)!.events })),
    );
    for (const p of shown) {
      const roomId = p.m.roomId;
      const tl = timelines.get(roomId)!;
      // MSC4222 (state_after): the state at the timeline's end, which its state events move on from its start.
      const start = ctx.stateAfter ? stateAtEnd(atStart.get(roomId)!, tl.events) : atStart.get(roomId)!;
      let entries: [string, string][];
      if (p.fullState) entries = [...fullStates.get(roomId)!];
      else if (tl.gap) {
        const group = sinceGroups.get(roomId);
        const before = (group !== undefined ? sinceStates.get(group) : undefined) ?? new Map<string, string>();
        entries = [...start].filter(([k, id]) => before.get(k) !== id);
      } else entries = ctx.stateAfter ? [...start].filter(([k, id]) => atStart.get(roomId)!.get(k) !== id) : [];
      if (lazy) {
        // The members the timeline needs: its senders whose membership the timeline does not bring before
        // their first event, and on a full-state sync the user (as Synapse); plus — in a gappy sync —
        // every membership that changed in the gap (joins and leaves the client would otherwise never see).
        const wanted = new Set<string>(p.fullState ? [userId] : []);
        const inTimeline = new Set<string>();
        // (With state_after, every sender's: the state is the one after the timeline.)
        for (const e of tl.events) {
          if (!inTimeline.has(e.pdu.sender)) wanted.add(e.pdu.sender);
          if (e.pdu.type === MEMBER && e.pdu.state_key !== undefined && !ctx.stateAfter) inTimeline.add(e.pdu.state_key);
        }
        const members = [...wanted].map((u) => [stateKeyOf(MEMBER, u), start.get(stateKeyOf(MEMBER, u)) ?? cited.get(roomId)?.get(u)] as const).filter((x): x is [string, string] => !!x[1]);
        const gap = p.fullState ? [] : entries.filter(([k]) => k.startsWith(MEMBER + "\u0000") && !wanted.has(k.slice(MEMBER.length + 1)));
        entries = [...entries.filter(([k]) => !k.startsWith(MEMBER + "\u0000")), ...gap, ...members];
        let seen = sent.get(roomId);
        if (!seen) sent.set(roomId, (seen = new Map()));
        const seenNow = seen;
        if (!redundant) entries = entries.filter(([k, id]) => !k.startsWith(MEMBER + "\u0000") || seenNow.get(k) !== id);
        for (const [k, id] of entries) if (k.startsWith(MEMBER + "\u0000")) seenNow.set(k, id);
        for (const e of tl.events) if (e.pdu.type === MEMBER) seenNow.set(stateKeyOf(MEMBER, e.pdu.state_key!), e.eventId);
      }
      stateIds.set(roomId, entries.map(([, id]) => id));
      stateKeys.set(roomId, new Set(entries.map(([k]) => k)));
    }

    // Summaries (joined rooms): on initial/full syncs and when membership moved in the room. Unnamed
    // rooms get heroes; with lazy-loaded members the heroes' member events come along in `state` (as
    // Synapse), unless the client has them already.
    const needSummary = joinedShown.filter(
      (p) => p.fullState || timelines.get(p.m.roomId)!.events.some((e) => e.pdu.type === MEMBER) || [...stateKeys.get(p.m.roomId)!].some((k) => k.startsWith(MEMBER + "\u0000")),
    );
    const summarized = new Set(needSummary);
    const members = needSummary.length > 0 ? await reads.activeMembers(needSummary.map((p) => p.m.roomId)) : new Map<string, { userId: string; membership: string }[]>();
    const nameKeys = [stateKeyOf("m.room.name", ""), stateKeyOf("m.room.canonical_alias", "")];
    // The name and alias as of the end of the timeline (as Synapse's summary).
    const nameAt = (roomId: string, key: string) => {
      let id = (fullStates.get(roomId) ?? atStart.get(roomId)!).get(key);
      for (const e of timelines.get(roomId)!.events) if (e.pdu.state_key !== undefined && stateKeyOf(e.pdu.type, e.pdu.state_key) === key) id = e.eventId;
      return id;
    };
    const names = await s.rooms.events.getMany(needSummary.flatMap((p) => nameKeys.map((k) => nameAt(p.m.roomId, k)).filter((x): x is string => !!x)));
    const heroes = new Map<string, string[]>();
    for (const p of needSummary) {
      const roomId = p.m.roomId;
      const start = atStart.get(roomId)!;
      const [nameId, aliasId] = nameKeys.map((k) => nameAt(roomId, k));
      const nonEmpty = (id: string | undefined, field: string) => {
        const v = id ? names.get(id)?.pdu.content[field] : undefined;
        return typeof v === "string" && v !== "";
      };
      if (nonEmpty(nameId, "name") || nonEmpty(aliasId, "alias")) continue;
      const list = members.get(roomId) ?? [];
      const others = (m: string) => list.filter((x) => x.membership === m && x.userId !== userId).map((x) => x.userId);
      const chosen = [...others("join"), ...others("invite")].slice(0, 5);
      heroes.set(roomId, chosen);
      if (!lazy) continue;
      const seen = sent.get(roomId)!;
      const inTimeline = new Set(timelines.get(roomId)!.events.filter((e) => e.pdu.type === MEMBER).map((e) => e.pdu.state_key));
      for (const hero of chosen) {
        const key = stateKeyOf(MEMBER, hero);
        const id = start.get(key);
        if (!id || stateKeys.get(roomId)!.has(key) || inTimeline.has(hero) || (!redundant && seen.get(key) === id)) continue;
        stateIds.get(roomId)!.push(id);
        seen.set(key, id);
      }
    }
    // Set again: the cache weighs the record by the members it now holds.
    if (lazy) s.sync.sentMembers.set(deviceKey, sent);
    const stateEvents = await s.rooms.events.getMany([...stateIds.values()].flat());

    // Serialize every room's timeline and state in two batches.
    const allTimeline = shown.flatMap((p) => timelines.get(p.m.roomId)!.events);
    const stateLists = new Map<string, StoredEvent[]>();
    for (const p of shown) {
      const list = stateIds.get(p.m.roomId)!.map((id) => stateEvents.get(id)).filter((e): e is StoredEvent => !!e);
      stateLists.set(p.m.roomId, list.filter((e) => matchesFilter(filter.room.state, e.pdu, e.roomId)));
    }
    const allState = [...stateLists.values()].flat();
    // unsigned.membership: `join` after a join the user still holds (as visibleEvents takes it), else looked up.
    const joinedAt = new Map(shown.filter((p) => p.m.membership === "join").map((p) => [p.m.roomId, p.m.streamOrdering]));
    const renderedTimeline = await renderEvents(s, r, filter, allTimeline, versions, true, (e) => (e.streamOrdering >= (joinedAt.get(e.roomId) ?? Infinity) ? "join" : undefined));
    const renderedState = await renderEvents(s, r, filter, allState, versions);
    const tIndex = new Map(allTimeline.map((e, i) => [e.eventId, renderedTimeline[i]!]));
    const sIndex = new Map(allState.map((e, i) => [e.eventId, renderedState[i]!]));


    for (const p of shown) {
      const roomId = p.m.roomId;
      const tl = timelines.get(roomId)!;
      const oldest = tl.events[0];
      const timeline = {
        events: tl.events.map((e) => tIndex.get(e.eventId)!),
        limited: tl.limited,
        // A timeline from the room's start that left nothing out points /messages at its own end, as
        // Synapse: paginating from it serves these events again, down to the room's start, with an `end`.
        // (The timeline's lowest stream position: in the DAG's order its first event need not have it.)
        prev_batch: streamToken(oldest && (tl.limited || p.after !== 0) ? Math.min(...tl.events.map((e) => e.streamOrdering)) - 1 : p.upTo),
      };
      const state = { events: stateLists.get(roomId)!.map((e) => sIndex.get(e.eventId)!) };
      if (p.section === "join") {
        const room = ctx.joinedRoom(roomId);
        room.timeline = timeline;
        room.state = state;
        if (summarized.has(p)) {
          const list: { userId: string; membership: string }[] = members.get(roomId) ?? [];
          const chosen = heroes.get(roomId);
          room.summary = {
            ...(chosen ? { "m.heroes": chosen } : {}),
            "m.joined_member_count": list.filter((x) => x.membership === "join").length,
            "m.invited_member_count": list.filter((x) => x.membership === "invite").length,
          };
        }
      } else {
        ctx.result.rooms.leave[roomId] = { state, timeline, account_data: { events: [] } };
      }
      added = true;
    }

    // Whose presence an incremental sync brings along (presence.ts): the members of rooms new to the
    // client, and who joined (was invited, knocks) in the member events shown — unless they left after.
    if (from !== undefined) {
      for (const p of joinedShown) {
        if (p.newToClient) for (const x of members.get(p.m.roomId) ?? []) if (x.membership === "join") ctx.presenceOf.add(x.userId);
        for (const e of [...stateLists.get(p.m.roomId)!, ...timelines.get(p.m.roomId)!.events]) {
          if (e.pdu.type !== MEMBER || e.pdu.state_key === undefined) continue;
          const membership = e.pdu.content.membership;
          if (membership === "join" || membership === "invite" || membership === "knock") ctx.presenceOf.add(e.pdu.state_key);
          else ctx.presenceOf.delete(e.pdu.state_key);
        }
      }
      ctx.presenceOf.delete(userId);
    }
    return added;
  },
};
