// Searching over GraphQL: `searchMessages` (full-text search of room events, the domain operation of
// POST /search, paged Relay-style with the batch tokens as cursors) and `searchUsers` (the user
// directory, as POST /user_directory/search). Same access rules as REST.
import "reflect-metadata";
import { Arg, Ctx, Int, Query, Resolver } from "type-graphql";
import { searchMessages } from "../../domain/search/search.ts";
import { searchUserDirectory, DEFAULT_DIRECTORY_LIMIT } from "../../domain/user-directory/search-users.ts";
import { MatrixError } from "../../domain/errors.ts";
import type { GraphqlContext } from "../context.ts";
import { PageInfo, pageSize } from "../types/connection.ts";
import { Event } from "../types/event.ts";
import { Room } from "../types/room.ts";
import { DirectoryUser, SearchOrder, SearchResult, SearchResultConnection, SearchResultEdge, UserDirectoryResult } from "../types/search.ts";

@Resolver()
export class SearchResolver {
  @Query(() => SearchResultConnection, {
    description:
      "Full-text search of m.room.message bodies, room names and topics in the rooms the viewer is in (and, up to " +
      "their leave, rooms they left), with history visibility applied (POST /search). Every word of `term` must " +
      "match as a word prefix. `first` is the page size (at most 100); pass `pageInfo.endCursor` as `after`.",
  })
  async searchMessages(
    @Arg("term", () => String) term: string,
    @Arg("roomIds", () => [String], { nullable: true, description: "Only these rooms." }) roomIds: string[] | null | undefined,
    @Arg("orderBy", () => SearchOrder, { nullable: true, defaultValue: SearchOrder.RANK }) orderBy: SearchOrder | null | undefined,
    @Arg("first", () => Int, { nullable: true, defaultValue: 10 }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<SearchResultConnection> {
    const limit = pageSize(first, 10, "first");
    const page = await searchMessages(ctx.s, await ctx.requester(), {
      term,
      orderBy: orderBy ?? SearchOrder.RANK,
      filter: { limit, ...(roomIds ? { rooms: roomIds } : {}) },
      after: after ?? undefined,
    });
    const edges = page.hits.map((h) =>
      Object.assign(new SearchResultEdge(), {
        node: Object.assign(new SearchResult(), { rank: h.rank, event: Event.from(h.event, h.roomId), room: Room.of(h.roomId) }),
        cursor: h.cursor,
      }),
    );
    const pageInfo = PageInfo.of({ hasNextPage: page.next !== undefined, hasPreviousPage: after != null, cursors: edges.map((e) => e.cursor) });
    // When a page ends on results the viewer may not see, the next page starts after those too.
    if (page.next !== undefined) pageInfo.endCursor = page.next;
    return Object.assign(new SearchResultConnection(), { edges, pageInfo, count: page.count, highlights: page.highlights });
  }

  @Query(() => UserDirectoryResult, {
    description:
      "Searches the user directory (POST /user_directory/search): users sharing a room with the viewer or in public " +
      "rooms (every local user with user_directory.search_all_users), by user ID localpart and display name.",
  })
  async searchUsers(
    @Arg("term", () => String) term: string,
    @Arg("limit", () => Int, { nullable: true, defaultValue: DEFAULT_DIRECTORY_LIMIT }) limit: number | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<UserDirectoryResult> {
    const n = limit ?? DEFAULT_DIRECTORY_LIMIT;
    if (!Number.isInteger(n) || n < 0) throw new MatrixError("M_INVALID_PARAM", "limit must be a non-negative integer", 400);
    const found = await searchUserDirectory(ctx.s, await ctx.requester(), term, n);
    return Object.assign(new UserDirectoryResult(), {
      limited: found.limited,
      results: found.results.map((u) =>
        Object.assign(new DirectoryUser(), { userId: u.user_id, displayName: u.display_name ?? null, avatarUrl: u.avatar_url ?? null }),
      ),
    });
  }
}
