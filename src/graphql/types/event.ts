// GraphQL type of a room event: the spec's ClientEvent (Client-Server API "Room Event Format") in
// camelCase, `content` and `unsigned` as JSON objects (the escape hatch for every event type), plus typed
// accessors for the common fields (body, msgtype, membership). Also the backward timeline connection.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.ts";
import type { ClientEvent } from "../../domain/events/format.ts";
import { Timestamp } from "./scalars.ts";
import { PageInfo } from "./connection.ts";

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

@ObjectType({ description: "A room event as clients see it (the spec's ClientEvent)." })
export class Event {
  @Field(() => String)
  eventId!: string;

  @Field(() => String)
  roomId!: string;

  @Field(() => String, { description: "The event type, e.g. m.room.message." })
  type!: string;

  @Field(() => String, { description: "The user ID of the sender." })
  sender!: string;

  @Field(() => String, { nullable: true, description: "Set on state events (possibly the empty string), null on others." })
  stateKey!: string | null;

  @Field(() => Timestamp, { description: "When the sending server says it sent the event." })
  originServerTs!: number;

  @Field(() => GraphQLJSONObject, { description: "The event content, whatever its type (empty once redacted, bar the keys redaction keeps)." })
  content!: Record<string, unknown>;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "The spec's unsigned data: age, transaction_id, prev_content, redacted_because ..." })
  unsigned!: Record<string, unknown> | null;

  @Field(() => Boolean, { description: "The event was redacted (unsigned.redacted_because says by which event)." })
  redacted!: boolean;

  @Field(() => String, { nullable: true, description: "For m.room.redaction: the event it redacts." })
  redacts!: string | null;

  @Field(() => String, { nullable: true, description: "The client's transaction ID, shown only to the device that sent the event." })
  transactionId!: string | null;

  @Field(() => String, { nullable: true, description: "content.body (messages), when a string." })
  body!: string | null;

  @Field(() => String, { nullable: true, description: "content.msgtype (m.room.message), when a string." })
  msgtype!: string | null;

  @Field(() => String, { nullable: true, description: "content.membership (m.room.member), when a string." })
  membership!: string | null;

  static from(e: ClientEvent, roomId: string): Event {
    const unsigned = e.unsigned && Object.keys(e.unsigned).length > 0 ? (e.unsigned as Record<string, unknown>) : null;
    return Object.assign(new Event(), {
      eventId: e.event_id,
      roomId: e.room_id ?? roomId,
      type: e.type,
      sender: e.sender,
      stateKey: e.state_key ?? null,
      originServerTs: e.origin_server_ts,
      content: e.content,
      unsigned,
      redacted: e.unsigned?.redacted_because !== undefined,
      redacts: e.redacts ?? null,
      transactionId: str(e.unsigned?.transaction_id),
      body: str(e.content.body),
      msgtype: str(e.content.msgtype),
      membership: e.type === "m.room.member" ? str(e.content.membership) : null,
    });
  }
}

@ObjectType()
export class EventEdge {
  @Field(() => Event)
  node!: Event;

  @Field(() => String, { description: "The stream token of the position just before this event: `timeline(before:)` it pages older events." })
  cursor!: string;
}

@ObjectType({ description: "A page of a room's timeline, oldest event first." })
export class EventConnection {
  @Field(() => [EventEdge])
  edges!: EventEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}
