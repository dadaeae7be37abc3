var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
// Searching over GraphQL: `searchMessages` (full-text search of room events, the domain operation of
// POST /search, paged Relay-style with the batch tokens as cursors) and `searchUsers` (the user
// directory, as POST /user_directory/search). Same access rules as REST.
import "reflect-metadata";
import { Arg, Ctx, Int, Query, Resolver } from "type-graphql";
import { searchMessages } from "../../domain/search/search.js";
import { searchUserDirectory, DEFAULT_DIRECTORY_LIMIT } from "../../domain/user-directory/search-users.js";
import { MatrixError } from "../../domain/errors.js";
import { PageInfo, pageSize } from "../types/connection.js";
import { Event } from "../types/event.js";
import { Room } from "../types/room.js";
import { DirectoryUser, SearchOrder, SearchResult, SearchResultConnection, SearchResultEdge, UserDirectoryResult } from "../types/search.js";
let SearchResolver = class SearchResolver {
    async searchMessages(term, roomIds, orderBy, first, after, ctx) {
        const limit = pageSize(first, 10, "first");
        const page = await searchMessages(ctx.s, await ctx.requester(), {
            term,
            orderBy: orderBy ?? SearchOrder.RANK,
            filter: { limit, ...(roomIds ? { rooms: roomIds } : {}) },
            after: after ?? undefined,
        });
        const edges = page.hits.map((h) => Object.assign(new SearchResultEdge(), {
            node: Object.assign(new SearchResult(), { rank: h.rank, event: Event.from(h.event, h.roomId), room: Room.of(h.roomId) }),
            cursor: h.cursor,
        }));
        const pageInfo = PageInfo.of({ hasNextPage: page.next !== undefined, hasPreviousPage: after != null, cursors: edges.map((e) => e.cursor) });
        // When a page ends on results the viewer may not see, the next page starts after those too.
        if (page.next !== undefined)
            pageInfo.endCursor = page.next;
        return Object.assign(new SearchResultConnection(), { edges, pageInfo, count: page.count, highlights: page.highlights });
    }
    async searchUsers(term, limit, ctx) {
        const n = limit ?? DEFAULT_DIRECTORY_LIMIT;
        if (!Number.isInteger(n) || n < 0)
            throw new MatrixError("M_INVALID_PARAM", "limit must be a non-negative integer", 400);
        const found = await searchUserDirectory(ctx.s, await ctx.requester(), term, n);
        return Object.assign(new UserDirectoryResult(), {
            limited: found.limited,
            results: found.results.map((u) => Object.assign(new DirectoryUser(), { userId: u.user_id, displayName: u.display_name ?? null, avatarUrl: u.avatar_url ?? null })),
        });
    }
};
__decorate([
    Query(() => SearchResultConnection, {
        description: "Full-text search of m.room.message bodies, room names and topics in the rooms the viewer is in (and, up to " +
            "their leave, rooms they left), with history visibility applied (POST /search). Every word of `term` must " +
            "match as a word prefix. `first` is the page size (at most 100); pass `pageInfo.endCursor` as `after`.",
    }),
    __param(0, Arg("term", () => String)),
    __param(1, Arg("roomIds", () => [String], { nullable: true, description: "Only these rooms." })),
    __param(2, Arg("orderBy", () => SearchOrder, { nullable: true, defaultValue: SearchOrder.RANK })),
    __param(3, Arg("first", () => Int, { nullable: true, defaultValue: 10 })),
    __param(4, Arg("after", () => String, { nullable: true })),
    __param(5, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], SearchResolver.prototype, "searchMessages", null);
__decorate([
    Query(() => UserDirectoryResult, {
        description: "Searches the user directory (POST /user_directory/search): users sharing a room with the viewer or in public " +
            "rooms (every local user with user_directory.search_all_users), by user ID localpart and display name.",
    }),
    __param(0, Arg("term", () => String)),
    __param(1, Arg("limit", () => Int, { nullable: true, defaultValue: DEFAULT_DIRECTORY_LIMIT })),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object, Object]),
    __metadata("design:returntype", Promise)
], SearchResolver.prototype, "searchUsers", null);
SearchResolver = __decorate([
    Resolver()
], SearchResolver);
export { SearchResolver };
