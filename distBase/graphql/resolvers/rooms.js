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
// Reading rooms: `room(roomId)`, the viewer's rooms (a connection by membership), and the fields of Room.
// name, topic, avatarUrl, roomVersion and membership come from the per-request room-summary DataLoader,
// so a page of rooms costs a few queries in all; state, members and timeline call the domain reads of
// GET /rooms/{roomId}/state, /members and /messages, with the same access rules.
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Query, Resolver, Root } from "type-graphql";
import { AVATAR_HTTP_URL_DOC, SIZE_ARG_DOC, avatarHttpUrl } from "../types/media.js";
import { MatrixError } from "../../domain/errors.js";
import { getMembers, readMessages, getRoomEvent, getRoomState, getRoomStateEvent, parseStreamToken, streamToken } from "../../domain/rooms/read.js";
import { eventStreamPositions, roomNotVisible, userRoomsPage } from "../../domain/rooms/batch-reads.js";
import { PageInfo, pageSize } from "../types/connection.js";
import { Event, EventConnection, EventEdge } from "../types/event.js";
import { Member, MemberConnection, MemberEdge, Membership, Room, RoomConnection, RoomEdge } from "../types/room.js";
import { Viewer } from "../types/viewer.js";
async function summaryOf(ctx, roomId) {
    const summary = await ctx.loaders.roomSummary.load(roomId);
    if (!summary)
        throw roomNotVisible();
    return summary;
}
let RoomResolver = class RoomResolver {
    async room(roomId, ctx) {
        await summaryOf(ctx, roomId);
        return Room.of(roomId);
    }
    async roomVersion(room, ctx) {
        return (await summaryOf(ctx, room.roomId)).roomVersion;
    }
    async name(room, ctx) {
        return (await summaryOf(ctx, room.roomId)).name ?? null;
    }
    async topic(room, ctx) {
        return (await summaryOf(ctx, room.roomId)).topic ?? null;
    }
    async avatarUrl(room, ctx) {
        return (await summaryOf(ctx, room.roomId)).avatarUrl ?? null;
    }
    async avatarHttpUrl(room, size, ctx) {
        return avatarHttpUrl(ctx, (await summaryOf(ctx, room.roomId)).avatarUrl, size);
    }
    async membership(room, ctx) {
        return (await summaryOf(ctx, room.roomId)).membership ?? null;
    }
    async state(room, type, stateKey, ctx) {
        const r = await ctx.requester();
        if (type != null && stateKey != null) {
            try {
                return [Event.from(await getRoomStateEvent(ctx.s, r, room.roomId, type, stateKey), room.roomId)];
            }
            catch (err) {
                if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND")
                    return [];
                throw err;
            }
        }
        return (await getRoomState(ctx.s, r, room.roomId))
            .filter((e) => (type == null || e.type === type) && (stateKey == null || e.state_key === stateKey))
            .map((e) => Event.from(e, room.roomId));
    }
    async event(room, eventId, ctx) {
        return Event.from(await getRoomEvent(ctx.s, await ctx.requester(), room.roomId, eventId), room.roomId);
    }
    async members(room, first, after, membership, ctx) {
        const size = pageSize(first, 50, "first");
        const only = membership?.length === 1 ? membership[0] : undefined;
        const events = await getMembers(ctx.s, await ctx.requester(), room.roomId, { membership: only });
        const wanted = membership ? new Set(membership) : undefined;
        const all = events
            .map((e) => Member.from(e, room.roomId))
            .filter((m) => !wanted || wanted.has(m.membership))
            .sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
        let start = after == null ? 0 : all.findIndex((m) => m.userId > after);
        if (start < 0)
            start = all.length;
        const page = all.slice(start, start + size);
        return Object.assign(new MemberConnection(), {
            edges: page.map((m) => Object.assign(new MemberEdge(), { node: m, cursor: m.userId })),
            pageInfo: PageInfo.of({ hasNextPage: start + size < all.length, hasPreviousPage: start > 0, cursors: page.map((m) => m.userId) }),
        });
    }
    async timeline(room, last, before, ctx) {
        const limit = pageSize(last, 20, "last");
        const { response: res, more } = await readMessages(ctx.s, await ctx.requester(), room.roomId, { from: before ?? undefined, dir: "b", limit, filter: {} });
        const chunk = [...res.chunk].reverse();
        const positions = await eventStreamPositions(ctx.s, chunk.map((e) => e.event_id));
        const edges = chunk.map((e) => Object.assign(new EventEdge(), { node: Event.from(e, room.roomId), cursor: streamToken(positions.get(e.event_id) - 1) }));
        return Object.assign(new EventConnection(), {
            edges,
            pageInfo: PageInfo.of({ hasNextPage: false, hasPreviousPage: more, cursors: edges.map((e) => e.cursor) }),
        });
    }
};
__decorate([
    Query(() => Room, {
        nullable: true,
        description: "A room by ID, if the viewer is or was in it, is invited, or may read it (world_readable); else M_FORBIDDEN.",
    }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "room", null);
__decorate([
    FieldResolver(() => String),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "roomVersion", null);
__decorate([
    FieldResolver(() => String, { nullable: true, description: "m.room.name (as the viewer sees it: at their leave for former members)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "name", null);
__decorate([
    FieldResolver(() => String, { nullable: true, description: "m.room.topic." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "topic", null);
__decorate([
    FieldResolver(() => String, { nullable: true, description: "m.room.avatar's url (an mxc:// URI; for a browser, use avatarHttpUrl)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "avatarUrl", null);
__decorate([
    FieldResolver(() => String, { nullable: true, description: AVATAR_HTTP_URL_DOC }),
    __param(0, Root()),
    __param(1, Arg("size", () => Int, { nullable: true, description: SIZE_ARG_DOC })),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "avatarHttpUrl", null);
__decorate([
    FieldResolver(() => Membership, { nullable: true, description: "The viewer's membership (null: none, e.g. a world_readable room)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "membership", null);
__decorate([
    FieldResolver(() => [Event], {
        description: "State events (GET /rooms/{roomId}/state): all of them, those of one type, or the one of (type, stateKey). " +
            "Current state for members, the state at their leave for former members.",
    }),
    __param(0, Root()),
    __param(1, Arg("type", () => String, { nullable: true })),
    __param(2, Arg("stateKey", () => String, { nullable: true })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "state", null);
__decorate([
    FieldResolver(() => Event, { nullable: true, description: "One event (GET /rooms/{roomId}/event/{eventId}); M_NOT_FOUND when the viewer may not see it." }),
    __param(0, Root()),
    __param(1, Arg("eventId", () => String)),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, String, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "event", null);
__decorate([
    FieldResolver(() => MemberConnection, { description: "Members (GET /rooms/{roomId}/members), ordered by user ID; cursors are user IDs." }),
    __param(0, Root()),
    __param(1, Arg("first", () => Int, { nullable: true, defaultValue: 50, description: "Page size." })),
    __param(2, Arg("after", () => String, { nullable: true })),
    __param(3, Arg("membership", () => [Membership], { nullable: true, description: "Only these memberships (default: all)." })),
    __param(4, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "members", null);
__decorate([
    FieldResolver(() => EventConnection, {
        description: "The timeline, paged backwards (GET /rooms/{roomId}/messages?dir=b): the `last` events before the cursor " +
            "`before` (default: the newest), oldest first. An edge's cursor is the stream token just before its event, " +
            "so `before: pageInfo.startCursor` gives the page before and equals /messages' `end`. hasPreviousPage says " +
            "whether older events may remain; hasNextPage is always false (newer events arrive by subscription).",
    }),
    __param(0, Root()),
    __param(1, Arg("last", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." })),
    __param(2, Arg("before", () => String, { nullable: true })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomResolver.prototype, "timeline", null);
RoomResolver = __decorate([
    Resolver(() => Room)
], RoomResolver);
export { RoomResolver };
let ViewerRoomsResolver = class ViewerRoomsResolver {
    async rooms(viewer, first, after, membership, ctx) {
        const limit = pageSize(first, 20, "first");
        const before = after == null ? undefined : parseStreamToken(after, "after");
        const page = await userRoomsPage(ctx.s, viewer.userId, { memberships: membership, before, limit });
        const edges = page.rooms.map((x) => Object.assign(new RoomEdge(), { node: Room.of(x.roomId), cursor: streamToken(x.streamOrdering) }));
        return Object.assign(new RoomConnection(), {
            edges,
            pageInfo: PageInfo.of({ hasNextPage: page.more, hasPreviousPage: false, cursors: edges.map((e) => e.cursor) }),
        });
    }
};
__decorate([
    FieldResolver(() => RoomConnection, {
        description: "The viewer's rooms with one of the given memberships (forgotten rooms left out), newest membership " +
            "change first. Cursors are stream tokens of the membership events, stable while rooms are added.",
    }),
    __param(0, Root()),
    __param(1, Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." })),
    __param(2, Arg("after", () => String, { nullable: true })),
    __param(3, Arg("membership", () => [Membership], { defaultValue: [Membership.JOIN] })),
    __param(4, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, Object, Object, Array, Object]),
    __metadata("design:returntype", Promise)
], ViewerRoomsResolver.prototype, "rooms", null);
ViewerRoomsResolver = __decorate([
    Resolver(() => Viewer)
], ViewerRoomsResolver);
export { ViewerRoomsResolver };
