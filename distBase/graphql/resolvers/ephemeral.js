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
var PresenceStatus_1;
// Typing, receipts, presence and the live sync on the GraphQL face: mutations `setTyping`, `markRead`
// (a receipt, optionally moving the read marker), `setPresence`; query `presence(userId)`; subscriptions
// `typing(roomId)`, `receipts(roomId)` and `syncUpdates(since, filter)` (the /sync deltas, typed), all
// fed by the notifier that wakes /sync (src/graphql/subscriptions.ts) and calling the REST face's domain
// operations with the same checks.
import "reflect-metadata";
import { Arg, Ctx, Field, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from "type-graphql";
import { GraphQLJSONObject } from "../types/json.js";
import { parseTypingBody, setTyping } from "../../domain/typing/set-typing.js";
import { LiveTyping } from "../../domain/typing/live-typing.js";
import { LiveReceipts } from "../../domain/receipts/live-receipts.js";
import { markRead } from "../../domain/receipts/read-markers.js";
import { getPresence, parsePresenceBody, setPresence } from "../../domain/presence/presence.js";
import { resolveSyncFilter } from "../../domain/filters/user-filters.js";
import { LiveSync } from "../../domain/sync/live-sync.js";
import { Event } from "../types/event.js";
import { Timestamp } from "../types/scalars.js";
import { AccountDataEntry } from "./sync.js";
import { ThreadUnreadCount, UnreadCount } from "../types/push.js";
import { notifierIterable } from "../subscriptions.js";
import { toGraphqlError } from "../errors.js";
let TypingUpdate = class TypingUpdate {
    roomId;
    userIds;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], TypingUpdate.prototype, "roomId", void 0);
__decorate([
    Field(() => [String], { description: "The user IDs typing now (empty: nobody)." }),
    __metadata("design:type", Array)
], TypingUpdate.prototype, "userIds", void 0);
TypingUpdate = __decorate([
    ObjectType({ description: "Who is typing in a room now." })
], TypingUpdate);
export { TypingUpdate };
let Receipt = class Receipt {
    eventId;
    userId;
    receiptType;
    threadId;
    ts;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], Receipt.prototype, "eventId", void 0);
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], Receipt.prototype, "userId", void 0);
__decorate([
    Field(() => String, { description: "m.read, or m.read.private (only ever the viewer's own)." }),
    __metadata("design:type", String)
], Receipt.prototype, "receiptType", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "`main`, a thread root's event ID, or null for an unthreaded receipt." }),
    __metadata("design:type", Object)
], Receipt.prototype, "threadId", void 0);
__decorate([
    Field(() => Timestamp),
    __metadata("design:type", Number)
], Receipt.prototype, "ts", void 0);
Receipt = __decorate([
    ObjectType({ description: "A read receipt: `userId` has read up to `eventId` (in a thread, or unthreaded)." })
], Receipt);
export { Receipt };
let ReceiptsUpdate = class ReceiptsUpdate {
    roomId;
    receipts;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], ReceiptsUpdate.prototype, "roomId", void 0);
__decorate([
    Field(() => [Receipt]),
    __metadata("design:type", Array)
], ReceiptsUpdate.prototype, "receipts", void 0);
ReceiptsUpdate = __decorate([
    ObjectType({ description: "Receipts of a room that changed." })
], ReceiptsUpdate);
export { ReceiptsUpdate };
let PresenceStatus = PresenceStatus_1 = class PresenceStatus {
    userId;
    presence;
    lastActiveAgo;
    currentlyActive;
    statusMsg;
    static from(userId, c) {
        return Object.assign(new PresenceStatus_1(), {
            userId,
            presence: c.presence,
            lastActiveAgo: c.last_active_ago ?? null,
            currentlyActive: c.currently_active ?? null,
            statusMsg: c.status_msg ?? null,
        });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], PresenceStatus.prototype, "userId", void 0);
__decorate([
    Field(() => String, { description: "online, unavailable or offline." }),
    __metadata("design:type", String)
], PresenceStatus.prototype, "presence", void 0);
__decorate([
    Field(() => Int, { nullable: true, description: "Milliseconds since the user was last active." }),
    __metadata("design:type", Object)
], PresenceStatus.prototype, "lastActiveAgo", void 0);
__decorate([
    Field(() => Boolean, { nullable: true }),
    __metadata("design:type", Object)
], PresenceStatus.prototype, "currentlyActive", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], PresenceStatus.prototype, "statusMsg", void 0);
PresenceStatus = PresenceStatus_1 = __decorate([
    ObjectType({ description: "A user's presence (spec: Presence)." })
], PresenceStatus);
export { PresenceStatus };
let JoinedRoomSync = class JoinedRoomSync {
    roomId;
    timeline;
    limited;
    prevBatch;
    state;
    typing;
    receipts;
    accountData;
    unreadNotifications;
    unreadThreadNotifications;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], JoinedRoomSync.prototype, "roomId", void 0);
