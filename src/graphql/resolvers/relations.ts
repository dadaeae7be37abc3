// Relations, threads, spaces and reports on the GraphQL face, over the domain operations of their REST
// twins: Room.threads (GET /threads), Room.hierarchy (GET /hierarchy), roomSummary (GET /room_summary),
// Event.relations (GET /relations, forwards), the bundled aggregations of an event (read from its unsigned
// m.relations: no query), and the reportEvent / reportRoom / reportUser mutations (POST /rooms/{roomId}/report[/{eventId}], /users/{userId}/report).
import "reflect-metadata";
import { Arg, Query, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from "type-graphql";
import { streamToken } from "../../domain/rooms/read.ts";
import { roomVersionLookup, serializeEvents } from "../../domain/rooms/serialize.ts";
import { relationsPage } from "../../domain/relations/get-relations.ts";
import { threadsPage } from "../../domain/relations/threads.ts";
import { getHierarchy } from "../../domain/spaces/hierarchy.ts";
import { getRoomSummary } from "../../domain/spaces/room-summary.ts";
import { reportEvent, reportRoom, reportUser } from "../../domain/reports/report.ts";
import type { ClientEvent } from "../../domain/events/format.ts";
import type { GraphqlContext } from "../context.ts";
import { PageInfo, pageSize } from "../types/connection.ts";
import { Event } from "../types/event.ts";
import { Room } from "../types/room.ts";
import { EditSummary, RelatedEventConnection, RelatedEventEdge, RoomSummary, SpaceHierarchy, SpaceHierarchyRoom, ThreadInclude, ThreadSummary } from "../types/relations.ts";

function bundled(event: Event, relType: string): Record<string, unknown> | undefined {
  const relations = event.unsigned?.["m.relations"] as Record<string, unknown> | undefined;
  return relations?.[relType] as Record<string, unknown> | undefined;
}

@Resolver(() => Event)
export class EventRelationsResolver {
  @FieldResolver(() => ThreadSummary, { nullable: true, description: "The thread this event is the root of (its m.thread aggregation)." })
  thread(@Root() event: Event): ThreadSummary | null {
    const t = bundled(event, "m.thread");
    if (!t) return null;
    return Object.assign(new ThreadSummary(), {
      latestEvent: Event.from(t.latest_event as unknown as ClientEvent, event.roomId),
      count: t.count as number,
      currentUserParticipated: t.current_user_participated as boolean,
    });
  }

  @FieldResolver(() => EditSummary, { nullable: true, description: "The latest valid edit (m.replace aggregation)." })
  edit(@Root() event: Event): EditSummary | null {
    const e = bundled(event, "m.replace");
    if (!e) return null;
    return Object.assign(new EditSummary(), { eventId: e.event_id as string, sender: e.sender as string, originServerTs: e.origin_server_ts as number });
  }

  @FieldResolver(() => [String], { description: "IDs of the events referencing this one (m.reference aggregation)." })
  references(@Root() event: Event): string[] {
    const r = bundled(event, "m.reference");
    return ((r?.chunk as { event_id: string }[] | undefined) ?? []).map((x) => x.event_id);
  }

  @FieldResolver(() => RelatedEventConnection, {
    description: "Events relating to this one (GET /relations), oldest first; `after` takes an edge's cursor (or a /messages token).",
  })
  async relations(
    @Root() event: Event,
    @Arg("relType", () => String, { nullable: true }) relType: string | null | undefined,
    @Arg("eventType", () => String, { nullable: true }) eventType: string | null | undefined,
    @Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Arg("recurse", () => Boolean, { nullable: true, defaultValue: false }) recurse: boolean | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<RelatedEventConnection> {
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
    const edges = serialized.map((e, i) => Object.assign(new RelatedEventEdge(), { node: Event.from(e, event.roomId), cursor: streamToken(page.events[i]!.streamOrdering) }));
    return Object.assign(new RelatedEventConnection(), {
      edges,
      pageInfo: PageInfo.of({ hasNextPage: page.next !== undefined, hasPreviousPage: after != null, cursors: edges.map((e) => e.cursor) }),
    });
  }
}

@Resolver(() => Room)
export class RoomThreadsResolver {
  @FieldResolver(() => RelatedEventConnection, { description: "Thread roots (GET /threads), latest activity first, each with its thread summary." })
  async threads(
    @Root() room: Room,
    @Arg("include", () => ThreadInclude, { defaultValue: ThreadInclude.ALL }) include: ThreadInclude,
    @Arg("first", () => Int, { nullable: true, defaultValue: 20, description: "Page size (at most 1000)." }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<RelatedEventConnection> {
    const r = await ctx.requester();
    const limit = Math.max(pageSize(first, 20, "first"), 1);
    const page = await threadsPage(ctx.s, r, room.roomId, { include, from: after ?? undefined, limit });
    const serialized = await serializeEvents(ctx.s, r, roomVersionLookup(ctx.s), page.roots);
    const edges = serialized.map((e) => Object.assign(new RelatedEventEdge(), { node: Event.from(e, room.roomId), cursor: page.cursors.get(e.event_id)! }));
    return Object.assign(new RelatedEventConnection(), {
      edges,
      pageInfo: PageInfo.of({ hasNextPage: page.next !== undefined, hasPreviousPage: after != null, cursors: edges.map((e) => e.cursor) }),
    });
  }

  @FieldResolver(() => SpaceHierarchy, { description: "The space tree under this room (GET /hierarchy), depth first." })
  async hierarchy(
    @Root() room: Room,
    @Arg("suggestedOnly", () => Boolean, { defaultValue: false }) suggestedOnly: boolean,
    @Arg("maxDepth", () => Int, { nullable: true }) maxDepth: number | null | undefined,
    @Arg("first", () => Int, { nullable: true, description: "Page size (at most 50)." }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true, description: "A previous page's nextBatch." }) after: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<SpaceHierarchy> {
    return hierarchyOf(ctx, room.roomId, { suggestedOnly, maxDepth, first, after });
  }
}

async function hierarchyOf(
  ctx: GraphqlContext,
  roomId: string,
  a: { suggestedOnly: boolean; maxDepth: number | null | undefined; first: number | null | undefined; after: string | null | undefined },
): Promise<SpaceHierarchy> {
  const res = await getHierarchy(ctx.s, await ctx.requester(), roomId, {
    suggestedOnly: a.suggestedOnly,
    maxDepth: a.maxDepth ?? undefined,
    limit: a.first ?? undefined,
    from: a.after ?? undefined,
  });
  return Object.assign(new SpaceHierarchy(), { rooms: res.rooms.map((x) => SpaceHierarchyRoom.from(x)), nextBatch: res.next_batch ?? null });
}

@Resolver()
export class SpaceHierarchyResolver {
  @Query(() => SpaceHierarchy, {
    description: "The space tree under a space the viewer may peek into without being joined: public, world-readable or joinable through a room they are in (GET /hierarchy).",
  })
  async spaceHierarchy(
    @Arg("roomId", () => String) roomId: string,
    @Arg("suggestedOnly", () => Boolean, { defaultValue: false }) suggestedOnly: boolean,
    @Arg("maxDepth", () => Int, { nullable: true }) maxDepth: number | null | undefined,
    @Arg("first", () => Int, { nullable: true, description: "Page size (at most 50)." }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true, description: "A previous page's nextBatch." }) after: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<SpaceHierarchy> {
    return hierarchyOf(ctx, roomId, { suggestedOnly, maxDepth, first, after });
  }
}

@Resolver()
export class RoomSummaryResolver {
  @Query(() => RoomSummary, { description: "A room's summary, by id or alias; `via` names servers to ask for a room this server is not in (GET /room_summary)." })
  async roomSummary(
    @Arg("roomIdOrAlias", () => String) roomIdOrAlias: string,
    @Arg("via", () => [String], { nullable: true }) via: string[] | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<RoomSummary> {
    const { membership, ...room } = await getRoomSummary(ctx.s, ctx.bearerToken === undefined ? undefined : await ctx.requester(), roomIdOrAlias, via ?? []);
    return Object.assign(new RoomSummary(), { room: SpaceHierarchyRoom.from({ ...room, children_state: [] }), membership: membership ?? null });
  }
}

@Resolver()
export class ReportResolver {
  @Mutation(() => Boolean, { description: "Reports an event to the server admins (POST /rooms/{roomId}/report/{eventId}). Returns true." })
  async reportEvent(
    @Arg("roomId", () => String) roomId: string,
    @Arg("eventId", () => String) eventId: string,
    @Arg("reason", () => String, { nullable: true }) reason: string | null | undefined,
    @Arg("score", () => Int, { nullable: true, description: "From -100 (most offensive) to 0." }) score: number | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    const body: Record<string, unknown> = {};
    if (reason != null) body.reason = reason;
    if (score != null) body.score = score;
    await reportEvent(ctx.s, await ctx.requester(), roomId, eventId, body);
    return true;
  }

  @Mutation(() => Boolean, { description: "Reports a room to the server admins (POST /rooms/{roomId}/report). Returns true." })
  async reportRoom(
    @Arg("roomId", () => String) roomId: string,
    @Arg("reason", () => String) reason: string,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    await reportRoom(ctx.s, await ctx.requester(), roomId, { reason });
    return true;
  }

  @Mutation(() => Boolean, { description: "Reports a user to the server admins (POST /users/{userId}/report). Returns true, whether or not the user exists." })
  async reportUser(
    @Arg("userId", () => String) userId: string,
    @Arg("reason", () => String) reason: string,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    await reportUser(ctx.s, await ctx.requester(), userId, { reason });
    return true;
  }
}
