// Reading rooms: `room(roomId)`, the viewer's rooms (a connection by membership), and the fields of Room.
// name, topic, avatarUrl, roomVersion and membership come from the per-request room-summary DataLoader,
// so a page of rooms costs a few queries in all; state, members and timeline call the domain reads of
// GET /rooms/{roomId}/state, /members and /messages, with the same access rules.
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Query, Resolver, Root } from "type-graphql";
import { AVATAR_HTTP_URL_DOC, SIZE_ARG_DOC, avatarHttpUrl } from "../types/media.ts";
import { MatrixError } from "../../domain/errors.ts";
import { getMembers, readMessages, getRoomEvent, getRoomState, getRoomStateEvent, parseStreamToken, streamToken } from "../../domain/rooms/read.ts";
import { eventStreamPositions, roomNotVisible, userRoomsPage, type RoomSummary } from "../../domain/rooms/batch-reads.ts";
import type { GraphqlContext } from "../context.ts";
import { PageInfo, pageSize } from "../types/connection.ts";
import { Event, EventConnection, EventEdge } from "../types/event.ts";
import { Member, MemberConnection, MemberEdge, Membership, Room, RoomConnection, RoomEdge } from "../types/room.ts";
import { Viewer } from "../types/viewer.ts";

async function summaryOf(ctx: GraphqlContext, roomId: string): Promise<RoomSummary> {
  const summary = await ctx.loaders.roomSummary.load(roomId);
  if (!summary) throw roomNotVisible();
  return summary;
}

/** A room's current member counts for a viewer who sees its current state (member, invitee, knocker, world_readable). */
async function currentCounts(ctx: GraphqlContext, roomId: string): Promise<{ joined: number; invited: number } | undefined> {
  const summary = await summaryOf(ctx, roomId);
  const m = summary.membership;
  if (m !== "join" && m !== "invite" && m !== "knock" && !summary.worldReadable) return undefined;
  return ctx.loaders.memberCounts.load(roomId);
}

@Resolver(() => Room)
export class RoomResolver {
  @Query(() => Room, {
    nullable: true,
    description: "A room by ID, if the viewer is or was in it, is invited, or may read it (world_readable); else M_FORBIDDEN.",
  })
  async room(@Arg("roomId", () => String) roomId: string, @Ctx() ctx: GraphqlContext): Promise<Room> {
    await summaryOf(ctx, roomId);
    return Room.of(roomId);
  }

