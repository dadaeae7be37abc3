// GraphQL types of the room directory: a published room as /publicRooms lists it, its connection and
// the filter input. Spec: Client-Server API "Listing rooms" (PublishedRoomsChunk) in camelCase.
import "reflect-metadata";
import { Arg, Ctx, Field, InputType, Int, ObjectType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.ts";
import type { PublicRoomsChunk } from "../../domain/directory/public-rooms.ts";
import { PageInfo } from "./connection.ts";

@ObjectType({ description: "A room of the published room directory (the spec's PublishedRoomsChunk)." })
export class PublicRoom extends WithAvatarHttpUrl {
  @Field(() => String)
  roomId!: string;

  @Field(() => String, { nullable: true })
  name!: string | null;

  @Field(() => String, { nullable: true, description: "The plain-text topic." })
  topic!: string | null;

  @Field(() => String, { nullable: true })
  canonicalAlias!: string | null;

  @Field(() => Int)
  numJoinedMembers!: number;

  @Field(() => Boolean, { description: "Anyone may read the room's history without joining." })
  worldReadable!: boolean;

  @Field(() => Boolean)
  guestCanJoin!: boolean;

  @Field(() => String, { nullable: true, description: "An mxc:// URI." })
  avatarUrl!: string | null;

  @Field(() => String, { nullable: true })
  joinRule!: string | null;

  @Field(() => String, { nullable: true, description: "The room type from m.room.create (e.g. m.space)." })
  roomType!: string | null;

  static from(c: PublicRoomsChunk): PublicRoom {
    return Object.assign(new PublicRoom(), {
      roomId: c.room_id,
      name: c.name ?? null,
      topic: c.topic ?? null,
      canonicalAlias: c.canonical_alias ?? null,
      numJoinedMembers: c.num_joined_members,
      worldReadable: c.world_readable,
      guestCanJoin: c.guest_can_join,
      avatarUrl: c.avatar_url ?? null,
      joinRule: c.join_rule ?? null,
      roomType: c.room_type ?? null,
    });
  }
}

@ObjectType()
export class PublicRoomEdge {
  @Field(() => PublicRoom)
  node!: PublicRoom;

  @Field(() => String, { description: "A /publicRooms since token that continues after this room." })
  cursor!: string;
}

@ObjectType({ description: "A page of the published room directory, most joined members first." })
export class PublicRoomConnection {
  @Field(() => [PublicRoomEdge])
  edges!: PublicRoomEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => Int, { description: "How many rooms are published (all of them, not only those matching the filter)." })
  totalRoomCountEstimate!: number;
}

@InputType({ description: "POST /publicRooms' filter." })
export class PublicRoomsFilter {
  @Field(() => String, { nullable: true, description: "Searched (case-insensitively) in the name, topic, canonical alias and room ID." })
  genericSearchTerm?: string | null;

  @Field(() => [String], { nullable: "itemsAndList", description: "Only rooms of these types; null in the list stands for rooms without a type." })
  roomTypes?: (string | null)[] | null;
}
