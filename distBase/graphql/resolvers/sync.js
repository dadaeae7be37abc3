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
// Per-user data and live updates on the GraphQL face: `viewer.accountData(type, roomId)` and
// `setAccountData` (the domain operations of GET/PUT /user/{userId}/[rooms/{roomId}/]account_data/{type}),
// and the `roomTimeline(roomId, since)` subscription: new events of a room the viewer can see, pushed by
// the notifier that wakes /sync (src/graphql/subscriptions.ts), each with a cursor to resume from.
import "reflect-metadata";
import { Arg, Ctx, Field, FieldResolver, Mutation, ObjectType, Resolver, Root, Subscription } from "type-graphql";
import { GraphQLJSONObject } from "../types/json.js";
import { getAccountData, setAccountData } from "../../domain/account-data/account-data.js";
import { MatrixError } from "../../domain/errors.js";
import { parseStreamToken, streamToken } from "../../domain/rooms/read.js";
import { checkLiveAccess, timelineAfter } from "../../domain/rooms/live-timeline.js";
import { eventsPosition } from "../../domain/sync/providers/events.js";
import { Event } from "../types/event.js";
import { Viewer } from "../types/viewer.js";
import { notifierIterable } from "../subscriptions.js";
import { toGraphqlError } from "../errors.js";
let AccountDataEntry = class AccountDataEntry {
    type;
    roomId;
    content;
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], AccountDataEntry.prototype, "type", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], AccountDataEntry.prototype, "roomId", void 0);
__decorate([
    Field(() => GraphQLJSONObject),
    __metadata("design:type", Object)
], AccountDataEntry.prototype, "content", void 0);
AccountDataEntry = __decorate([
    ObjectType({ description: "One account data entry of the viewer: global (roomId null) or for one room." })
], AccountDataEntry);
export { AccountDataEntry };
let TimelineUpdate = class TimelineUpdate {
    event;
    cursor;
};
__decorate([
    Field(() => Event),
    __metadata("design:type", Event)
], TimelineUpdate.prototype, "event", void 0);
__decorate([
    Field(() => String, { description: "Pass as `since` to resume after this event without missing any; also a /messages token." }),
    __metadata("design:type", String)
], TimelineUpdate.prototype, "cursor", void 0);
TimelineUpdate = __decorate([
    ObjectType({ description: "A new event in a room's timeline, with the stream token just after it." })
], TimelineUpdate);
export { TimelineUpdate };
let ViewerAccountDataResolver = class ViewerAccountDataResolver {
    async accountData(viewer, type, roomId, ctx) {
        try {
            return await getAccountData(ctx.s, viewer.requester, viewer.userId, roomId ?? undefined, type);
        }
        catch (err) {
            if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND")
                return null;
            throw err;
        }
    }
};
__decorate([
    FieldResolver(() => GraphQLJSONObject, { nullable: true, description: "The viewer's account data of `type` (in `roomId` when given); null when unset." }),
    __param(0, Root()),
    __param(1, Arg("type", () => String)),
    __param(2, Arg("roomId", () => String, { nullable: true })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, String, Object, Object]),
    __metadata("design:returntype", Promise)
], ViewerAccountDataResolver.prototype, "accountData", null);
ViewerAccountDataResolver = __decorate([
    Resolver(() => Viewer)
], ViewerAccountDataResolver);
export { ViewerAccountDataResolver };
let SyncResolver = class SyncResolver {
    async setAccountData(type, content, roomId, ctx) {
        const r = await ctx.requester();
        await setAccountData(ctx.s, r, r.userId, roomId ?? undefined, type, content);
        return Object.assign(new AccountDataEntry(), { type, roomId, content });
    }
    roomTimeline(update, _roomId, _since) {
        return update;
    }
};
__decorate([
    Mutation(() => AccountDataEntry, { description: "Sets the viewer's account data (PUT /user/{userId}/[rooms/{roomId}/]account_data/{type})." }),
    __param(0, Arg("type", () => String)),
    __param(1, Arg("content", () => GraphQLJSONObject)),
    __param(2, Arg("roomId", () => String, { nullable: true })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], SyncResolver.prototype, "setAccountData", null);
__decorate([
    Subscription(() => TimelineUpdate, {
        description: "New events of a room the viewer may read, as they are stored (the notifier that wakes /sync). With `since` " +
            "(a cursor or a /sync or /messages token) the events after it come first, so a resubscribing client misses nothing.",
        subscribe: async ({ args, context }) => {
            const ctx = context;
            const roomId = args.roomId;
            let r;
            let last;
            try {
                r = await ctx.requester();
                await checkLiveAccess(ctx.s, r, roomId);
                last = args.since ? parseStreamToken(args.since, "since") : await eventsPosition(ctx.s).get();
            }
            catch (err) {
                // Subscription setup runs outside the resolver middleware: map the error here.
                throw toGraphqlError(err, ctx.s.log);
            }
            const toUpdates = (events) => events
                .filter((e) => e.streamOrdering > last)
                .map((e) => {
                last = e.streamOrdering;
                return { event: Event.from(e.event, roomId), cursor: streamToken(e.streamOrdering) };
            });
            return notifierIterable(ctx.s, {
                wants: (n) => n.kind === "event" && n.n.roomId === roomId,
                toPayloads: async (n) => (n.kind === "event" && n.n.streamOrdering > last ? toUpdates(await timelineAfter(ctx.s, r, roomId, last, n.n.streamOrdering)) : []),
                backlog: args.since ? async () => toUpdates(await timelineAfter(ctx.s, r, roomId, last)) : undefined,
            });
        },
    }),
    __param(0, Root()),
    __param(1, Arg("roomId", () => String)),
    __param(2, Arg("since", () => String, { nullable: true })),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [TimelineUpdate, String, Object]),
    __metadata("design:returntype", TimelineUpdate)
], SyncResolver.prototype, "roomTimeline", null);
SyncResolver = __decorate([
    Resolver()
], SyncResolver);
export { SyncResolver };
