// Room tags and account-data deletion on the GraphQL face, over the REST face's domain operations
// (src/domain/account-data/account-data.ts): `Room.tags`; `setRoomTag`, `deleteRoomTag` and
// `deleteAccountData` (MSC3391, with experimental_features.msc3391_enabled) mutations.
// Spec: Client-Server API "Room Tagging", "Client Config"; MSC3391.
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Float, Mutation, Resolver, Root } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { Room } from "../types/room.ts";
import { RoomTag } from "../types/tags.ts";
import { deleteAccountData, deleteTag, getTags, setTag } from "../../domain/account-data/account-data.ts";

@Resolver(() => Room)
export class RoomTagsResolver {
  @FieldResolver(() => [RoomTag], { description: "The viewer's tags on this room (GET /user/{userId}/rooms/{roomId}/tags)." })
  async tags(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<RoomTag[]> {
    const r = await ctx.requester();
    const { tags } = await getTags(ctx.s, r, r.userId, room.roomId);
    return Object.entries(tags).map(([name, content]) =>
      Object.assign(new RoomTag(), { name, order: typeof content.order === "number" ? content.order : null, content }),
    );
  }
}

@Resolver()
export class RoomTagMutationsResolver {
  @Mutation(() => Boolean, { description: "Adds or replaces one of the viewer's tags on a room (PUT /user/{userId}/rooms/{roomId}/tags/{tag})." })
  async setRoomTag(
    @Arg("roomId", () => String) roomId: string,
    @Arg("tag", () => String) tag: string,
    @Arg("order", () => Float, { nullable: true, description: "0 to 1." }) order: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    const r = await ctx.requester();
    await setTag(ctx.s, r, r.userId, roomId, tag, order != null ? { order } : {});
    return true;
  }

  @Mutation(() => Boolean, { description: "Removes one of the viewer's tags from a room (DELETE /user/{userId}/rooms/{roomId}/tags/{tag})." })
  async deleteRoomTag(@Arg("roomId", () => String) roomId: string, @Arg("tag", () => String) tag: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    const r = await ctx.requester();
    await deleteTag(ctx.s, r, r.userId, roomId, tag);
    return true;
  }

  @Mutation(() => Boolean, {
    description:
      "Deletes the viewer's account data of `type` (in `roomId` when given), MSC3391: /sync then reports it with empty content. " +
      "M_UNRECOGNIZED unless the server enables experimental_features.msc3391_enabled.",
  })
  async deleteAccountData(@Arg("type", () => String) type: string, @Arg("roomId", () => String, { nullable: true }) roomId: string | null, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    const r = await ctx.requester();
    await deleteAccountData(ctx.s, r, r.userId, roomId ?? undefined, type);
    return true;
  }
}
