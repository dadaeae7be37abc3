// Mutations on rooms, each over the domain operation its REST twin calls: createRoom (POST /createRoom),
// joinRoom, knockRoom, leaveRoom, forgetRoom, invite, kick, ban, unban (POST /join, /knock,
// /rooms/{roomId}/leave|forget|invite|kick|ban|unban),
// sendMessage (PUT /rooms/{roomId}/send/{type}/{txnId}: the same transaction IDs, so a retry from either
// face returns the same event), sendStateEvent (PUT /rooms/{roomId}/state/...) and redactEvent
// (PUT /rooms/{roomId}/redact/...). They return the changed room, or the event read back as the viewer sees it.
import "reflect-metadata";
import { Arg, Ctx, Mutation, Resolver } from "type-graphql";
import { GraphQLJSONObject } from "../types/json.ts";
import { MatrixError } from "../../domain/errors.ts";
import { createRoom } from "../../domain/rooms/create-room.ts";
import { banUser, forgetRoom, inviteUser, joinRoom, kickUser, knockRoom, leaveRoom, unbanUser } from "../../domain/rooms/membership.ts";
import { redactEvent, sendMessage, sendStateEvent } from "../../domain/rooms/send.ts";
import { getRoomEvent } from "../../domain/rooms/read.ts";
import type { GraphqlContext } from "../context.ts";
import { Event } from "../types/event.ts";
import { CreateRoomInput, Room } from "../types/room.ts";

/** A JSON body from the given fields, leaving out the ones not given (undefined or null). */
function body(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
}

/** The room after a change: what this request cached of it (summary, membership, counts, newest events) is stale. */
function changed(ctx: GraphqlContext, roomId: string): Room {
  const l = ctx.loaders;
  l.roomSummary.clear(roomId);
  l.viewerMembership.clear(roomId);
  l.memberCounts.clear(roomId);
  l.unreadCounts.clear(roomId);
  l.latestTimeline.clearAll();
  return Room.of(roomId);
}

async function eventAsViewer(ctx: GraphqlContext, roomId: string, eventId: string): Promise<Event> {
  return Event.from(await getRoomEvent(ctx.s, await ctx.requester(), roomId, eventId), roomId);
}

const reasonArg = { nullable: true, description: "Shown to the members (content.reason)." } as const;

/** invite / kick / ban / unban: the same domain call shape, then the changed room. */
async function moderate(
  ctx: GraphqlContext,
  op: typeof inviteUser,
  roomId: string,
  userId: string,
  reason: string | null | undefined,
): Promise<Room> {
  await op(ctx.s, await ctx.requester(), roomId, body({ user_id: userId, reason }));
  return changed(ctx, roomId);
}

@Resolver()
export class RoomMutationResolver {
  @Mutation(() => Room, { nullable: true, description: "Creates a room (POST /createRoom) and returns it." })
  async createRoom(@Arg("input", () => CreateRoomInput) input: CreateRoomInput, @Ctx() ctx: GraphqlContext): Promise<Room> {
    const r = await ctx.requester();
    const { room_id } = await createRoom(
      ctx.s,
      r,
      body({
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
      }),
    );
    return changed(ctx, room_id);
  }

  @Mutation(() => Room, { nullable: true, description: "Joins a room by ID or alias (POST /join/{roomIdOrAlias}); returns it." })
  async joinRoom(
    @Arg("roomIdOrAlias", () => String) roomIdOrAlias: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Arg("via", () => [String], { nullable: true, description: "Servers to join through when this server is not in the room (POST /join's via)." }) via: string[] | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    const { room_id } = await joinRoom(ctx.s, await ctx.requester(), roomIdOrAlias, body({ reason }), undefined, via ?? []);
    return changed(ctx, room_id);
  }

  @Mutation(() => Boolean, { nullable: true, description: "Leaves a room, or declines an invite (POST /rooms/{roomId}/leave). Returns true." })
  async leaveRoom(
    @Arg("roomId", () => String) roomId: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    await leaveRoom(ctx.s, await ctx.requester(), roomId, body({ reason }));
    changed(ctx, roomId);
    return true;
  }

  @Mutation(() => Room, {
    description:
      "Knocks on a room whose join rule allows it (POST /knock/{roomIdOrAlias}), through `via` when this server is not in it; " +
      "returns the room. M_FORBIDDEN when the room version or join rules do not allow knocking or the viewer is in or banned.",
  })
  async knockRoom(
    @Arg("roomIdOrAlias", () => String) roomIdOrAlias: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Arg("via", () => [String], { nullable: true, description: "Servers to knock through when this server is not in the room." }) via: string[] | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    const { room_id } = await knockRoom(ctx.s, await ctx.requester(), roomIdOrAlias, body({ reason }), via ?? []);
    return changed(ctx, room_id);
  }

