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
// Relations, threads, spaces and reports on the GraphQL face, over the domain operations of their REST
// twins: Room.threads (GET /threads), Room.hierarchy (GET /hierarchy), Event.relations (GET /relations,
// forwards), the bundled aggregations of an event (read from its unsigned m.relations: no query), and
// the reportEvent / reportRoom mutations (POST /rooms/{roomId}/report[/{eventId}]).
import "reflect-metadata";
import { Arg, Query, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from "type-graphql";
import { streamToken } from "../../domain/rooms/read.js";
import { roomVersionLookup, serializeEvents } from "../../domain/rooms/serialize.js";
import { relationsPage } from "../../domain/relations/get-relations.js";
import { threadsPage } from "../../domain/relations/threads.js";
import { getHierarchy } from "../../domain/spaces/hierarchy.js";
import { reportEvent, reportRoom } from "../../domain/reports/report.js";
import { PageInfo, pageSize } from "../types/connection.js";
import { Event } from "../types/event.js";
import { Room } from "../types/room.js";
import { EditSummary, RelatedEventConnection, RelatedEventEdge, SpaceHierarchy, SpaceHierarchyRoom, ThreadInclude, ThreadSummary } from "../types/relations.js";
function bundled(event, relType) {
    const relations = event.unsigned?.["m.relations"];
    return relations?.[relType];
}
let EventRelationsResolver = class EventRelationsResolver {
    thread(event) {
        const t = bundled(event, "m.thread");
        if (!t)
            return null;
        return Object.assign(new ThreadSummary(), {
            latestEvent: Event.from(t.latest_event, event.roomId),
            count: t.count,
            currentUserParticipated: t.current_user_participated,
        });
    }
    edit(event) {
        const e = bundled(event, "m.replace");
        if (!e)
            return null;
        return Object.assign(new EditSummary(), { eventId: e.event_id, sender: e.sender, originServerTs: e.origin_server_ts });
    }
    references(event) {
        const r = bundled(event, "m.reference");
        return (r?.chunk ?? []).map((x) => x.event_id);
    }
    async relations(event, relType, eventType, first, after, recurse, ctx) {
        const r = await ctx.requester();
        const limit = Math.max(pageSize(first, 20, "first"), 1);
        const page = await relationsPage(ctx.s, r, event.roomId, event.eventId, {
            relType: relType ?? undefined,
            eventType: eventType ?? undefined,
            dir: "f",
            from: after ?? undefined,
            limit,
            recurse: recurse ?? false,
        });
        const serialized = await serializeEvents(ctx.s, r, roomVersionLookup(ctx.s), page.events);
        const edges = serialized.map((e, i) => Object.assign(new RelatedEventEdge(), { node: Event.from(e, event.roomId), cursor: streamToken(page.events[i].streamOrdering) }));
        return Object.assign(new RelatedEventConnection(), {
            edges,
            pageInfo: PageInfo.of({ hasNextPage: page.next !== undefined, hasPreviousPage: after != null, cursors: edges.map((e) => e.cursor) }),
        });
    }
};
__decorate([
    FieldResolver(() => ThreadSummary, { nullable: true, description: "The thread this event is the root of (its m.thread aggregation)." }),
    __param(0, Root()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Event]),
    __metadata("design:returntype", Object)
], EventRelationsResolver.prototype, "thread", null);
__decorate([
    FieldResolver(() => EditSummary, { nullable: true, description: "The latest valid edit (m.replace aggregation)." }),
    __param(0, Root()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Event]),
    __metadata("design:returntype", Object)
], EventRelationsResolver.prototype, "edit", null);
__decorate([
    FieldResolver(() => [String], { description: "IDs of the events referencing this one (m.reference aggregation)." }),
    __param(0, Root()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Event]),
    __metadata("design:returntype", Array)
], EventRelationsResolver.prototype, "references", null);
__decorate([
    FieldResolver(() => RelatedEventConnection, {
        description: "Events relating to this one (GET /relations), oldest first; `after` takes an edge's cursor (or a /messages token).",
    }),
    __param(0, Root()),
    __param(1, Arg("relType", () => String, { nullable: true })),
    __param(2, Arg("eventType", () => String, { nullable: true })),
    __param(3, Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." })),
    __param(4, Arg("after", () => String, { nullable: true })),
    __param(5, Arg("recurse", () => Boolean, { nullable: true, defaultValue: false })),
    __param(6, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Event, Object, Object, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], EventRelationsResolver.prototype, "relations", null);
EventRelationsResolver = __decorate([
    Resolver(() => Event)
], EventRelationsResolver);
export { EventRelationsResolver };
let RoomThreadsResolver = class RoomThreadsResolver {
    async threads(room, include, first, after, ctx) {
        const r = await ctx.requester();
        const limit = Math.max(pageSize(first, 20, "first"), 1);
        const page = await threadsPage(ctx.s, r, room.roomId, { include, from: after ?? undefined, limit });
        const serialized = await serializeEvents(ctx.s, r, roomVersionLookup(ctx.s), page.roots);
        const edges = serialized.map((e) => Object.assign(new RelatedEventEdge(), { node: Event.from(e, room.roomId), cursor: page.cursors.get(e.event_id) }));
        return Object.assign(new RelatedEventConnection(), {
            edges,
            pageInfo: PageInfo.of({ hasNextPage: page.next !== undefined, hasPreviousPage: after != null, cursors: edges.map((e) => e.cursor) }),
        });
    }
    async hierarchy(room, suggestedOnly, maxDepth, first, after, ctx) {
        return hierarchyOf(ctx, room.roomId, { suggestedOnly, maxDepth, first, after });
    }
};
__decorate([
    FieldResolver(() => RelatedEventConnection, { description: "Thread roots (GET /threads), latest activity first, each with its thread summary." }),
    __param(0, Root()),
    __param(1, Arg("include", () => ThreadInclude, { defaultValue: ThreadInclude.ALL })),
    __param(2, Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." })),
    __param(3, Arg("after", () => String, { nullable: true })),
    __param(4, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, String, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomThreadsResolver.prototype, "threads", null);
__decorate([
    FieldResolver(() => SpaceHierarchy, { description: "The space tree under this room (GET /hierarchy), depth first." }),
    __param(0, Root()),
    __param(1, Arg("suggestedOnly", () => Boolean, { defaultValue: false })),
    __param(2, Arg("maxDepth", () => Int, { nullable: true })),
    __param(3, Arg("first", () => Int, { nullable: true, description: "Page size (at most 50)." })),
    __param(4, Arg("after", () => String, { nullable: true, description: "A previous page's nextBatch." })),
    __param(5, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Boolean, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomThreadsResolver.prototype, "hierarchy", null);
RoomThreadsResolver = __decorate([
    Resolver(() => Room)
], RoomThreadsResolver);
export { RoomThreadsResolver };
async function hierarchyOf(ctx, roomId, a) {
    const res = await getHierarchy(ctx.s, await ctx.requester(), roomId, {
        suggestedOnly: a.suggestedOnly,
        maxDepth: a.maxDepth ?? undefined,
        limit: a.first ?? undefined,
        from: a.after ?? undefined,
    });
    return Object.assign(new SpaceHierarchy(), { rooms: res.rooms.map((x) => SpaceHierarchyRoom.from(x)), nextBatch: res.next_batch ?? null });
}
let SpaceHierarchyResolver = class SpaceHierarchyResolver {
    async spaceHierarchy(roomId, suggestedOnly, maxDepth, first, after, ctx) {
        return hierarchyOf(ctx, roomId, { suggestedOnly, maxDepth, first, after });
    }
};
__decorate([
    Query(() => SpaceHierarchy, {
        description: "The space tree under a space the viewer may peek into without being joined: public, world-readable or joinable through a room they are in (GET /hierarchy).",
    }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("suggestedOnly", () => Boolean, { defaultValue: false })),
    __param(2, Arg("maxDepth", () => Int, { nullable: true })),
    __param(3, Arg("first", () => Int, { nullable: true, description: "Page size (at most 50)." })),
    __param(4, Arg("after", () => String, { nullable: true, description: "A previous page's nextBatch." })),
    __param(5, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Boolean, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], SpaceHierarchyResolver.prototype, "spaceHierarchy", null);
SpaceHierarchyResolver = __decorate([
    Resolver()
], SpaceHierarchyResolver);
export { SpaceHierarchyResolver };
let ReportResolver = class ReportResolver {
    async reportEvent(roomId, eventId, reason, score, ctx) {
        const body = {};
        if (reason != null)
            body.reason = reason;
        if (score != null)
            body.score = score;
        await reportEvent(ctx.s, await ctx.requester(), roomId, eventId, body);
        return true;
    }
    async reportRoom(roomId, reason, ctx) {
        await reportRoom(ctx.s, await ctx.requester(), roomId, { reason });
        return true;
    }
};
__decorate([
    Mutation(() => Boolean, { description: "Reports an event to the server admins (POST /rooms/{roomId}/report/{eventId}). Returns true." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("eventId", () => String)),
    __param(2, Arg("reason", () => String, { nullable: true })),
    __param(3, Arg("score", () => Int, { nullable: true, description: "From -100 (most offensive) to 0." })),
    __param(4, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], ReportResolver.prototype, "reportEvent", null);
__decorate([
    Mutation(() => Boolean, { description: "Reports a room to the server admins (POST /rooms/{roomId}/report). Returns true." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("reason", () => String)),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object]),
    __metadata("design:returntype", Promise)
], ReportResolver.prototype, "reportRoom", null);
ReportResolver = __decorate([
    Resolver()
], ReportResolver);
export { ReportResolver };