__decorate([
    Field(() => [Event], { description: "New timeline events, oldest first." }),
    __metadata("design:type", Array)
], JoinedRoomSync.prototype, "timeline", void 0);
__decorate([
    Field(() => Boolean, { description: "Events were left out before `timeline` (fetch them with prevBatch)." }),
    __metadata("design:type", Boolean)
], JoinedRoomSync.prototype, "limited", void 0);
__decorate([
    Field(() => String, { description: "A /messages token to page back from the start of `timeline`." }),
    __metadata("design:type", String)
], JoinedRoomSync.prototype, "prevBatch", void 0);
__decorate([
    Field(() => [Event], { description: "State at the start of `timeline` (all of it when the room is new to the viewer)." }),
    __metadata("design:type", Array)
], JoinedRoomSync.prototype, "state", void 0);
__decorate([
    Field(() => [String], { nullable: true, description: "Who is typing now, when that changed; null otherwise." }),
    __metadata("design:type", Object)
], JoinedRoomSync.prototype, "typing", void 0);
__decorate([
    Field(() => [Receipt], { description: "Receipts that changed." }),
    __metadata("design:type", Array)
], JoinedRoomSync.prototype, "receipts", void 0);
__decorate([
    Field(() => [AccountDataEntry]),
    __metadata("design:type", Array)
], JoinedRoomSync.prototype, "accountData", void 0);
__decorate([
    Field(() => UnreadCount, { description: "Unread notifications and highlights now (the main timeline only when the filter asks for unread_thread_notifications)." }),
    __metadata("design:type", UnreadCount)
], JoinedRoomSync.prototype, "unreadNotifications", void 0);
__decorate([
    Field(() => [ThreadUnreadCount], { description: "Per thread, when the filter asks for unread_thread_notifications." }),
    __metadata("design:type", Array)
], JoinedRoomSync.prototype, "unreadThreadNotifications", void 0);
JoinedRoomSync = __decorate([
    ObjectType({ description: "What changed in one joined room (a /sync rooms.join entry)." })
], JoinedRoomSync);
export { JoinedRoomSync };
let SyncUpdate = class SyncUpdate {
    nextBatch;
    joinedRooms;
    invitedRoomIds;
    leftRoomIds;
    accountData;
    presence;
    json;
};
__decorate([
    Field(() => String, { description: "Pass as `since` (here or to /sync) to continue after this update without missing anything." }),
    __metadata("design:type", String)
], SyncUpdate.prototype, "nextBatch", void 0);
__decorate([
    Field(() => [JoinedRoomSync]),
    __metadata("design:type", Array)
], SyncUpdate.prototype, "joinedRooms", void 0);
__decorate([
    Field(() => [String], { description: "Rooms the viewer was newly invited to (details in `json`)." }),
    __metadata("design:type", Array)
], SyncUpdate.prototype, "invitedRoomIds", void 0);
__decorate([
    Field(() => [String], { description: "Rooms the viewer left or was removed from (details in `json`)." }),
    __metadata("design:type", Array)
], SyncUpdate.prototype, "leftRoomIds", void 0);
__decorate([
    Field(() => [AccountDataEntry], { description: "Global account data that changed." }),
    __metadata("design:type", Array)
], SyncUpdate.prototype, "accountData", void 0);
__decorate([
    Field(() => [PresenceStatus]),
    __metadata("design:type", Array)
], SyncUpdate.prototype, "presence", void 0);
__decorate([
    Field(() => GraphQLJSONObject, { description: "The same delta as the /sync response body (to-device, device lists, stripped state ...)." }),
    __metadata("design:type", Object)
], SyncUpdate.prototype, "json", void 0);
SyncUpdate = __decorate([
    ObjectType({ description: "One /sync delta: everything that changed for the viewer up to `nextBatch`." })
], SyncUpdate);
export { SyncUpdate };
function receiptsOf(content) {
    const out = [];
    for (const [eventId, byType] of Object.entries(content))
        for (const [receiptType, byUser] of Object.entries(byType))
            for (const [userId, r] of Object.entries(byUser))
                out.push(Object.assign(new Receipt(), { eventId, userId, receiptType, threadId: r.thread_id ?? null, ts: r.ts }));
    return out;
}
const receiptFromRow = (r) => Object.assign(new Receipt(), { eventId: r.eventId, userId: r.userId, receiptType: r.receiptType, threadId: r.threadId === "" ? null : r.threadId, ts: r.ts });
const events = (list, roomId) => list.map((e) => Event.from(e, roomId));
const entries = (list, roomId) => list.map((e) => Object.assign(new AccountDataEntry(), { type: e.type, roomId, content: e.content }));
/** The typed form of a /sync response. */
export function syncUpdateOf(res) {
    const joinedRooms = Object.entries(res.rooms.join).map(([roomId, room]) => {
        const typing = room.ephemeral.events.find((e) => e.type === "m.typing");
        const receipts = room.ephemeral.events.filter((e) => e.type === "m.receipt").flatMap((e) => receiptsOf(e.content));
        return Object.assign(new JoinedRoomSync(), {
            roomId,
            timeline: events(room.timeline.events, roomId),
            limited: room.timeline.limited,
            prevBatch: room.timeline.prev_batch,
            state: events(room.state.events, roomId),
            typing: typing ? (typing.content.user_ids ?? []) : null,
            receipts,
            accountData: entries(room.account_data.events, roomId),
            unreadNotifications: UnreadCount.of(room.unread_notifications),
            unreadThreadNotifications: Object.entries(room.unread_thread_notifications ?? {}).map(([threadId, c]) => Object.assign(new ThreadUnreadCount(), { threadId, count: UnreadCount.of(c) })),
        });
    });
    return Object.assign(new SyncUpdate(), {
        nextBatch: res.next_batch,
        joinedRooms,
        invitedRoomIds: Object.keys(res.rooms.invite),
        leftRoomIds: Object.keys(res.rooms.leave),
        accountData: entries(res.account_data.events, null),
        presence: res.presence.events.map((e) => PresenceStatus.from(e.sender, e.content)),
        json: res,
    });
}
/** Authenticates a subscription and runs its checks, mapping errors (setup runs outside the middleware). */
async function subscriber(ctx, check) {
    try {
        const r = await ctx.requester();
        if (check)
            await check(ctx.s, r);
        return r;
    }
    catch (err) {
        throw toGraphqlError(err, ctx.s.log);
    }
}
let EphemeralResolver = class EphemeralResolver {
    async setTyping(roomId, typing, timeout, ctx) {
        const r = await ctx.requester();
        await setTyping(ctx.s, r, roomId, r.userId, parseTypingBody(timeout === null ? { typing } : { typing, timeout }));
        return true;
    }
    async markRead(roomId, eventId, threadId, isPrivate, fullyRead, ctx) {
        return markRead(ctx.s, await ctx.requester(), roomId, eventId, { threadId, private: isPrivate, fullyRead });
    }
    async setPresence(presence, statusMsg, ctx) {
        const r = await ctx.requester();
        await setPresence(ctx.s, r, r.userId, parsePresenceBody({ presence, status_msg: statusMsg }));
        return PresenceStatus.from(r.userId, await getPresence(ctx.s, r, r.userId));
    }
    async presence(userId, ctx) {
        return PresenceStatus.from(userId, await getPresence(ctx.s, await ctx.requester(), userId));
    }
    typing(update, _roomId) {
        return update;
    }
    receipts(update, _roomId) {
        return update;
    }
    syncUpdates(update, _since, _filter) {
        return update;
    }
};
__decorate([
    Mutation(() => Boolean, { description: "Says the viewer is typing in a room for `timeout` ms (default 30 s, at most 120 s), or stopped (PUT /rooms/{roomId}/typing/{userId})." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("typing", () => Boolean)),
    __param(2, Arg("timeout", () => Int, { nullable: true })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Boolean, Object, Object]),
    __metadata("design:returntype", Promise)
], EphemeralResolver.prototype, "setTyping", null);
__decorate([
    Mutation(() => Boolean, {
        description: "Marks `eventId` read (POST /rooms/{roomId}/receipt): an m.read receipt, or m.read.private when `private`; in `threadId` " +
            "(`main` or a thread root) or unthreaded; with `fullyRead` the read marker (m.fully_read) moves there too. Returns whether a receipt was stored.",
    }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("eventId", () => String)),
    __param(2, Arg("threadId", () => String, { nullable: true })),
    __param(3, Arg("private", () => Boolean, { nullable: true })),
    __param(4, Arg("fullyRead", () => Boolean, { nullable: true })),
    __param(5, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], EphemeralResolver.prototype, "markRead", null);
__decorate([
    Mutation(() => PresenceStatus, { description: "Sets the viewer's presence and status message (PUT /presence/{userId}/status)." }),
    __param(0, Arg("presence", () => String)),
    __param(1, Arg("statusMsg", () => String, { nullable: true })),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object, Object]),
    __metadata("design:returntype", Promise)
], EphemeralResolver.prototype, "setPresence", null);
__decorate([
    Query(() => PresenceStatus, { description: "A user's presence: the viewer's own or a room-mate's (GET /presence/{userId}/status)." }),
    __param(0, Arg("userId", () => String)),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object]),
    __metadata("design:returntype", Promise)
], EphemeralResolver.prototype, "presence", null);
__decorate([
    Subscription(() => TypingUpdate, {
        description: "Who is typing in a room the viewer is joined to: the current list first, then each change (expiries included).",
        subscribe: async ({ args, context }) => {
            const ctx = context;
            const roomId = args.roomId;
            let live;
            await subscriber(ctx, async (s, r) => void (live = await LiveTyping.start(s, r, roomId)));
            const next = async () => {
                const userIds = await live.next();
                return userIds ? [Object.assign(new TypingUpdate(), { roomId, userIds })] : [];
            };
            return notifierIterable(ctx.s, { wants: (n) => n.kind === "stream" && live.concerns(n.n), toPayloads: next, backlog: next });
        },
    }),
    __param(0, Root()),
    __param(1, Arg("roomId", () => String)),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [TypingUpdate, String]),
    __metadata("design:returntype", TypingUpdate)
], EphemeralResolver.prototype, "typing", null);
__decorate([
    Subscription(() => ReceiptsUpdate, {
        description: "Receipts of a room the viewer is joined to: first all current ones (possibly none), then each change as it is sent " +
            "(the viewer's private receipts included, nobody else's).",
        subscribe: async ({ args, context }) => {
            const ctx = context;
            const roomId = args.roomId;
            let live;
            await subscriber(ctx, async (s, r) => void (live = await LiveReceipts.start(s, r, roomId)));
            const update = (rows) => Object.assign(new ReceiptsUpdate(), { roomId, receipts: rows.map(receiptFromRow) });
            return notifierIterable(ctx.s, {
                wants: (n) => n.kind === "stream" && live.concerns(n.n),
                toPayloads: async (n) => {
                    const rows = n.kind === "stream" ? await live.next(n.n.position) : [];
                    return rows.length > 0 ? [update(rows)] : [];
                },
                backlog: async () => [update(await live.backlog())],
            });
        },
    }),
    __param(0, Root()),
    __param(1, Arg("roomId", () => String)),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [ReceiptsUpdate, String]),
    __metadata("design:returntype", ReceiptsUpdate)
], EphemeralResolver.prototype, "receipts", null);
__decorate([
    Subscription(() => SyncUpdate, {
        description: "The viewer's /sync deltas as they happen (the notifier that wakes /sync, no polling). Without `since` the first " +
            "update is an initial sync; each update carries `nextBatch`: resubscribe with it to continue without a gap. " +
            "`filter` is a filter ID or JSON, as /sync's.",
        subscribe: async ({ args, context }) => {
            const ctx = context;
            let live;
            await subscriber(ctx, async (s, r) => {
                live = new LiveSync(s, r, await resolveSyncFilter(s, r, args.filter ?? undefined), args.since ?? undefined);
            });
            const next = async () => {
                const res = await live.next();
                return res ? [syncUpdateOf(res)] : [];
            };
            return notifierIterable(ctx.s, { wants: (n) => live.concerns(n), toPayloads: next, backlog: next });
        },
    }),
    __param(0, Root()),
    __param(1, Arg("since", () => String, { nullable: true })),
    __param(2, Arg("filter", () => String, { nullable: true })),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [SyncUpdate, Object, Object]),
    __metadata("design:returntype", SyncUpdate)
], EphemeralResolver.prototype, "syncUpdates", null);
EphemeralResolver = __decorate([
    Resolver()
], EphemeralResolver);
export { EphemeralResolver };
