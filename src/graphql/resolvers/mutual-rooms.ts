// The rooms the viewer shares with another user on the GraphQL face: `mutualRooms(userId, from)`, the
// domain operation of GET /_matrix/client/v1/mutual_rooms (spec v1.19, MSC2666), a page at a time.
import "reflect-metadata";
import { Arg, Ctx, Field, Int, ObjectType, Query, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { mutualRooms } from "../../domain/rooms/mutual-rooms.ts";
import { PageInfo } from "../types/connection.ts";

@ObjectType({ description: "Rooms the viewer and another user are both joined to (one page)." })
export class MutualRoomsPage {
  @Field(() => [String])
  roomIds!: string[];

  @Field(() => Int, { description: "How many rooms they share in all." })
  count!: number;

  @Field(() => String, { nullable: true, description: "Pass as `from` for the next page; null on the last." })
  nextBatch!: string | null;

  @Field(() => PageInfo, { description: "Where the page lies, as on every connection: endCursor is nextBatch (pass it as `from`)." })
  pageInfo(): PageInfo {
    return PageInfo.ofNextBatch(this.nextBatch);
  }
}

@Resolver()
export class MutualRoomsResolver {
  @Query(() => MutualRoomsPage, { description: "The rooms the viewer shares with `userId` (GET /mutual_rooms)." })
  async mutualRooms(@Arg("userId", () => String) userId: string, @Arg("from", () => String, { nullable: true }) from: string | null, @Ctx() ctx: GraphqlContext): Promise<MutualRoomsPage> {
    const page = await mutualRooms(ctx.s, await ctx.requester(), userId, from ?? undefined);
    return Object.assign(new MutualRoomsPage(), { roomIds: page.joined, count: page.count, nextBatch: page.next_batch ?? null });
  }
}
