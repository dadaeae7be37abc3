var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var UnreadCount_1;
// GraphQL types of notification counts (spec: Client-Server API "Receiving notifications", threaded
// notifications): a room's unread notifications and highlights, in all, in the main timeline and per thread.
import "reflect-metadata";
import { Field, Int, ObjectType } from "type-graphql";
let UnreadCount = UnreadCount_1 = class UnreadCount {
    notifications;
    highlights;
    static of(c) {
        return Object.assign(new UnreadCount_1(), { notifications: c?.notifications ?? c?.notification_count ?? 0, highlights: c?.highlights ?? c?.highlight_count ?? 0 });
    }
};
__decorate([
    Field(() => Int),
    __metadata("design:type", Number)
], UnreadCount.prototype, "notifications", void 0);
__decorate([
    Field(() => Int),
    __metadata("design:type", Number)
], UnreadCount.prototype, "highlights", void 0);
UnreadCount = UnreadCount_1 = __decorate([
    ObjectType({ description: "Unread notifications and highlights (after the viewer's read receipts)." })
], UnreadCount);
export { UnreadCount };
let ThreadUnreadCount = class ThreadUnreadCount {
    threadId;
    count;
};
__decorate([
    Field(() => String, { description: "The thread root's event ID." }),
    __metadata("design:type", String)
], ThreadUnreadCount.prototype, "threadId", void 0);
__decorate([
    Field(() => UnreadCount),
    __metadata("design:type", UnreadCount)
], ThreadUnreadCount.prototype, "count", void 0);
ThreadUnreadCount = __decorate([
    ObjectType({ description: "Unread counts of one thread." })
], ThreadUnreadCount);
export { ThreadUnreadCount };
let RoomUnreadCounts = class RoomUnreadCounts {
    total;
    main;
    threads;
};
__decorate([
    Field(() => UnreadCount, { description: "All threads together (/sync's unread_notifications without unread_thread_notifications)." }),
    __metadata("design:type", UnreadCount)
], RoomUnreadCounts.prototype, "total", void 0);
__decorate([
    Field(() => UnreadCount, { description: "The main timeline only." }),
    __metadata("design:type", UnreadCount)
], RoomUnreadCounts.prototype, "main", void 0);
__decorate([
    Field(() => [ThreadUnreadCount]),
    __metadata("design:type", Array)
], RoomUnreadCounts.prototype, "threads", void 0);
RoomUnreadCounts = __decorate([
    ObjectType({ description: "A room's unread counts: every thread together, the main timeline, and each thread with unread notifications." })
], RoomUnreadCounts);
export { RoomUnreadCounts };
