// GraphQL types of rooms: Room (its fields are resolved in resolvers/rooms.ts), the membership enum,
// members, the Relay connections of rooms and members, and the createRoom input (POST /createRoom's
// body in camelCase). Spec: Client-Server API "Rooms", "Room membership", "Creation".
import "reflect-metadata";
import { Arg, Ctx, Field, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { WithAvatarHttpUrl } from "./media.ts";
import { GraphQLJSONObject } from "./json.ts";
import type { ClientEvent } from "../../domain/events/format.ts";
import { PageInfo } from "./connection.ts";
import { Event } from "./event.ts";

export enum Membership {
  JOIN = "join",
  INVITE = "invite",
  LEAVE = "leave",
  BAN = "ban",
  KNOCK = "knock",
}
registerEnumType(Membership, { name: "Membership", description: "A membership state of m.room.member." });

export enum RoomVisibility {
  PUBLIC = "public",
  PRIVATE = "private",
}
registerEnumType(RoomVisibility, { name: "RoomVisibility", description: "Whether the room is published in the room directory." });

export enum RoomPreset {
  PRIVATE_CHAT = "private_chat",
  PUBLIC_CHAT = "public_chat",
  TRUSTED_PRIVATE_CHAT = "trusted_private_chat",
}
registerEnumType(RoomPreset, { name: "RoomPreset", description: "createRoom's preset: join rules, history visibility and guest access to start with." });

@ObjectType({ description: "A room, as the viewer may see it." })
export class Room {
  @Field(() => String)
  roomId!: string;

  static of(roomId: string): Room {
    return Object.assign(new Room(), { roomId });
  }
}

@ObjectType({ description: "A member of a room: the state of its m.room.member event." })
export class Member extends WithAvatarHttpUrl {
  @Field(() => String)
  userId!: string;

  @Field(() => Membership)
  membership!: Membership;

  @Field(() => String, { nullable: true, description: "The display name in this room." })
  displayName!: string | null;

  @Field(() => String, { nullable: true, description: "The avatar in this room (an mxc:// URI)." })
  avatarUrl!: string | null;

  @Field(() => Event, { description: "The m.room.member event." })
  event!: Event;

  static from(e: ClientEvent, roomId: string): Member {
    const str = (v: unknown) => (typeof v === "string" ? v : null);
    return Object.assign(new Member(), {
      userId: e.state_key ?? "",
      membership: e.content.membership as Membership,
      displayName: str(e.content.displayname),
      avatarUrl: str(e.content.avatar_url),
      event: Event.from(e, roomId),
    });
  }
}

@ObjectType()
export class MemberEdge {
  @Field(() => Member)
  node!: Member;

  @Field(() => String, { description: "The member's user ID (members are ordered by it)." })
  cursor!: string;
}

@ObjectType({ description: "A page of a room's members, ordered by user ID." })
export class MemberConnection {
  @Field(() => [MemberEdge])
  edges!: MemberEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType()
export class RoomEdge {
  @Field(() => Room)
  node!: Room;

  @Field(() => String, { description: "The stream token of the viewer's membership event in this room." })
  cursor!: string;
}

@ObjectType({ description: "A page of the viewer's rooms, newest membership change first." })
export class RoomConnection {
  @Field(() => [RoomEdge])
  edges!: RoomEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@InputType({ description: "A state event to set (createRoom's initialState)." })
export class StateEventInput {
  @Field(() => String)
  type!: string;

  @Field(() => String, { defaultValue: "" })
  stateKey!: string;

  @Field(() => GraphQLJSONObject)
  content!: Record<string, unknown>;
}

@InputType({ description: "POST /createRoom." })
export class CreateRoomInput {
  @Field(() => String, { nullable: true, description: "The room name (an m.room.name event)." })
  name?: string | null;

  @Field(() => String, { nullable: true, description: "The room topic (an m.room.topic event)." })
  topic?: string | null;

  @Field(() => RoomVisibility, { nullable: true, description: "Default PRIVATE." })
  visibility?: RoomVisibility | null;

  @Field(() => RoomPreset, { nullable: true, description: "Default PUBLIC_CHAT for a public room, else PRIVATE_CHAT." })
  preset?: RoomPreset | null;

  @Field(() => String, { nullable: true, description: "The room version; the server's default when absent." })
  roomVersion?: string | null;

  @Field(() => [String], { nullable: true, description: "User IDs to invite." })
  invite?: string[] | null;

  @Field(() => Boolean, { nullable: true, description: "Mark the invites as direct chats." })
  isDirect?: boolean | null;

  @Field(() => String, { nullable: true, description: "The localpart of an alias to create for the room." })
  roomAliasName?: string | null;

  @Field(() => [StateEventInput], { nullable: true, description: "State events to set after the preset's." })
  initialState?: StateEventInput[] | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Extra keys of the m.room.create content." })
  creationContent?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Merged over the default m.room.power_levels content." })
  powerLevelContentOverride?: Record<string, unknown> | null;
}
