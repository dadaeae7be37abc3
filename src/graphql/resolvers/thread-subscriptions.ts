// Thread subscriptions (MSC4306, with experimental_features.msc4306_enabled) on the GraphQL face, over
// the REST face's domain operations (src/domain/threads/subscriptions.ts): `Room.threadSubscription`
// (null when not subscribed), `subscribeToThread` and `unsubscribeFromThread`. Without the flag each
// answers M_UNRECOGNIZED, as REST has no such route then.
import "reflect-metadata";
import { Arg, Ctx, Field, FieldResolver, Mutation, ObjectType, Resolver, Root } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { Room } from "../types/room.ts";
import { MatrixError } from "../../domain/errors.ts";
import { checkThreadIds, findThreadSubscription, subscribeToThread, unsubscribeFromThread } from "../../domain/threads/subscriptions.ts";

@ObjectType({ description: "The viewer's subscription to a thread (MSC4306)." })
export class ThreadSubscription {
  @Field(() => String)
  threadRootId!: string;

  @Field(() => Boolean, { description: "Made automatically (because of an event of the thread), not by the user." })
  automatic!: boolean;
}

function requireEnabled(ctx: GraphqlContext): void {
  if (!ctx.s.config.experimental_features.msc4306_enabled) throw new MatrixError("M_UNRECOGNIZED", "Thread subscriptions are not enabled", 404);
}

@Resolver(() => Room)
export class RoomThreadSubscriptionResolver {
  @FieldResolver(() => ThreadSubscription, { nullable: true, description: "The viewer's subscription to the thread of `threadRootId` (MSC4306 GET .../subscription); null when not subscribed." })
  async threadSubscription(@Root() room: Room, @Arg("threadRootId", () => String) threadRootId: string, @Ctx() ctx: GraphqlContext): Promise<ThreadSubscription | null> {
    requireEnabled(ctx);
    const sub = await findThreadSubscription(ctx.s, await ctx.requester(), room.roomId, threadRootId);
    return sub ? Object.assign(new ThreadSubscription(), { threadRootId, automatic: sub.automatic }) : null;
  }
}

@Resolver()
export class ThreadSubscriptionMutationsResolver {
  @Mutation(() => Boolean, {
    description:
      "Subscribes the viewer to a thread (MSC4306 PUT .../subscription): manually, or automatically with `automaticCause`, the event of " +
      "the thread that caused it (IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION when the viewer unsubscribed after seeing it). Returns true.",
  })
  async subscribeToThread(
    @Arg("roomId", () => String) roomId: string,
    @Arg("threadRootId", () => String) threadRootId: string,
    @Arg("automaticCause", () => String, { nullable: true }) automaticCause: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    requireEnabled(ctx);
    checkThreadIds(roomId, threadRootId);
    await subscribeToThread(ctx.s, await ctx.requester(), roomId, threadRootId, { automatic: automaticCause ?? undefined });
    return true;
  }

  @Mutation(() => Boolean, { description: "Unsubscribes the viewer from a thread (MSC4306 DELETE .../subscription); true also when not subscribed." })
  async unsubscribeFromThread(@Arg("roomId", () => String) roomId: string, @Arg("threadRootId", () => String) threadRootId: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    requireEnabled(ctx);
    await unsubscribeFromThread(ctx.s, await ctx.requester(), roomId, threadRootId);
    return true;
  }
}
