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
// Mutations on rooms, each over the domain operation its REST twin calls: createRoom (POST /createRoom),
// joinRoom, leaveRoom, invite, kick, ban, unban (POST /join, /rooms/{roomId}/leave|invite|kick|ban|unban),
// sendMessage (PUT /rooms/{roomId}/send/{type}/{txnId}: the same transaction IDs, so a retry from either
// face returns the same event), sendStateEvent (PUT /rooms/{roomId}/state/...) and redactEvent
// (PUT /rooms/{roomId}/redact/...). They return the changed room, or the event read back as the viewer sees it.
import "reflect-metadata";
import { Arg, Ctx, Mutation, Resolver } from "type-graphql";
import { GraphQLJSONObject } from "../types/json.js";
import { MatrixError } from "../../domain/errors.js";
import { createRoom } from "../../domain/rooms/create-room.js";
import { banUser, inviteUser, joinRoom, kickUser, leaveRoom, unbanUser } from "../../domain/rooms/membership.js";
import { redactEvent, sendMessage, sendStateEvent } from "../../domain/rooms/send.js";
import { getRoomEvent } from "../../domain/rooms/read.js";
import { Event } from "../types/event.js";
import { CreateRoomInput, Room } from "../types/room.js";
/** A JSON body from the given fields, leaving out the ones not given (undefined or null). */
function body(fields) {
    return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
}
/** The room after a change: its cached summary in this request is stale. */
function changed(ctx, roomId) {
    ctx.loaders.roomSummary.clear(roomId);
    return Room.of(roomId);
}
async function eventAsViewer(ctx, roomId, eventId) {
    return Event.from(await getRoomEvent(ctx.s, await ctx.requester(), roomId, eventId), roomId);
}
const reasonArg = { nullable: true, description: "Shown to the members (content.reason)." };
/** invite / kick / ban / unban: the same domain call shape, then the changed room. */
async function moderate(ctx, op, roomId, userId, reason) {
    await op(ctx.s, await ctx.requester(), roomId, body({ user_id: userId, reason }));
    return changed(ctx, roomId);
}
let RoomMutationResolver = class RoomMutationResolver {
    async createRoom(input, ctx) {
        const r = await ctx.requester();
        const { room_id } = await createRoom(ctx.s, r, body({
            name: input.name,
            topic: input.topic,
            visibility: input.visibility,
            preset: input.preset,
            room_version: input.roomVersion,
            invite: input.invite,
            is_direct: input.isDirect,
            room_alias_name: input.roomAliasName,
            initial_state: input.initialState?.map((e) => ({ type: e.type, state_key: e.stateKey, content: e.content })),
            creation_content: input.creationContent,
            power_level_content_override: input.powerLevelContentOverride,
        }));
        return changed(ctx, room_id);
    }
    async joinRoom(roomIdOrAlias, reason, via, ctx) {
        const { room_id } = await joinRoom(ctx.s, await ctx.requester(), roomIdOrAlias, body({ reason }), undefined, via ?? []);
        return changed(ctx, room_id);
    }
    async leaveRoom(roomId, reason, ctx) {
        await leaveRoom(ctx.s, await ctx.requester(), roomId, body({ reason }));
        changed(ctx, roomId);
        return true;
    }
    async invite(roomId, userId, reason, ctx) {
        return moderate(ctx, inviteUser, roomId, userId, reason);
    }
    async kick(roomId, userId, reason, ctx) {
        return moderate(ctx, kickUser, roomId, userId, reason);
    }
    async ban(roomId, userId, reason, ctx) {
        return moderate(ctx, banUser, roomId, userId, reason);
    }
    async unban(roomId, userId, reason, ctx) {
        return moderate(ctx, unbanUser, roomId, userId, reason);
    }
    async sendMessage(roomId, txnId, type, content, text, msgtype, ctx) {
        if (content != null && (text != null || msgtype != null))
            throw new MatrixError("M_INVALID_PARAM", "Give either content or body/msgtype, not both", 400);
        if (content == null && text == null)
            throw new MatrixError("M_MISSING_PARAM", "sendMessage needs content or body", 400);
        const sent = content ?? { msgtype: msgtype ?? "m.text", body: text };
        const { event_id } = await sendMessage(ctx.s, await ctx.requester(), roomId, type, txnId, sent);
        return eventAsViewer(ctx, roomId, event_id);
    }
    async sendStateEvent(roomId, type, stateKey, content, ctx) {
        const { event_id } = await sendStateEvent(ctx.s, await ctx.requester(), roomId, type, stateKey, content);
        changed(ctx, roomId);
        return eventAsViewer(ctx, roomId, event_id);
    }
    async redactEvent(roomId, eventId, txnId, reason, ctx) {
        const { event_id } = await redactEvent(ctx.s, await ctx.requester(), roomId, eventId, txnId, body({ reason }));
        changed(ctx, roomId);
        return eventAsViewer(ctx, roomId, event_id);
    }
};
__decorate([
    Mutation(() => Room, { nullable: true, description: "Creates a room (POST /createRoom) and returns it." }),
    __param(0, Arg("input", () => CreateRoomInput)),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [CreateRoomInput, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "createRoom", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Joins a room by ID or alias (POST /join/{roomIdOrAlias}); returns it." }),
    __param(0, Arg("roomIdOrAlias", () => String)),
    __param(1, Arg("reason", () => String, reasonArg)),
    __param(2, Arg("via", () => [String], { nullable: true, description: "Servers to join through when this server is not in the room (POST /join's via)." })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "joinRoom", null);
__decorate([
    Mutation(() => Boolean, { nullable: true, description: "Leaves a room, or declines an invite (POST /rooms/{roomId}/leave). Returns true." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("reason", () => String, reasonArg)),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "leaveRoom", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Invites a user (POST /rooms/{roomId}/invite); returns the room." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("userId", () => String)),
    __param(2, Arg("reason", () => String, reasonArg)),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "invite", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Kicks a user (POST /rooms/{roomId}/kick); returns the room." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("userId", () => String)),
    __param(2, Arg("reason", () => String, reasonArg)),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "kick", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Bans a user (POST /rooms/{roomId}/ban); returns the room." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("userId", () => String)),
    __param(2, Arg("reason", () => String, reasonArg)),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "ban", null);
__decorate([
    Mutation(() => Room, { nullable: true, description: "Lifts a ban (POST /rooms/{roomId}/unban); returns the room." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("userId", () => String)),
    __param(2, Arg("reason", () => String, reasonArg)),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "unban", null);
__decorate([
    Mutation(() => Event, {
        nullable: true,
        description: "Sends a message event (PUT /rooms/{roomId}/send/{type}/{txnId}) and returns it. Give `content`, or `body` " +
            "(with `msgtype`, default m.text) as a shortcut for a text message. Sending again with the same txnId from the " +
            "same device returns the same event.",
    }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("txnId", () => String, { description: "The client's transaction ID, unique per device." })),
    __param(2, Arg("type", () => String, { defaultValue: "m.room.message" })),
    __param(3, Arg("content", () => GraphQLJSONObject, { nullable: true })),
    __param(4, Arg("body", () => String, { nullable: true, description: "Shortcut: content = { msgtype, body }." })),
    __param(5, Arg("msgtype", () => String, { nullable: true, description: "With `body`: default m.text." })),
    __param(6, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, String, Object, Object, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "sendMessage", null);
__decorate([
    Mutation(() => Event, {
        nullable: true,
        description: "Sets a state event (PUT /rooms/{roomId}/state/{type}/{stateKey}) and returns it (an identical re-send returns the existing one).",
    }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("type", () => String)),
    __param(2, Arg("stateKey", () => String, { defaultValue: "" })),
    __param(3, Arg("content", () => GraphQLJSONObject)),
    __param(4, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "sendStateEvent", null);
__decorate([
    Mutation(() => Event, { nullable: true, description: "Redacts an event (PUT /rooms/{roomId}/redact/{eventId}/{txnId}); returns the redaction." }),
    __param(0, Arg("roomId", () => String)),
    __param(1, Arg("eventId", () => String)),
    __param(2, Arg("txnId", () => String, { description: "The client's transaction ID, unique per device." })),
    __param(3, Arg("reason", () => String, reasonArg)),
    __param(4, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], RoomMutationResolver.prototype, "redactEvent", null);
RoomMutationResolver = __decorate([
    Resolver()
], RoomMutationResolver);
export { RoomMutationResolver };
