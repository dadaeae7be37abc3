// The room directory over GraphQL, each field over the domain operation of its REST twin: publicRooms
// (GET/POST /publicRooms, a connection whose cursors are since tokens), Room.aliases (GET
// /rooms/{roomId}/aliases, batched by DataLoader), Room.canonicalAlias (from the room summary), and the
// mutations createAlias / deleteAlias (PUT/DELETE /directory/room/{roomAlias}), setRoomDirectoryVisibility
// (PUT /directory/list/room/{roomId}) and upgradeRoom (POST /rooms/{roomId}/upgrade).
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { createAlias, deleteAlias } from "../../domain/directory/aliases.ts";
import { setDirectoryVisibility } from "../../domain/directory/visibility.ts";
import { listPublicRooms } from "../../domain/directory/public-rooms.ts";
import { upgradeRoom } from "../../domain/rooms/upgrade.ts";
import { roomNotVisible } from "../../domain/rooms/batch-reads.ts";
import type { GraphqlContext } from "../context.ts";
import { PageInfo, pageSize } from "../types/connection.ts";
import { PublicRoom, PublicRoomConnection, PublicRoomEdge, PublicRoomsFilter } from "../types/directory.ts";
import { Room, RoomVisibility } from "../types/room.ts";

@Resolver(() => Room)
export class DirectoryResolver {
  @Query(() => PublicRoomConnection, {
    description:
      "The published room directory (POST /publicRooms): most joined members first, `first` rooms after the cursor " +
      "`after`. Needs a token unless the server sets allow_public_rooms_without_auth.",
  })
  async publicRooms(
    @Arg("filter", () => PublicRoomsFilter, { nullable: true }) filter: PublicRoomsFilter | null | undefined,
    @Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Arg("server", () => String, { nullable: true, description: "Whose directory (default: this server's)." }) server: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PublicRoomConnection> {
    const page = await listPublicRooms(ctx.s, ctx.bearerToken === undefined ? undefined : await ctx.requester(), {
      limit: pageSize(first, 20, "first"),
      since: after ?? undefined,
      server: server ?? undefined,
      filter: filter ? { generic_search_term: filter.genericSearchTerm ?? undefined, room_types: filter.roomTypes ?? undefined } : undefined,
    });
    const edges = page.chunk.map((c, i) => Object.assign(new PublicRoomEdge(), { node: PublicRoom.from(c), cursor: page.cursors[i]! }));
    return Object.assign(new PublicRoomConnection(), {
      edges,
      pageInfo: PageInfo.of({ hasNextPage: page.next_batch !== undefined, hasPreviousPage: page.prev_batch !== undefined, cursors: edges.map((e) => e.cursor) }),
      totalRoomCountEstimate: page.total_room_count_estimate,
    });
  }

  @FieldResolver(() => [String], {
    description: "The room's local aliases (GET /rooms/{roomId}/aliases): for members and, in world_readable rooms, anyone.",
  })
  async aliases(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<string[]> {
    return ctx.loaders.roomAliases.load(room.roomId);
  }

  @FieldResolver(() => String, { nullable: true, description: "m.room.canonical_alias's alias (as the viewer sees the room)." })
  async canonicalAlias(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<string | null> {
    const summary = await ctx.loaders.roomSummary.load(room.roomId);
    if (!summary) throw roomNotVisible();
    return summary.canonicalAlias ?? null;
  }

  @Mutation(() => Room, { nullable: true, description: "Creates a local alias for a room (PUT /directory/room/{roomAlias}); returns the room." })
  async createAlias(@Arg("alias", () => String) alias: string, @Arg("roomId", () => String) roomId: string, @Ctx() ctx: GraphqlContext): Promise<Room> {
    await createAlias(ctx.s, await ctx.requester(), alias, { room_id: roomId });
    ctx.loaders.roomAliases.clear(roomId);
    return Room.of(roomId);
  }

  @Mutation(() => Boolean, { nullable: true, description: "Deletes a local alias (DELETE /directory/room/{roomAlias}). Returns true." })
  async deleteAlias(@Arg("alias", () => String) alias: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await deleteAlias(ctx.s, await ctx.requester(), alias);
    ctx.loaders.roomAliases.clearAll();
    ctx.loaders.roomSummary.clearAll();
    return true;
  }

  @Mutation(() => Room, { nullable: true, description: "Publishes or unpublishes a room in the directory (PUT /directory/list/room/{roomId})." })
  async setRoomDirectoryVisibility(
    @Arg("roomId", () => String) roomId: string,
    @Arg("visibility", () => RoomVisibility) visibility: RoomVisibility,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    await setDirectoryVisibility(ctx.s, await ctx.requester(), roomId, { visibility });
    return Room.of(roomId);
  }

  @Mutation(() => Room, { nullable: true, description: "Upgrades a room to a new room version (POST /rooms/{roomId}/upgrade); returns the replacement room." })
  async upgradeRoom(
    @Arg("roomId", () => String) roomId: string,
    @Arg("newVersion", () => String) newVersion: string,
    @Arg("additionalCreators", () => [String], { nullable: true, description: "v12+: more creators of the new room." }) additionalCreators: string[] | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    const body: Record<string, unknown> = { new_version: newVersion };
    if (additionalCreators) body.additional_creators = additionalCreators;
    const { replacement_room } = await upgradeRoom(ctx.s, await ctx.requester(), roomId, body);
    ctx.loaders.roomSummary.clearAll();
    ctx.loaders.roomAliases.clearAll();
    return Room.of(replacement_room);
  }
}
