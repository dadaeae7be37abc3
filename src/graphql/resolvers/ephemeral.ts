// Typing, receipts, presence and the live sync on the GraphQL face: mutations `setTyping`, `markRead`
// (a receipt, optionally moving the read marker), `setPresence`; query `presence(userId)`; subscriptions
// `typing(roomId)`, `receipts(roomId)` and `syncUpdates(since, filter)` (the /sync deltas, typed: to-device
// messages, device list changes and one-time key counts too), all
// fed by the notifier that wakes /sync (src/graphql/subscriptions.ts) and calling the REST face's domain
// operations with the same checks.
import "reflect-metadata";
import { Arg, Ctx, Field, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from "type-graphql";
import { GraphQLJSONObject } from "../types/json.ts";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import type { Requester } from "../../domain/accounts/requester.ts";
import type { ClientEvent } from "../../domain/events/format.ts";
import { parseTypingBody, setTyping } from "../../domain/typing/set-typing.ts";
import { LiveTyping } from "../../domain/typing/live-typing.ts";
import { LiveReceipts } from "../../domain/receipts/live-receipts.ts";
import { markRead } from "../../domain/receipts/read-markers.ts";
import { getPresence, parsePresenceBody, setPresence, type PresenceContent } from "../../domain/presence/presence.ts";
import { resolveSyncFilter } from "../../domain/filters/user-filters.ts";
import { LiveSync } from "../../domain/sync/live-sync.ts";
import type { SyncResponse } from "../../domain/sync/sync.ts";
import type { JsonObject } from "../../domain/sync/types.ts";
import type { ReceiptRow } from "../../domain/store/receipts.ts";
import type { GraphqlContext } from "../context.ts";
import { Event } from "../types/event.ts";
import { Timestamp } from "../types/scalars.ts";
import { AccountDataEntry } from "./sync.ts";
import { ThreadUnreadCount, UnreadCount } from "../types/push.ts";
import { DeviceListChanges, KeyCount, ToDeviceEvent } from "../types/e2ee.ts";
import { notifierIterable } from "../subscriptions.ts";
import { toGraphqlError } from "../errors.ts";

@ObjectType({ description: "Who is typing in a room now." })
export class TypingUpdate {
  @Field(() => String)
  roomId!: string;

  @Field(() => [String], { description: "The user IDs typing now (empty: nobody)." })
  userIds!: string[];
}

@ObjectType({ description: "A read receipt: `userId` has read up to `eventId` (in a thread, or unthreaded)." })
export class Receipt {
  @Field(() => String)
  eventId!: string;

  @Field(() => String)
  userId!: string;

  @Field(() => String, { description: "m.read, or m.read.private (only ever the viewer's own)." })
  receiptType!: string;

  @Field(() => String, { nullable: true, description: "`main`, a thread root's event ID, or null for an unthreaded receipt." })
  threadId!: string | null;

  @Field(() => Timestamp)
  ts!: number;
}

@ObjectType({ description: "Receipts of a room that changed." })
export class ReceiptsUpdate {
  @Field(() => String)
  roomId!: string;

  @Field(() => [Receipt])
  receipts!: Receipt[];
}

@ObjectType({ description: "A user's presence (spec: Presence)." })
export class PresenceStatus {
  @Field(() => String)
  userId!: string;

  @Field(() => String, { description: "online, unavailable or offline." })
  presence!: string;

  @Field(() => Int, { nullable: true, description: "Milliseconds since the user was last active." })
  lastActiveAgo!: number | null;

  @Field(() => Boolean, { nullable: true })
  currentlyActive!: boolean | null;

  @Field(() => String, { nullable: true })
  statusMsg!: string | null;

  static from(userId: string, c: PresenceContent): PresenceStatus {
    return Object.assign(new PresenceStatus(), {
      userId,
      presence: c.presence,
      lastActiveAgo: c.last_active_ago ?? null,
      currentlyActive: c.currently_active ?? null,
      statusMsg: c.status_msg ?? null,
    });
  }
}

@ObjectType({ description: "What changed in one joined room (a /sync rooms.join entry)." })
export class JoinedRoomSync {
  @Field(() => String)
  roomId!: string;

  @Field(() => [Event], { description: "New timeline events, oldest first." })
  timeline!: Event[];

  @Field(() => Boolean, { description: "Events were left out before `timeline` (fetch them with prevBatch)." })
  limited!: boolean;

  @Field(() => String, { description: "A /messages token to page back from the start of `timeline`." })
  prevBatch!: string;

  @Field(() => [Event], { description: "State at the start of `timeline` (all of it when the room is new to the viewer)." })
  state!: Event[];

  @Field(() => [String], { nullable: true, description: "Who is typing now, when that changed; null otherwise." })
  typing!: string[] | null;

  @Field(() => [Receipt], { description: "Receipts that changed." })
  receipts!: Receipt[];

  @Field(() => [AccountDataEntry])
  accountData!: AccountDataEntry[];

  @Field(() => UnreadCount, { description: "Unread notifications and highlights now (the main timeline only when the filter asks for unread_thread_notifications)." })
  unreadNotifications!: UnreadCount;

  @Field(() => [ThreadUnreadCount], { description: "Per thread, when the filter asks for unread_thread_notifications." })
  unreadThreadNotifications!: ThreadUnreadCount[];
}

@ObjectType({ description: "One /sync delta: everything that changed for the viewer up to `nextBatch`." })
export class SyncUpdate {
  @Field(() => String, { description: "Pass as `since` (here or to /sync) to continue after this update without missing anything." })
  nextBatch!: string;

  @Field(() => [JoinedRoomSync])
  joinedRooms!: JoinedRoomSync[];

  @Field(() => [String], { description: "Rooms the viewer was newly invited to (details in `json`)." })
  invitedRoomIds!: string[];

  @Field(() => [String], { description: "Rooms the viewer left or was removed from (details in `json`)." })
  leftRoomIds!: string[];

  @Field(() => [AccountDataEntry], { description: "Global account data that changed." })
  accountData!: AccountDataEntry[];

  @Field(() => [PresenceStatus])
  presence!: PresenceStatus[];

  @Field(() => [ToDeviceEvent], {
    description:
      "To-device messages for the viewer's device, oldest first (at most 100 an update; more follow at once), each " +
      "delivered once per subscription. The server deletes them once acknowledged, as /sync's since does: by " +
      "`acknowledgeToDevice(upTo: nextBatch)`, or by subscribing (or calling /sync) with a `since` past them; a " +
      "subscription from an older position delivers the unacknowledged ones again.",
  })
  toDevice!: ToDeviceEvent[];

  @Field(() => DeviceListChanges, { description: "Users whose device lists or cross-signing keys changed, and users who no longer share an encrypted room with the viewer." })
  deviceLists!: DeviceListChanges;

  @Field(() => [KeyCount], { description: "The viewer's device's unclaimed one-time keys per algorithm now." })
  oneTimeKeyCounts!: KeyCount[];

  @Field(() => [String], { nullable: true, description: "The algorithms of the device's unused fallback keys now (null: the delta does not say)." })
  unusedFallbackKeyTypes!: string[] | null;

  @Field(() => GraphQLJSONObject, { description: "The same delta as the /sync response body (to-device, device lists, stripped state ...)." })
  json!: Record<string, unknown>;
}

function receiptsOf(content: Record<string, Record<string, Record<string, { ts: number; thread_id?: string }>>>): Receipt[] {
  const out: Receipt[] = [];
  for (const [eventId, byType] of Object.entries(content))
    for (const [receiptType, byUser] of Object.entries(byType))
      for (const [userId, r] of Object.entries(byUser)) out.push(Object.assign(new Receipt(), { eventId, userId, receiptType, threadId: r.thread_id ?? null, ts: r.ts }));
  return out;
}

const receiptFromRow = (r: ReceiptRow) =>
  Object.assign(new Receipt(), { eventId: r.eventId, userId: r.userId, receiptType: r.receiptType, threadId: r.threadId === "" ? null : r.threadId, ts: r.ts });

const events = (list: JsonObject[], roomId: string) => list.map((e) => Event.from(e as unknown as ClientEvent, roomId));
const entries = (list: JsonObject[], roomId: string | null) => list.map((e) => Object.assign(new AccountDataEntry(), { type: e.type as string, roomId, content: e.content as Record<string, unknown> }));

/** The typed form of a /sync response. */
export function syncUpdateOf(res: SyncResponse): SyncUpdate {
  const joinedRooms = Object.entries(res.rooms.join).map(([roomId, room]) => {
    const typing = room.ephemeral.events.find((e) => e.type === "m.typing");
    const receipts = room.ephemeral.events.filter((e) => e.type === "m.receipt").flatMap((e) => receiptsOf(e.content as never));
    return Object.assign(new JoinedRoomSync(), {
      roomId,
      timeline: events(room.timeline.events, roomId),
      limited: room.timeline.limited,
      prevBatch: room.timeline.prev_batch,
      state: events(room.state.events, roomId),
      typing: typing ? ((typing.content as { user_ids: string[] }).user_ids ?? []) : null,
      receipts,
      accountData: entries(room.account_data.events, roomId),
      unreadNotifications: UnreadCount.of(room.unread_notifications),
      unreadThreadNotifications: Object.entries(room.unread_thread_notifications ?? {}).map(([threadId, c]) => Object.assign(new ThreadUnreadCount(), { threadId, count: UnreadCount.of(c) })),
    });
  });
  return Object.assign(new SyncUpdate(), {
    nextBatch: res.next_batch,
    joinedRooms,
    invitedRoomIds: Object.keys(res.rooms.invite),
    leftRoomIds: Object.keys(res.rooms.leave),
    accountData: entries(res.account_data.events, null),
    presence: res.presence.events.map((e) => PresenceStatus.from(e.sender as string, e.content as unknown as PresenceContent)),
    toDevice: (res.to_device?.events ?? []).map((e) => Object.assign(new ToDeviceEvent(), { sender: e.sender, type: e.type, content: e.content })),
    deviceLists: Object.assign(new DeviceListChanges(), { changed: res.device_lists?.changed ?? [], left: res.device_lists?.left ?? [] }),
    oneTimeKeyCounts: KeyCount.list(res.device_one_time_keys_count ?? {}),
    unusedFallbackKeyTypes: res.device_unused_fallback_key_types ?? null,
    json: res as unknown as Record<string, unknown>,
  });
}

/** Authenticates a subscription and runs its checks, mapping errors (setup runs outside the middleware). */
async function subscriber(ctx: GraphqlContext, check?: (s: Services, r: Requester) => Promise<void>): Promise<Requester> {
  try {
    const r = await ctx.requester();
    if (check) await check(ctx.s, r);
    return r;
  } catch (err) {
    throw toGraphqlError(err, ctx.s.log);
  }
}

@Resolver()
export class EphemeralResolver {
  @Mutation(() => Boolean, { description: "Says the viewer is typing in a room for `timeout` ms (default 30 s, at most 120 s), or stopped (PUT /rooms/{roomId}/typing/{userId})." })
  async setTyping(
    @Arg("roomId", () => String) roomId: string,
    @Arg("typing", () => Boolean) typing: boolean,
    @Arg("timeout", () => Int, { nullable: true }) timeout: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    const r = await ctx.requester();
    await setTyping(ctx.s, r, roomId, r.userId, parseTypingBody(timeout === null ? { typing } : { typing, timeout }));
    return true;
  }

  @Mutation(() => Boolean, {
    description:
      "Marks `eventId` read (POST /rooms/{roomId}/receipt): an m.read receipt, or m.read.private when `private`; in `threadId` " +
      "(`main` or a thread root) or unthreaded; with `fullyRead` the read marker (m.fully_read) moves there too. Returns whether a receipt was stored.",
  })
  async markRead(
    @Arg("roomId", () => String) roomId: string,
    @Arg("eventId", () => String) eventId: string,
    @Arg("threadId", () => String, { nullable: true }) threadId: string | null,
    @Arg("private", () => Boolean, { nullable: true }) isPrivate: boolean | null,
    @Arg("fullyRead", () => Boolean, { nullable: true }) fullyRead: boolean | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    const done = await markRead(ctx.s, await ctx.requester(), roomId, eventId, { threadId, private: isPrivate, fullyRead });
    ctx.loaders.unreadCounts.clear(roomId);
    return done;
  }

  @Mutation(() => PresenceStatus, { description: "Sets the viewer's presence and status message (PUT /presence/{userId}/status)." })
  async setPresence(
    @Arg("presence", () => String) presence: string,
    @Arg("statusMsg", () => String, { nullable: true }) statusMsg: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PresenceStatus> {
    const r = await ctx.requester();
    await setPresence(ctx.s, r, r.userId, parsePresenceBody({ presence, status_msg: statusMsg }));
    return PresenceStatus.from(r.userId, await getPresence(ctx.s, r, r.userId));
  }

  @Query(() => PresenceStatus, { description: "A user's presence: the viewer's own or a room-mate's (GET /presence/{userId}/status)." })
  async presence(@Arg("userId", () => String) userId: string, @Ctx() ctx: GraphqlContext): Promise<PresenceStatus> {
    return PresenceStatus.from(userId, await getPresence(ctx.s, await ctx.requester(), userId));
  }

  @Subscription(() => TypingUpdate, {
    description: "Who is typing in a room the viewer is joined to: the current list first, then each change (expiries included).",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphqlContext;
      const roomId = args.roomId as string;
      let live: LiveTyping | undefined;
      await subscriber(ctx, async (s, r) => void (live = await LiveTyping.start(s, r, roomId)));
      const next = async () => {
        const userIds = await live!.next();
        return userIds ? [Object.assign(new TypingUpdate(), { roomId, userIds })] : [];
      };
      return notifierIterable(ctx.s, { wants: (n) => n.kind === "stream" && live!.concerns(n.n), toPayloads: next, backlog: next });
    },
  })
  typing(@Root() update: TypingUpdate, @Arg("roomId", () => String) _roomId: string): TypingUpdate {
    return update;
  }

  @Subscription(() => ReceiptsUpdate, {
    description:
      "Receipts of a room the viewer is joined to: first all current ones (possibly none), then each change as it is sent " +
      "(the viewer's private receipts included, nobody else's).",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphqlContext;
      const roomId = args.roomId as string;
      let live: LiveReceipts | undefined;
      await subscriber(ctx, async (s, r) => void (live = await LiveReceipts.start(s, r, roomId)));
      const update = (rows: ReceiptRow[]) => Object.assign(new ReceiptsUpdate(), { roomId, receipts: rows.map(receiptFromRow) });
      return notifierIterable(ctx.s, {
        wants: (n) => n.kind === "stream" && live!.concerns(n.n),
        toPayloads: async (n) => {
          const rows = n.kind === "stream" ? await live!.next(n.n.position) : [];
          return rows.length > 0 ? [update(rows)] : [];
        },
        backlog: async () => [update(await live!.backlog())],
      });
    },
  })
  receipts(@Root() update: ReceiptsUpdate, @Arg("roomId", () => String) _roomId: string): ReceiptsUpdate {
    return update;
  }

  @Subscription(() => SyncUpdate, {
    description:
      "The viewer's /sync deltas as they happen (the notifier that wakes /sync, no polling). Without `since` the first " +
      "update is an initial sync; each update carries `nextBatch`: resubscribe with it to continue without a gap. " +
      "`filter` is a filter ID or JSON, as /sync's.",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphqlContext;
      let live: LiveSync | undefined;
      await subscriber(ctx, async (s, r) => {
        live = new LiveSync(s, r, await resolveSyncFilter(s, r, (args.filter as string | null) ?? undefined), (args.since as string | null) ?? undefined);
      });
      const next = async () => {
        const res = await live!.next();
        return res ? [syncUpdateOf(res)] : [];
      };
      return notifierIterable(ctx.s, { wants: (n) => live!.concerns(n), toPayloads: next, backlog: next });
    },
  })
  syncUpdates(
    @Root() update: SyncUpdate,
    @Arg("since", () => String, { nullable: true }) _since: string | null,
    @Arg("filter", () => String, { nullable: true }) _filter: string | null,
  ): SyncUpdate {
    return update;
  }
}
