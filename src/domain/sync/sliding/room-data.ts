// What simplified sliding sync sends of each room (MSC4186 "Room results", as Synapse): for a room new to
// the connection (`initial`), its latest `timeline_limit` visible events in the DAG's order, the state
// its required_state asks for, name, avatar, heroes (unnamed rooms), member counts, bump_stamp; for a room
// sent before, what changed since: new events (`limited` when more came than the limit; all of the
// latest with `unstable_expanded_timeline` when the limit grew), state entries changed since and those a
// grown required_state now asks for, and name, avatar, heroes and counts when they changed. required_state
// reads "*" wildcards, "$ME" and, for members, "$LAZY": the senders and targets of the timeline's events
// (on a gappy or first answer), or every membership change (on a continuous one), leaving out member
// events the connection already holds. Invited and knocking users get the stripped state instead.
// `num_live` counts the timeline's events since the request's position; `bump_stamp` is the position of
// the newest event of a bumping type (for a room the user is not joined to, of their membership).
// Reads are batched over the rooms where they are more than a lookup in the room's snapshot.
import type { Services } from "../../services.ts";
import type { Requester } from "../../accounts/requester.ts";
import type { StoredEvent } from "../../store/events.ts";
import { SyncReads, type UserMembership } from "../../store/sync-reads.ts";
import { SlidingReads } from "../../store/sliding-reads.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import { filterVisible } from "../../rooms/visibility.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import { streamToken } from "../../rooms/read.ts";
import { DEFAULT_SYNC_FILTER } from "../../filters/sync-filter.ts";
import { renderEvents, strippedState } from "../providers/events.ts";
import type { JsonObject } from "../types.ts";
import { addedState, lazyMembers, stateWanted, type RoomConfig } from "./request.ts";
import type { RoomSent } from "./connections.ts";

/** Event types whose arrival moves a room's bump_stamp (MSC4186's list, as Synapse's). */
export const BUMP_TYPES = ["m.room.create", "m.room.message", "m.room.encrypted", "m.sticker", "m.call.invite", "m.poll.start", "m.beacon_info"];

const MEMBER = "m.room.member";
const MAX_HEROES = 5;
/** The most reads one timeline selection makes before it counts as limited. */
const MAX_ROUNDS = 4;

export interface RoomPlan {
  m: UserMembership;
  config: RoomConfig;
  prev: RoomSent | undefined;
  isDm: boolean;
}

export interface RoomOutcome {
  /** The room's entry in the answer; undefined when an incremental answer has nothing new for it. */
  result: JsonObject | undefined;
  sent: RoomSent;
}

interface Timeline {
  events: StoredEvent[];
  limited: boolean;
}

/**
 * The newest `limit` events of the room visible to the user in (after, upTo]: by the DAG's order for a
 * whole history (after = 0), by arrival since a position. Reads a little more than asked, to know
 * whether something was left out.
 */
async function selectTimeline(s: Services, userId: string, m: UserMembership, after: number, upTo: number, limit: number, prefetched?: StoredEvent[]): Promise<Timeline> {
  if (limit === 0 || after >= upTo) return { events: [], limited: false };
  const picked: StoredEvent[] = [];
  let below: StoredEvent | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const want = Math.min(1000, (limit + 1) * 2 ** round);
    const batch =
      round === 0 && prefetched
        ? prefetched
        : after === 0
        ? await s.rooms.events.pageInDag(m.roomId, { after, upTo, below: below ? { depth: Number(below.pdu.depth), stream: below.streamOrdering } : { depth: Number.MAX_SAFE_INTEGER, stream: Number.MAX_SAFE_INTEGER }, limit: want })
        : await s.rooms.events.page(m.roomId, { after, upTo: below ? below.streamOrdering - 1 : upTo, dir: "b", limit: want });
    const visible = new Set((await filterVisible(s, userId, batch, m.membership)).map((e) => e.eventId));
    for (const e of batch) if (visible.has(e.eventId)) picked.push(e);
    if (picked.length > limit) return { events: picked.slice(0, limit).reverse(), limited: true };
    if (batch.length < want) return { events: picked.reverse(), limited: false };
    below = batch[batch.length - 1];
  }
  return { events: picked.reverse(), limited: true };
}

