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
// Notification counts on the GraphQL face: `Room.unreadCounts` (the domain's unread counts, the same
// numbers /sync reports) and, in `syncUpdates`, `JoinedRoomSync.unreadNotifications` (filled from the
// sync delta by ephemeral.ts).
import "reflect-metadata";
import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import { Room } from "../types/room.js";
import { RoomUnreadCounts, ThreadUnreadCount, UnreadCount } from "../types/push.js";
import { total } from "../../domain/push/counts.js";
let RoomUnreadResolver = class RoomUnreadResolver {
    async unreadCounts(room, ctx) {
        const r = await ctx.requester();
        const counts = (await ctx.s.push.counts.get(ctx.s, r.userId, [room.roomId])).get(room.roomId);
        const threads = [...(counts ?? [])].filter(([id]) => id !== "main").map(([threadId, c]) => Object.assign(new ThreadUnreadCount(), { threadId, count: UnreadCount.of(c) }));
        return Object.assign(new RoomUnreadCounts(), { total: UnreadCount.of(total(counts)), main: UnreadCount.of(counts?.get("main")), threads });
    }
};
__decorate([
    FieldResolver(() => RoomUnreadCounts, { description: "The viewer's unread notifications and highlights in this room (as /sync reports them)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Room, Object]),
    __metadata("design:returntype", Promise)
], RoomUnreadResolver.prototype, "unreadCounts", null);
RoomUnreadResolver = __decorate([
    Resolver(() => Room)
], RoomUnreadResolver);
export { RoomUnreadResolver };
