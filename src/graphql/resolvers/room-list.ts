// The live room list on the GraphQL face: the `roomList(lists, subscriptions)` subscription, simplified
// sliding sync's engine (src/domain/sync/sliding, through sliding/live.ts) for web frontends. The first
// update is the whole windowed list with every room's data; later ones carry the lists' new windows and
// counts and only the rooms with something new — rooms entering a window, new events, changed summaries
// and unread counts. The typed inputs become the domain's SlidingRequest (checked as the REST body is).
import "reflect-metadata";
import { Arg, Resolver, Root, Subscription } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { notifierIterable } from "../subscriptions.ts";
import { toGraphqlError } from "../errors.ts";
import { Event } from "../types/event.ts";
import { UnreadCount } from "../types/push.ts";
import {
  RoomHero,
  RoomListInput,
  RoomListRoom,
  RoomListState,
  RoomListUpdate,
  RoomListWindow,
  RoomSubscriptionInput,
  StrippedStateEvent,
  type RequiredStateInput,
  type RoomListFiltersInput,
} from "../types/room-list.ts";
import { LiveSlidingSync } from "../../domain/sync/sliding/live.ts";
import { checkSlidingRequest, type ListFilters, type RequiredState, type SlidingRequest } from "../../domain/sync/sliding/request.ts";
import type { SlidingSyncResponse } from "../../domain/sync/sliding-sync.ts";
import type { ListResult } from "../../domain/sync/sliding/room-list.ts";
import type { ClientEvent } from "../../domain/events/format.ts";

type Json = Record<string, unknown>;

function requiredStateOf(list: RequiredStateInput[] | null | undefined): RequiredState {
  const out = new Map<string, Set<string>>();
  for (const { type, stateKey } of list ?? []) {
    let keys = out.get(type);
    if (!keys) out.set(type, (keys = new Set()));
    keys.add(stateKey);
  }
  return out;
}

function filtersOf(f: RoomListFiltersInput | null | undefined): ListFilters | undefined {
  if (!f) return undefined;
  const types = (v: string[] | null | undefined) => v?.map((t) => (t === "" ? null : t));
  const out: ListFilters = {};
  if (f.isDm != null) out.isDm = f.isDm;
  if (f.spaces != null) out.spaces = f.spaces;
  if (f.isEncrypted != null) out.isEncrypted = f.isEncrypted;
  if (f.isInvite != null) out.isInvite = f.isInvite;
  if (f.roomTypes != null) out.roomTypes = types(f.roomTypes);
  if (f.notRoomTypes != null) out.notRoomTypes = types(f.notRoomTypes);
  if (f.roomNameLike != null) out.roomNameLike = f.roomNameLike;
  if (f.tags != null) out.tags = f.tags;
  if (f.notTags != null) out.notTags = f.notTags;
  return out;
}

function requestOf(lists: RoomListInput[], subscriptions: RoomSubscriptionInput[]): SlidingRequest {
  return checkSlidingRequest({
    connId: "",
    lists: new Map(lists.map((l) => [l.key, { timelineLimit: l.timelineLimit, requiredState: requiredStateOf(l.requiredState), ranges: l.ranges.map((r) => [r.start, r.end] as [number, number]), filters: filtersOf(l.filters) }])),
    roomSubscriptions: new Map(subscriptions.map((x) => [x.roomId, { timelineLimit: x.timelineLimit, requiredState: requiredStateOf(x.requiredState) }])),
    extensions: {},
  });
}

const str = (v: unknown) => (typeof v === "string" ? v : null);
const int = (v: unknown) => (typeof v === "number" ? v : null);

function roomOf(roomId: string, r: Json): RoomListRoom {
  const events = (v: unknown) => ((v as ClientEvent[] | undefined) ?? []).map((e) => Event.from(e, roomId));
  return Object.assign(new RoomListRoom(), {
    roomId,
    initial: r.initial === true,
    name: str(r.name),
    avatar: str(r.avatar),
    heroes: Array.isArray(r.heroes) ? (r.heroes as Json[]).map((h) => Object.assign(new RoomHero(), { userId: String(h.user_id), displayName: str(h.displayname), avatarUrl: str(h.avatar_url) })) : null,
    isDm: r.is_dm === true,
    joinedCount: int(r.joined_count),
    invitedCount: int(r.invited_count),
    unread: UnreadCount.of({ notification_count: int(r.notification_count) ?? 0, highlight_count: int(r.highlight_count) ?? 0 }),
    bumpStamp: int(r.bump_stamp),
    timeline: events(r.timeline),
    limited: typeof r.limited === "boolean" ? r.limited : null,
    prevBatch: str(r.prev_batch),
    numLive: int(r.num_live),
    expandedTimeline: r.unstable_expanded_timeline === true,
    requiredState: events(r.required_state),
    inviteState: Array.isArray(r.invite_state)
      ? (r.invite_state as Json[]).map((e) => Object.assign(new StrippedStateEvent(), { type: String(e.type), stateKey: String(e.state_key ?? ""), sender: String(e.sender), content: (e.content ?? {}) as Json }))
      : null,
  });
}

function updateOf(res: SlidingSyncResponse): RoomListUpdate {
  const lists = Object.entries((res.lists ?? {}) as Record<string, ListResult>).map(([key, l]) =>
    Object.assign(new RoomListState(), { key, count: l.count, windows: l.ops.map((op) => Object.assign(new RoomListWindow(), { start: op.range[0], end: op.range[1], roomIds: op.room_ids })) }),
  );
  return Object.assign(new RoomListUpdate(), { lists, rooms: Object.entries(res.rooms).map(([id, r]) => roomOf(id, r)) });
}

@Resolver()
export class RoomListResolver {
  @Subscription(() => RoomListUpdate, {
    description:
      "The viewer's rooms as sorted (by last activity), filtered, windowed lists, live (simplified sliding sync's engine): first every " +
      "list's windows and every room's data, then each change — rooms entering or moving in a window, new events, changed names, " +
      "heroes, member and unread counts — with only the rooms that changed. `subscriptions` follow rooms outside the windows.",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphqlContext;
      let live: LiveSlidingSync;
      try {
        const r = await ctx.requester();
        live = new LiveSlidingSync(ctx.s, r, requestOf((args.lists as RoomListInput[]) ?? [], (args.subscriptions as RoomSubscriptionInput[] | null) ?? []));
      } catch (err) {
        // Subscription setup runs outside the resolver middleware: map the error here.
        throw toGraphqlError(err, ctx.s.log);
      }
      const next = async () => {
        const res = await live.next();
        return res ? [updateOf(res)] : [];
      };
      return notifierIterable(ctx.s, { wants: (n) => live.concerns(n), toPayloads: next, backlog: next, onClose: () => live.close() });
    },
  })
  roomList(
    @Root() update: RoomListUpdate,
    @Arg("lists", () => [RoomListInput]) _lists: RoomListInput[],
    @Arg("subscriptions", () => [RoomSubscriptionInput], { nullable: true }) _subscriptions: RoomSubscriptionInput[] | null,
  ): RoomListUpdate {
    return update;
  }
}