/** The state key (type, key) of a state event. */
const keyOf = (e: StoredEvent) => stateKeyOf(e.pdu.type, e.pdu.state_key!);
const splitKey = (k: string): [string, string] => {
  const i = k.indexOf("\u0000");
  return [k.slice(0, i), k.slice(i + 1)];
};

/** A stripped state event (type, state_key, sender, content): the invite or knock itself is stripped too, as Synapse. */
const stripEvent = (e: JsonObject): JsonObject => ({ type: e.type, state_key: e.state_key, sender: e.sender, content: e.content });

export async function roomOutcomes(s: Services, r: Requester, plans: RoomPlan[], to: number, since: number | undefined): Promise<Map<string, RoomOutcome>> {
  const out = new Map<string, RoomOutcome>();
  const userId = r.userId;
  const reads = new SyncReads(s.storage.sql);
  const versions = new Map(plans.map((p) => [p.m.roomId, p.m.roomVersion]));

  // Invites and knocks: stripped state only.
  const stripped = plans.filter((p) => p.m.membership === "invite" || p.m.membership === "knock");
  const strippedStates = await strippedState(s, reads, stripped.map((p) => p.m), versions, r, DEFAULT_SYNC_FILTER);
  for (const p of stripped) {
    out.set(p.m.roomId, {
      result: { initial: true, invite_state: (strippedStates.get(p.m.roomId) ?? []).map(stripEvent), bump_stamp: Math.max(p.m.streamOrdering, 0), notification_count: 0, highlight_count: 0 },
      sent: { upTo: to, config: p.config, lazyMembers: new Map() },
    });
  }
  const rooms = plans.filter((p) => p.m.membership !== "invite" && p.m.membership !== "knock");
  if (rooms.length === 0) return out;

  // Whether each room is new to the connection: never sent, or joined since it was last sent.
  const memberEvents = await s.rooms.events.getMany(rooms.map((p) => p.m.eventId));
  const replaced = await s.rooms.events.getMany([...memberEvents.values()].map((e) => e.replacesState).filter((x): x is string => !!x));
  const initial = new Set<string>();
  for (const p of rooms) {
    if (!p.prev) initial.add(p.m.roomId);
    else if (p.m.membership === "join" && p.m.streamOrdering > p.prev.upTo) {
      const before = replaced.get(memberEvents.get(p.m.eventId)?.replacesState ?? "");
      if (before?.pdu.content.membership !== "join") initial.add(p.m.roomId);
    }
  }

  // The state each room's answer ends at: current state for joined rooms, the state after the
  // membership for the others (a leave, a ban).
  const endState = new Map<string, ReadonlyMap<string, string>>();
  const leftGroups = new Map<string, number>();
  const joinedRooms = rooms.filter((p) => p.m.membership === "join");
  const snapshots = await Promise.all(joinedRooms.map((p) => loadRoom(s, p.m.roomId)));
  joinedRooms.forEach((p, i) => endState.set(p.m.roomId, snapshots[i]?.state ?? new Map()));
  for (const p of rooms) {
    if (p.m.membership === "join") continue;
    const g = memberEvents.get(p.m.eventId)?.stateGroup;
    if (g !== undefined && g !== null) leftGroups.set(p.m.roomId, g);
  }
  const leftStates = await s.rooms.stateGroups.getMany(leftGroups.values());
  for (const [roomId, g] of leftGroups) endState.set(roomId, leftStates.get(g) ?? new Map());
  // The state as the connection last had it (rooms sent before), by position.
  const prevState = new Map<string, ReadonlyMap<string, string>>();
  const byPos = new Map<number, string[]>();
  for (const p of rooms) if (p.prev && !initial.has(p.m.roomId)) byPos.set(p.prev.upTo, [...(byPos.get(p.prev.upTo) ?? []), p.m.roomId]);
  for (const [pos, ids] of byPos) {
    const groups = await reads.stateGroupsAt(ids, pos);
    const states = await s.rooms.stateGroups.getMany(groups.values());
    for (const id of ids) prevState.set(id, states.get(groups.get(id)!) ?? new Map());
  }

  // Timelines: the first read of every room's in a few batched queries (one per range and order), more
  // reads only for rooms whose visible events it did not fill.
  const timelines = new Map<string, Timeline>();
  const expanded = new Set<string>();
  const ranges = new Map<string, { after: number; upTo: number; limit: number }>();
  for (const p of rooms) {
    const roomId = p.m.roomId;
    const upTo = p.m.membership === "join" ? to : Math.min(p.m.streamOrdering, to);
    const grew = p.prev !== undefined && !initial.has(roomId) && p.config.timelineLimit > p.prev.config.timelineLimit;
    if (grew) expanded.add(roomId);
    ranges.set(roomId, { after: initial.has(roomId) || grew ? 0 : p.prev!.upTo, upTo, limit: p.config.timelineLimit });
  }
  const firstReads = new Map<string, StoredEvent[]>();
  const batches = new Map<string, string[]>();
  for (const [roomId, x] of ranges) {
    if (x.limit === 0 || x.after >= x.upTo) continue;
    const k = `${x.after}:${x.upTo}:${x.limit}`;
    batches.set(k, [...(batches.get(k) ?? []), roomId]);
  }
  for (const ids of batches.values()) {
    const { after, upTo, limit } = ranges.get(ids[0]!)!;
    const found = await reads.newestEventIds(ids, after, upTo, limit + 1, after === 0 ? "dag" : "stream");
    const loaded = await s.rooms.events.getMany([...found.values()].flat());
    for (const id of ids) firstReads.set(id, (found.get(id) ?? []).map((e) => loaded.get(e)).filter((e): e is StoredEvent => !!e));
  }
  for (const p of rooms) {
    const x = ranges.get(p.m.roomId)!;
    timelines.set(p.m.roomId, await selectTimeline(s, userId, p.m, x.after, x.upTo, x.limit, firstReads.get(p.m.roomId)));
  }

  // State entries to send, per room.
  const stateIds = new Map<string, string[]>();
  const changedKeys = new Map<string, Set<string>>();
  const sentMembers = new Map<string, Map<string, string>>();
  for (const p of rooms) {
    const roomId = p.m.roomId;
    const end = endState.get(roomId) ?? new Map<string, string>();
    const tl = timelines.get(roomId)!;
    const rs = p.config.requiredState;
    const lazy = lazyMembers(rs);
    const isInitial = initial.has(roomId);
    const ids = new Map<string, string>();
    const changed = new Set<string>();
    if (isInitial) {
      for (const [k, id] of end) {
        const [type, key] = splitKey(k);
        if (stateWanted(rs, type, key, userId)) ids.set(k, id);
      }
    } else {
      const before = prevState.get(roomId) ?? new Map<string, string>();
      for (const [k, id] of end) if (before.get(k) !== id) changed.add(k);
      for (const k of changed) {
        const [type, key] = splitKey(k);
        if (stateWanted(rs, type, key, userId)) ids.set(k, end.get(k)!);
      }
      // A required_state grown since the room was sent: what it now asks for, whatever changed.
      const added = addedState(p.prev!.config.requiredState, rs);
      if (added.length > 0) {
        const grownOnly = new Map(added.map(([t, k]) => [t, new Set([k])]));
        for (const [k, id] of end) {
          const [type, key] = splitKey(k);
          if (stateWanted(grownOnly, type, key, userId)) ids.set(k, id);
        }
      }
    }
    const members = new Map(isInitial ? [] : p.prev!.lazyMembers);
    if (lazy) {
      const wanted = new Set<string>();
      for (const e of tl.events) {
        wanted.add(e.pdu.sender);
        if (e.pdu.type === MEMBER && e.pdu.state_key !== undefined) wanted.add(e.pdu.state_key);
      }
      // A continuous answer brings every membership change (the client keeps its member list).
      if (!isInitial && !tl.limited) for (const k of changed) if (k.startsWith(MEMBER + "\u0000")) wanted.add(splitKey(k)[1]);
      for (const u of wanted) {
        const k = stateKeyOf(MEMBER, u);
        const id = end.get(k);
        if (!id) continue;
        if (members.get(u) !== id) ids.set(k, id);
        members.set(u, id);
      }
    }
    // Every member event sent, however it was asked for ($ME, a named user, "*"), is one the client holds:
    // $LAZY leaves it out next time while it is unchanged.
    for (const [k, id] of ids) if (k.startsWith(MEMBER + "\u0000")) members.set(splitKey(k)[1], id);
    stateIds.set(roomId, [...ids.values()]);
    changedKeys.set(roomId, changed);
    sentMembers.set(roomId, members);
  }

  // Name, avatar, heroes and member counts.
  const nameKey = stateKeyOf("m.room.name", "");
  const avatarKey = stateKeyOf("m.room.avatar", "");
  const metaIds: string[] = [];
  for (const p of rooms) {
    const end = endState.get(p.m.roomId)!;
    for (const k of [nameKey, avatarKey]) if (end?.get(k)) metaIds.push(end.get(k)!);
  }
  const meta = await s.rooms.events.getMany(metaIds);
  const needMembers = rooms.filter((p) => p.m.membership === "join" && (initial.has(p.m.roomId) || [...changedKeys.get(p.m.roomId)!].some((k) => k.startsWith(MEMBER + "\u0000"))));
  const activeMembers = needMembers.length > 0 ? await reads.activeMembers(needMembers.map((p) => p.m.roomId)) : new Map<string, { userId: string; membership: string }[]>();
  const heroIds: string[] = [];
  const heroesOf = new Map<string, string[]>();
  for (const p of needMembers) {
    const name = meta.get(endState.get(p.m.roomId)!.get(nameKey) ?? "")?.pdu.content.name;
    if (typeof name === "string" && name !== "") continue;
    const list = activeMembers.get(p.m.roomId) ?? [];
    const pick = (ms: string) => list.filter((x) => x.membership === ms && x.userId !== userId).map((x) => x.userId);
    const chosen = [...pick("join"), ...pick("invite")].slice(0, MAX_HEROES);
    heroesOf.set(p.m.roomId, chosen);
    for (const u of chosen) {
      const id = endState.get(p.m.roomId)!.get(stateKeyOf(MEMBER, u));
      if (id) heroIds.push(id);
    }
  }
  const heroEvents = await s.rooms.events.getMany(heroIds);

  // bump_stamp: the timeline's newest bumping event, else (when it must be sent) the room's.
  const bumpNeeded = rooms.filter((p) => {
    const tl = timelines.get(p.m.roomId)!;
    const inTimeline = tl.events.some((e) => BUMP_TYPES.includes(e.pdu.type) && e.streamOrdering > 0);
    return !inTimeline && (p.m.membership !== "join" || tl.limited || initial.has(p.m.roomId));
  });
  const joinedBump = bumpNeeded.filter((p) => p.m.membership === "join").map((p) => p.m.roomId);
  const bumps = joinedBump.length > 0 ? await new SlidingReads(s.storage.sql).lastPositions(joinedBump, to, BUMP_TYPES) : new Map<string, number>();

  // Render every room's timeline and state in two batches.
  const allTimeline = rooms.flatMap((p) => timelines.get(p.m.roomId)!.events);
  const stateEvents = await s.rooms.events.getMany([...stateIds.values()].flat());
  const allState = [...stateIds.values()].flat().map((id) => stateEvents.get(id)).filter((e): e is StoredEvent => !!e);
  const joinedAt = new Map(rooms.filter((p) => p.m.membership === "join").map((p) => [p.m.roomId, p.m.streamOrdering]));
  const renderedTimeline = await renderEvents(s, r, DEFAULT_SYNC_FILTER, allTimeline, versions, true, (e) => (e.streamOrdering >= (joinedAt.get(e.roomId) ?? Infinity) ? "join" : undefined));
  const renderedState = await renderEvents(s, r, DEFAULT_SYNC_FILTER, allState, versions);
  const tIndex = new Map(allTimeline.map((e, i) => [e.eventId, renderedTimeline[i]!]));
  const sIndex = new Map(allState.map((e, i) => [e.eventId, renderedState[i]!]));

  for (const p of rooms) {
    const roomId = p.m.roomId;
    const tl = timelines.get(roomId)!;
    const isInitial = initial.has(roomId);
    const changed = changedKeys.get(roomId)!;
    const end = endState.get(roomId)!;
    const res: JsonObject = {};
    if (isInitial) res.initial = true;
    if (expanded.has(roomId)) res.unstable_expanded_timeline = true;
    if (isInitial || changed.has(nameKey)) {
      const name = meta.get(end.get(nameKey) ?? "")?.pdu.content.name;
      if (typeof name === "string" && name !== "") res.name = name;
    }
    if (isInitial || changed.has(avatarKey)) {
      const url = meta.get(end.get(avatarKey) ?? "")?.pdu.content.url;
      if (typeof url === "string" && url !== "") res.avatar = url;
    }
    const heroes = heroesOf.get(roomId);
    if (heroes && heroes.length > 0) {
      res.heroes = heroes.map((u) => {
        const c = heroEvents.get(end.get(stateKeyOf(MEMBER, u)) ?? "")?.pdu.content;
        return { user_id: u, ...(typeof c?.displayname === "string" ? { displayname: c.displayname } : {}), ...(typeof c?.avatar_url === "string" ? { avatar_url: c.avatar_url } : {}) };
      });
    }
    const list = activeMembers.get(roomId);
    if (list) {
      res.joined_count = list.filter((x) => x.membership === "join").length;
      res.invited_count = list.filter((x) => x.membership === "invite").length;
    }
    if (p.isDm) res.is_dm = true;
    const state = stateIds.get(roomId)!.map((id) => sIndex.get(id)).filter((e): e is JsonObject => !!e);
    if (state.length > 0) res.required_state = state;
    if (tl.events.length > 0) res.timeline = tl.events.map((e) => tIndex.get(e.eventId)!);
    // Something new: any field so far but is_dm, which every answer about a DM carries.
    const hasNew = Object.keys(res).some((k) => k !== "is_dm");
    if (p.config.timelineLimit > 0) {
      res.limited = tl.limited;
      const upTo = p.m.membership === "join" ? to : Math.min(p.m.streamOrdering, to);
      res.prev_batch = streamToken(tl.events.length > 0 ? Math.min(...tl.events.map((e) => e.streamOrdering)) - 1 : upTo);
      let live = 0;
      if (since !== undefined) for (let i = tl.events.length - 1; i >= 0 && tl.events[i]!.streamOrdering > since; i--) live++;
      res.num_live = live;
    }
    const inTimeline = [...tl.events].reverse().find((e) => BUMP_TYPES.includes(e.pdu.type) && e.streamOrdering > 0);
    const bump = inTimeline?.streamOrdering ?? (bumpNeeded.includes(p) ? (p.m.membership === "join" ? bumps.get(roomId) : undefined) ?? p.m.streamOrdering : undefined);
    if (bump !== undefined) res.bump_stamp = Math.max(bump, 0);
    res.notification_count = 0;
    res.highlight_count = 0;
    // The config the room is remembered with: a smaller timeline_limit replaces a larger one only when
    // the answer was limited by it (the client then holds no more than it), as Synapse.
    const prevConfig = p.prev?.config;
    const config = prevConfig && !isInitial && p.config.timelineLimit < prevConfig.timelineLimit && !tl.limited ? { ...p.config, timelineLimit: prevConfig.timelineLimit } : p.config;
    out.set(roomId, { result: hasNew ? res : undefined, sent: { upTo: to, config, lazyMembers: sentMembers.get(roomId)! } });
  }
  return out;
}
