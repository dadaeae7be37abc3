// An event with the events around it on the GraphQL face: `Room.eventContext(eventId, limit)` over the
// domain read of GET /rooms/{roomId}/context/{eventId} (src/domain/rooms/read.ts getContext): the event,
// up to limit/2 events before and the rest after, the room state at the event, and the tokens to page on
// (`start` is a Room.timeline `before` cursor). Spec: Client-Server API "Events", /context.
import "reflect-metadata";
import { Arg, Ctx, Field, FieldResolver, Int, ObjectType, Resolver, Root } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { Room } from "../types/room.ts";
import { Event } from "../types/event.ts";
import { pageSize } from "../types/connection.ts";
import { getContext } from "../../domain/rooms/read.ts";
import type { ClientEvent } from "../../domain/events/format.ts";

@ObjectType({ description: "An event and the events around it, as the viewer may see them." })
export class EventContext {
  @Field(() => Event)
  event!: Event;

  @Field(() => [Event], { description: "Events before it, newest first." })
  eventsBefore!: Event[];

  @Field(() => [Event], { description: "Events after it, oldest first." })
  eventsAfter!: Event[];

  @Field(() => [Event], { description: "The room's state at the event." })
  state!: Event[];

  @Field(() => String, { description: "A token before eventsBefore: Room.timeline(before: start) pages on backwards." })
  start!: string;

  @Field(() => String, { description: "A token after eventsAfter (GET /rooms/{roomId}/messages?dir=f&from=end pages on forwards)." })
  end!: string;
}

@Resolver(() => Room)
export class EventContextResolver {
  @FieldResolver(() => EventContext, { description: "An event with the events around it (GET /rooms/{roomId}/context/{eventId}); M_NOT_FOUND when the viewer may not see it." })
  async eventContext(
    @Root() room: Room,
    @Arg("eventId", () => String) eventId: string,
    @Arg("limit", () => Int, { nullable: true, description: "Events before and after together (default 10)." }) limit: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<EventContext> {
    const c = (await getContext(ctx.s, await ctx.requester(), room.roomId, eventId, pageSize(limit, 10, "limit"), {})) as {
      event: ClientEvent; events_before: ClientEvent[]; events_after: ClientEvent[]; state: ClientEvent[]; start: string; end: string;
    };
    const of = (list: ClientEvent[]) => list.map((e) => Event.from(e, room.roomId));
    return Object.assign(new EventContext(), {
      event: Event.from(c.event, room.roomId), eventsBefore: of(c.events_before), eventsAfter: of(c.events_after), state: of(c.state), start: c.start, end: c.end,
    });
  }
}
