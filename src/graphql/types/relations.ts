// GraphQL types of relations, threads and spaces: the bundled aggregations of an event (thread summary,
// latest edit, references) read from its unsigned `m.relations`, the connections of related events and
// of thread roots, the space hierarchy (GET /hierarchy's rooms in camelCase) and room summaries.
// Spec: Client-Server API "Relationships", "Threading", "Spaces".
import "reflect-metadata";
import { Arg, Ctx, Field, Int, ObjectType, registerEnumType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.ts";
import { GraphQLJSONObject } from "./json.ts";
import type { HierarchyRoom } from "../../domain/spaces/hierarchy.ts";
import { PageInfo } from "./connection.ts";
import { Event } from "./event.ts";
import { Timestamp } from "./scalars.ts";

export enum ThreadInclude {
  ALL = "all",
  PARTICIPATED = "participated",
}
registerEnumType(ThreadInclude, { name: "ThreadInclude", description: "Which threads to list: all, or those the viewer started or replied in." });

@ObjectType({ description: "The m.thread aggregation of a thread root." })
export class ThreadSummary {
  @Field(() => Event, { description: "The latest reply in the thread." })
  latestEvent!: Event;

  @Field(() => Int, { description: "How many replies the thread has." })
  count!: number;

  @Field(() => Boolean, { description: "The viewer started the thread or replied in it." })
  currentUserParticipated!: boolean;
}

@ObjectType({ description: "The m.replace aggregation: the latest valid edit of an event (its content stays as sent)." })
export class EditSummary {
  @Field(() => String)
  eventId!: string;

  @Field(() => String)
  sender!: string;

  @Field(() => Timestamp)
  originServerTs!: number;
}

@ObjectType()
export class RelatedEventEdge {
  @Field(() => Event)
  node!: Event;

  @Field(() => String, { description: "A stream token: `after:` it gives the events that come after this one." })
  cursor!: string;
}

@ObjectType({ description: "A page of events, oldest first (related events), or of thread roots, latest activity first." })
export class RelatedEventConnection {
  @Field(() => [RelatedEventEdge])
  edges!: RelatedEventEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType({ description: "A room of a space hierarchy (GET /hierarchy)." })
export class SpaceHierarchyRoom extends WithAvatarHttpUrl {
  @Field(() => String)
  roomId!: string;

  @Field(() => String, { nullable: true })
  name!: string | null;

  @Field(() => String, { nullable: true })
  topic!: string | null;

  @Field(() => String, { nullable: true })
  canonicalAlias!: string | null;

  @Field(() => String, { nullable: true })
  avatarUrl!: string | null;

  @Field(() => Int)
  numJoinedMembers!: number;

  @Field(() => Boolean)
  worldReadable!: boolean;

  @Field(() => Boolean)
  guestCanJoin!: boolean;

  @Field(() => String)
  joinRule!: string;

  @Field(() => String, { nullable: true, description: "m.space for a space." })
  roomType!: string | null;

  @Field(() => String)
  roomVersion!: string;

  @Field(() => [String], { nullable: true, description: "Rooms whose members may join (restricted join rules)." })
  allowedRoomIds!: string[] | null;

  @Field(() => [GraphQLJSONObject], { description: "The room's m.space.child events (stripped, with origin_server_ts)." })
  childrenState!: Record<string, unknown>[];

  static from(r: HierarchyRoom): SpaceHierarchyRoom {
    return Object.assign(new SpaceHierarchyRoom(), {
      roomId: r.room_id,
      name: r.name ?? null,
      topic: r.topic ?? null,
      canonicalAlias: r.canonical_alias ?? null,
      avatarUrl: r.avatar_url ?? null,
      numJoinedMembers: r.num_joined_members,
      worldReadable: r.world_readable,
      guestCanJoin: r.guest_can_join,
      joinRule: r.join_rule,
      roomType: r.room_type ?? null,
      roomVersion: r.room_version,
      allowedRoomIds: r.allowed_room_ids ?? null,
      childrenState: r.children_state,
    });
  }
}

@ObjectType({ description: "A room's summary (GET /room_summary): the room as a hierarchy shows it, no children." })
export class RoomSummary {
  @Field(() => SpaceHierarchyRoom)
  room!: SpaceHierarchyRoom;

  @Field(() => String, { nullable: true, description: "The viewer's membership (leave when none); null without an access token." })
  membership!: string | null;
}

@ObjectType({ description: "A page of a space hierarchy, depth first." })
export class SpaceHierarchy {
  @Field(() => [SpaceHierarchyRoom])
  rooms!: SpaceHierarchyRoom[];

  @Field(() => String, { nullable: true, description: "Pass as `after` for the next page; null at the end." })
  nextBatch!: string | null;

  @Field(() => PageInfo, { description: "Where the page lies, as on every connection: endCursor is nextBatch (pass it as `after`)." })
  pageInfo(): PageInfo {
    return PageInfo.ofNextBatch(this.nextBatch);
  }
}
