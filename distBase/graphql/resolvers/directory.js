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
// The room directory over GraphQL, each field over the domain operation of its REST twin: publicRooms
// (GET/POST /publicRooms, a connection whose cursors are since tokens), Room.aliases (GET
// /rooms/{roomId}/aliases, batched by DataLoader), Room.canonicalAlias (from the room summary), and the
// mutations createAlias / deleteAlias (PUT/DELETE /directory/room/{roomAlias}), setRoomDirectoryVisibility
// (PUT /directory/list/room/{roomId}) and upgradeRoom (POST /rooms/{roomId}/upgrade).
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { createAlias, deleteAlias } from "../../domain/directory/aliases.js";
import { setDirectoryVisibility } from "../../domain/directory/visibility.js";
import { listPublicRooms } from "../../domain/directory/public-rooms.js";
import { upgradeRoom } from "../../domain/rooms/upgrade.js";
import { roomNotVisible } from "../../domain/rooms/batch-reads.js";
import { PageInfo, pageSize } from "../types/connection.js";
import { PublicRoom, PublicRoomConnection, PublicRoomEdge, PublicRoomsFilter } from "../types/directory.js";
import { Room, RoomVisibility } from "../types/room.js";
let DirectoryResolver = class DirectoryResolver {
    async publicRooms(filter, first, after, server, ctx) {
        const page = await listPublicRooms(ctx.s, ctx.bearerToken === undefined ? undefined : await ctx.requester(), {
            limit: pageSize(first, 20, "first"),
            since: after ?? undefined,
            server: server ?? undefined,
            filter: filter ? { generic_search_term: filter.genericSearchTerm ?? undefined, room_types: filter.roomTypes ?? undefined } : undefined,
        });
        const edges = page.chunk.map((c, i) => Object.assign(new PublicRoomEdge(), { node: PublicRoom.from(c), cursor: page.cursors[i] }));
        return Object.assign(new PublicRoomConnection(), {
            edges,
            pageInfo: PageInfo.of({ hasNextPage: page.next_batch !== undefined, hasPreviousPage: page.prev_batch !== undefined, cursors: edges.map((e) => e.cursor) }),
            totalRoomCountEstimate: page.total_room_count_estimate,
        });
    }
    async aliases(room, ctx) {
        return ctx.loaders.roomAliases.load(room.roomId);
    }
    async canonicalAlias(room, ctx) {
        const summary = await ctx.loaders.roomSummary.load(room.roomId);
        if (!summary)
            throw roomNotVisible();
        return summary.canonicalAlias ?? null;
    }
    async createAlias(alias, roomId, ctx) {
        await createAlias(ctx.s, await ctx.requester(), alias, { room_id: roomId });
        ctx.loaders.roomAliases.clear(roomId);
        return Room.of(roomId);
    }
    async deleteAlias(alias, ctx) {
        await deleteAlias(ctx.s, await ctx.requester(), alias);
        ctx.loaders.roomAliases.clearAll();
        ctx.loaders.roomSummary.clearAll();
        return true;
    }
    async setRoomDirectoryVisibility(roomId, visibility, ctx) {
        await setDirectoryVisibility(ctx.s, await ctx.requester(), roomId, { visibility });
        return Room.of(roomId);
    }
    async upgradeRoom(roomId, newVersion, additionalCreators, ctx) {
        const body = { new_version: newVersion };
        if (additionalCreators)
            body.additional_creators = additionalCreators;
        const { replacement_room } = await upgradeRoom(ctx.s, await ctx.requester(), roomId, body);
        ctx.loaders.roomSummary.clearAll();
        ctx.loaders.roomAliases.clearAll();
        return Room.of(replacement_room);
    }
};
__decorate([
    Query(() => PublicRoomConnection, {
        description: "The published room directory (POST /publicRooms): most joined members first, `first` rooms after the cursor " +
            "`after`. Needs a token unless the server sets allow_public_rooms_without_auth.",
    }),
    __param(0, Arg("filter", () => PublicRoomsFilter, { nullable: true })),
    __param(1, Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." })),
    __param(2, Arg("after", () => String, { nullable: true })),
    __param(3, Arg("server", () => String, { nullable: true, description: "Whose directory (default: this server's)." })),
    __param(4, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], DirectoryResolver.prototype, "publicRooms", null);
__decorate([
    FieldResolver(() => [String], {
        description: "The room's local aliases (GET /rooms/{roomId}/aliases): for members and, in world_readable rooms, anyone.",
    }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], DirectoryResolver.prototype, "aliases", null);
__decorate([
    FieldResolver(() => String, { nullable: true, description: "m.room.canonical_alias's alias (as the viewer sees the room)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], DirectoryResolver.prototype, "canonicalAlias", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Creates a local alias for a room (PUT /directory/room/{roomAlias}); returns the room." }),
    __param(0, Arg("alias", () => String)),
    __param(1, Arg("roomId", () => String)),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object]),
    __metadata("design:returntype", Promise)
], DirectoryResolver.prototype, "createAlias", null);
__decorate([
    Mutation(() => Boolean, { nullable: true, description: "Deletes a local alias (DELETE /directory/room/{roomAlias}). Returns true." }),
    __param(0, Arg("alias", () => String)),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object]),
    __metadata("design:returntype", Promise)
], DirectoryResolver.prototype, "deleteAlias", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Publishes or unpublishes a room in the directory (PUT /directory/list/room/{roomId})." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("visibility", () => RoomVisibility)),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object]),
    __metadata("design:returntype", Promise)
], DirectoryResolver.prototype, "setRoomDirectoryVisibility", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Upgrades a room to a new room version (POST /rooms/{roomId}/upgrade); returns the replacement room." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("newVersion", () => String)),
    __param(2, Arg("additionalCreators", () => [String], { nullable: true, description: "v12+: more creators of the new room." })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], DirectoryResolver.prototype, "upgradeRoom", null);
DirectoryResolver = __decorate([
    Resolver(() => Room)
], DirectoryResolver);
export { DirectoryResolver };