  @Mutation(() => Boolean, {
    description: "Forgets a room the viewer left (POST /rooms/{roomId}/forget): it no longer appears to them. M_UNKNOWN while still in it. Returns true.",
  })
  async forgetRoom(@Arg("roomId", () => String) roomId: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await forgetRoom(ctx.s, await ctx.requester(), roomId);
    changed(ctx, roomId);
    return true;
  }

  @Mutation(() => Room, { nullable: true, description: "Invites a user (POST /rooms/{roomId}/invite); returns the room." })
  async invite(
    @Arg("roomId", () => String) roomId: string,
    @Arg("userId", () => String) userId: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    return moderate(ctx, inviteUser, roomId, userId, reason);
  }

  @Mutation(() => Room, { nullable: true, description: "Kicks a user (POST /rooms/{roomId}/kick); returns the room." })
  async kick(
    @Arg("roomId", () => String) roomId: string,
    @Arg("userId", () => String) userId: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    return moderate(ctx, kickUser, roomId, userId, reason);
  }

  @Mutation(() => Room, { nullable: true, description: "Bans a user (POST /rooms/{roomId}/ban); returns the room." })
  async ban(
    @Arg("roomId", () => String) roomId: string,
    @Arg("userId", () => String) userId: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    return moderate(ctx, banUser, roomId, userId, reason);
  }

  @Mutation(() => Room, { nullable: true, description: "Lifts a ban (POST /rooms/{roomId}/unban); returns the room." })
  async unban(
    @Arg("roomId", () => String) roomId: string,
    @Arg("userId", () => String) userId: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Room> {
    return moderate(ctx, unbanUser, roomId, userId, reason);
  }

  @Mutation(() => Event, {
    nullable: true,
    description:
      "Sends a message event (PUT /rooms/{roomId}/send/{type}/{txnId}) and returns it. Give `content`, or `body` " +
      "(with `msgtype`, default m.text) as a shortcut for a text message. Sending again with the same txnId from the " +
      "same device returns the same event.",
  })
  async sendMessage(
    @Arg("roomId", () => String) roomId: string,
    @Arg("txnId", () => String, { description: "The client's transaction ID, unique per device." }) txnId: string,
    @Arg("type", () => String, { defaultValue: "m.room.message" }) type: string,
    @Arg("content", () => GraphQLJSONObject, { nullable: true }) content: Record<string, unknown> | null | undefined,
    @Arg("body", () => String, { nullable: true, description: "Shortcut: content = { msgtype, body }." }) text: string | null | undefined,
    @Arg("msgtype", () => String, { nullable: true, description: "With `body`: default m.text." }) msgtype: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Event> {
    if (content != null && (text != null || msgtype != null))
      throw new MatrixError("M_INVALID_PARAM", "Give either content or body/msgtype, not both", 400);
    if (content == null && text == null) throw new MatrixError("M_MISSING_PARAM", "sendMessage needs content or body", 400);
    const sent = content ?? { msgtype: msgtype ?? "m.text", body: text };
    const { event_id } = await sendMessage(ctx.s, await ctx.requester(), roomId, type, txnId, sent);
    changed(ctx, roomId);
    return eventAsViewer(ctx, roomId, event_id);
  }

  @Mutation(() => Event, {
    nullable: true,
    description: "Sets a state event (PUT /rooms/{roomId}/state/{type}/{stateKey}) and returns it (an identical re-send returns the existing one).",
  })
  async sendStateEvent(
    @Arg("roomId", () => String) roomId: string,
    @Arg("type", () => String) type: string,
    @Arg("stateKey", () => String, { defaultValue: "" }) stateKey: string,
    @Arg("content", () => GraphQLJSONObject) content: Record<string, unknown>,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Event> {
    const { event_id } = await sendStateEvent(ctx.s, await ctx.requester(), roomId, type, stateKey, content);
    changed(ctx, roomId);
    return eventAsViewer(ctx, roomId, event_id);
  }

  @Mutation(() => Event, { nullable: true, description: "Redacts an event (PUT /rooms/{roomId}/redact/{eventId}/{txnId}); returns the redaction." })
  async redactEvent(
    @Arg("roomId", () => String) roomId: string,
    @Arg("eventId", () => String) eventId: string,
    @Arg("txnId", () => String, { description: "The client's transaction ID, unique per device." }) txnId: string,
    @Arg("reason", () => String, reasonArg) reason: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Event> {
    const { event_id } = await redactEvent(ctx.s, await ctx.requester(), roomId, eventId, txnId, body({ reason }));
    changed(ctx, roomId);
    return eventAsViewer(ctx, roomId, event_id);
  }
}