  @FieldResolver(() => String)
  async roomVersion(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<string> {
    return (await summaryOf(ctx, room.roomId)).roomVersion;
  }

  @FieldResolver(() => String, { nullable: true, description: "m.room.name (as the viewer sees it: at their leave for former members)." })
  async name(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<string | null> {
    return (await summaryOf(ctx, room.roomId)).name ?? null;
  }

  @FieldResolver(() => String, { nullable: true, description: "m.room.topic." })
  async topic(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<string | null> {
    return (await summaryOf(ctx, room.roomId)).topic ?? null;
  }

  @FieldResolver(() => String, { nullable: true, description: "m.room.avatar's url (an mxc:// URI; for a browser, use avatarHttpUrl)." })
  async avatarUrl(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<string | null> {
    return (await summaryOf(ctx, room.roomId)).avatarUrl ?? null;
  }

  @FieldResolver(() => String, { nullable: true, description: AVATAR_HTTP_URL_DOC })
  async avatarHttpUrl(
    @Root() room: Room,
    @Arg("size", () => Int, { nullable: true, description: SIZE_ARG_DOC }) size: number | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string | null> {
    return avatarHttpUrl(ctx, (await summaryOf(ctx, room.roomId)).avatarUrl, size);
  }

  @FieldResolver(() => Membership, { nullable: true, description: "The viewer's membership (null: none, e.g. a world_readable room)." })
  async membership(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<Membership | null> {
    return ((await summaryOf(ctx, room.roomId)).membership as Membership | undefined) ?? null;
  }

  @FieldResolver(() => Int, { nullable: true, description: "How many users are joined now (null for a room the viewer left: its count then is not theirs to see)." })
  async joinedMemberCount(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<number | null> {
    return (await currentCounts(ctx, room.roomId))?.joined ?? null;
  }

  @FieldResolver(() => Int, { nullable: true, description: "How many users are invited now (null for a room the viewer left)." })
  async invitedMemberCount(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<number | null> {
    return (await currentCounts(ctx, room.roomId))?.invited ?? null;
  }

  @FieldResolver(() => [Event], {
    description:
      "State events (GET /rooms/{roomId}/state): all of them, those of one type, or the one of (type, stateKey). " +
      "Current state for members, the state at their leave for former members.",
  })
  async state(
    @Root() room: Room,
    @Arg("type", () => String, { nullable: true }) type: string | null | undefined,
    @Arg("stateKey", () => String, { nullable: true }) stateKey: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Event[]> {
    const r = await ctx.requester();
    const known = await ctx.loaders.viewerMembership.load(room.roomId);
    if (type != null && stateKey != null) {
      try {
        return [Event.from(await getRoomStateEvent(ctx.s, r, room.roomId, type, stateKey, known), room.roomId)];
      } catch (err) {
        if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND") return [];
        throw err;
      }
    }
    return (await getRoomState(ctx.s, r, room.roomId, known))
      .filter((e) => (type == null || e.type === type) && (stateKey == null || e.state_key === stateKey))
      .map((e) => Event.from(e, room.roomId));
  }

  @FieldResolver(() => Event, { nullable: true, description: "One event (GET /rooms/{roomId}/event/{eventId}); M_NOT_FOUND when the viewer may not see it." })
  async event(@Root() room: Room, @Arg("eventId", () => String) eventId: string, @Ctx() ctx: GraphqlContext): Promise<Event> {
    return Event.from(await getRoomEvent(ctx.s, await ctx.requester(), room.roomId, eventId), room.roomId);
  }

  @FieldResolver(() => MemberConnection, { description: "Members (GET /rooms/{roomId}/members), ordered by user ID; cursors are user IDs." })
  async members(
    @Root() room: Room,
    @Arg("first", () => Int, { nullable: true, defaultValue: 50, description: "Page size." }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Arg("membership", () => [Membership], { nullable: true, description: "Only these memberships (default: all)." })
    membership: Membership[] | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<MemberConnection> {
    const size = pageSize(first, 50, "first");
    const only = membership?.length === 1 ? membership[0] : undefined;
    const events = await getMembers(ctx.s, await ctx.requester(), room.roomId, { membership: only }, await ctx.loaders.viewerMembership.load(room.roomId));
    const wanted = membership ? new Set<string>(membership) : undefined;
    const all = events
      .map((e) => Member.from(e, room.roomId))
      .filter((m) => !wanted || wanted.has(m.membership))
      .sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
    let start = after == null ? 0 : all.findIndex((m) => m.userId > after);
    if (start < 0) start = all.length;
    const page = all.slice(start, start + size);
    return Object.assign(new MemberConnection(), {
      edges: page.map((m) => Object.assign(new MemberEdge(), { node: m, cursor: m.userId })),
      pageInfo: PageInfo.of({ hasNextPage: start + size < all.length, hasPreviousPage: start > 0, cursors: page.map((m) => m.userId) }),
    });
  }

  @FieldResolver(() => EventConnection, {
    description:
      "The timeline, paged backwards (GET /rooms/{roomId}/messages?dir=b): the `last` events before the cursor " +
      "`before` (default: the newest), oldest first. An edge's cursor is the stream token just before its event, " +
      "so `before: pageInfo.startCursor` gives the page before and equals /messages' `end`. hasPreviousPage says " +
      "whether older events may remain; hasNextPage is always false (newer events arrive by subscription).",
  })
  async timeline(
    @Root() room: Room,
    @Arg("last", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." }) last: number | null | undefined,
    @Arg("before", () => String, { nullable: true }) before: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<EventConnection> {
    const limit = pageSize(last, 20, "last");
    if (before == null) {
      // The newest page: batched over every room of the request (a room list's last messages).
      const t = await ctx.loaders.latestTimeline.load(`${Math.min(limit, 1000)}:${room.roomId}`);
      const edges = t.events.map((x) => Object.assign(new EventEdge(), { node: Event.from(x.event, room.roomId), cursor: streamToken(x.streamOrdering - 1) }));
      return Object.assign(new EventConnection(), { edges, pageInfo: PageInfo.of({ hasNextPage: false, hasPreviousPage: t.more, cursors: edges.map((e) => e.cursor) }) });
    }
    const { response: res, more } = await readMessages(ctx.s, await ctx.requester(), room.roomId, { from: before ?? undefined, dir: "b", limit, filter: {} });
    const chunk = [...res.chunk].reverse();
    const positions = await eventStreamPositions(ctx.s, chunk.map((e) => e.event_id));
    const edges = chunk.map((e) =>
      Object.assign(new EventEdge(), { node: Event.from(e, room.roomId), cursor: streamToken(positions.get(e.event_id)! - 1) }),
    );
    return Object.assign(new EventConnection(), {
      edges,
      pageInfo: PageInfo.of({ hasNextPage: false, hasPreviousPage: more, cursors: edges.map((e) => e.cursor) }),
    });
  }
}

@Resolver(() => Viewer)
export class ViewerRoomsResolver {
  @FieldResolver(() => RoomConnection, {
    description:
      "The viewer's rooms with one of the given memberships (forgotten rooms left out), newest membership " +
      "change first. Cursors are stream tokens of the membership events, stable while rooms are added.",
  })
  async rooms(
    @Root() viewer: Viewer,
    @Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Arg("membership", () => [Membership], { defaultValue: [Membership.JOIN] }) membership: Membership[],
    @Ctx() ctx: GraphqlContext,
  ): Promise<RoomConnection> {
    const limit = pageSize(first, 20, "first");
    const before = after == null ? undefined : parseStreamToken(after, "after");
    const page = await userRoomsPage(ctx.s, viewer.userId, { memberships: membership, before, limit });
    const edges = page.rooms.map((x) => Object.assign(new RoomEdge(), { node: Room.of(x.roomId), cursor: streamToken(x.streamOrdering) }));
    return Object.assign(new RoomConnection(), {
      edges,
      pageInfo: PageInfo.of({ hasNextPage: page.more, hasPreviousPage: false, cursors: edges.map((e) => e.cursor) }),
    });
  }
}
