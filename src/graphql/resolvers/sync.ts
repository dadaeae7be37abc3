// Per-user data and live updates on the GraphQL face: `viewer.accountData(type, roomId)` and
// `setAccountData` (the domain operations of GET/PUT /user/{userId}/[rooms/{roomId}/]account_data/{type}),
// and the `roomTimeline(roomId, since)` subscription: new events of a room the viewer can see, pushed by
// the notifier that wakes /sync (src/graphql/subscriptions.ts), each with a cursor to resume from.
import "reflect-metadata";
import { Arg, Ctx, Field, FieldResolver, Mutation, ObjectType, Resolver, Root, Subscription } from "type-graphql";
import { GraphQLJSONObject } from "../types/json.ts";
import { getAccountData, setAccountData } from "../../domain/account-data/account-data.ts";
import { MatrixError } from "../../domain/errors.ts";
import { parseStreamToken, streamToken } from "../../domain/rooms/read.ts";
import { checkLiveAccess, timelineAfter, type LiveEvent } from "../../domain/rooms/live-timeline.ts";
import { eventsPosition } from "../../domain/sync/providers/events.ts";
import type { GraphqlContext } from "../context.ts";
import { Event } from "../types/event.ts";
import { Viewer } from "../types/viewer.ts";
import { notifierIterable } from "../subscriptions.ts";
import { toGraphqlError } from "../errors.ts";
import { shareable } from "../shared-execution.ts";
import type { ClientEvent } from "../../domain/events/format.ts";

@ObjectType({ description: "One account data entry of the viewer: global (roomId null) or for one room." })
export class AccountDataEntry {
  @Field(() => String)
  type!: string;

  @Field(() => String, { nullable: true })
  roomId!: string | null;

  @Field(() => GraphQLJSONObject)
  content!: Record<string, unknown>;
}

@ObjectType({ description: "A new event in a room's timeline, with the stream token just after it." })
export class TimelineUpdate {
  @Field(() => Event)
  event!: Event;

  @Field(() => String, { description: "Pass as `since` to resume after this event without missing any; also a /messages token." })
  cursor!: string;
}

/**
 * One update per serialized event: live-timeline.ts hands every reader of one visibility class the same
 * event object, so its subscribers get the same update and share its execution (shared-execution.ts).
 */
const updates = new WeakMap<ClientEvent, TimelineUpdate>();
function updateOf(e: LiveEvent, roomId: string): TimelineUpdate {
  let u = updates.get(e.event);
  if (!u) updates.set(e.event, (u = shareable(Object.assign(new TimelineUpdate(), { event: Event.from(e.event, roomId), cursor: streamToken(e.streamOrdering) }))));
  return u;
}

@Resolver(() => Viewer)
export class ViewerAccountDataResolver {
  @FieldResolver(() => GraphQLJSONObject, { nullable: true, description: "The viewer's account data of `type` (in `roomId` when given); null when unset." })
  async accountData(
    @Root() viewer: Viewer,
    @Arg("type", () => String) type: string,
    @Arg("roomId", () => String, { nullable: true }) roomId: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Record<string, unknown> | null> {
    try {
      return await getAccountData(ctx.s, viewer.requester, viewer.userId, roomId ?? undefined, type);
    } catch (err) {
      if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND") return null;
      throw err;
    }
  }
}

@Resolver()
export class SyncResolver {
  @Mutation(() => AccountDataEntry, { description: "Sets the viewer's account data (PUT /user/{userId}/[rooms/{roomId}/]account_data/{type})." })
  async setAccountData(
    @Arg("type", () => String) type: string,
    @Arg("content", () => GraphQLJSONObject) content: Record<string, unknown>,
    @Arg("roomId", () => String, { nullable: true }) roomId: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<AccountDataEntry> {
    const r = await ctx.requester();
    await setAccountData(ctx.s, r, r.userId, roomId ?? undefined, type, content);
    return Object.assign(new AccountDataEntry(), { type, roomId, content });
  }

  @Subscription(() => TimelineUpdate, {
    description:
      "New events of a room the viewer may read, as they are stored (the notifier that wakes /sync). With `since` " +
      "(a cursor or a /sync or /messages token) the events after it come first, so a resubscribing client misses nothing.",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphqlContext;
      const roomId = args.roomId as string;
      let r;
      let last: number;
      try {
        r = await ctx.requester();
        await checkLiveAccess(ctx.s, r, roomId);
        last = args.since ? parseStreamToken(args.since as string, "since") : await eventsPosition(ctx.s).get();
      } catch (err) {
        // Subscription setup runs outside the resolver middleware: map the error here.
        throw toGraphqlError(err, ctx.s.log);
      }
      const toUpdates = (events: LiveEvent[]) =>
        events
          .filter((e) => e.streamOrdering > last)
          .map((e) => {
            last = e.streamOrdering;
            return updateOf(e, roomId);
          });
      return notifierIterable(ctx.s, {
        wants: (n) => n.kind === "event" && n.n.roomId === roomId,
        toPayloads: async (n) => (n.kind === "event" && n.n.streamOrdering > last ? toUpdates(await timelineAfter(ctx.s, r, roomId, last, n.n.streamOrdering)) : []),
        backlog: args.since ? async () => toUpdates(await timelineAfter(ctx.s, r, roomId, last)) : undefined,
      });
    },
  })
  roomTimeline(
    @Root() update: TimelineUpdate,
    @Arg("roomId", () => String) _roomId: string,
    @Arg("since", () => String, { nullable: true }) _since: string | null,
  ): TimelineUpdate {
    return update;
  }
}
