// GraphQL types of the live room list (the `roomList` subscription): simplified sliding sync's request
// (lists with ranges, filters and room configs; room subscriptions) as typed inputs, and its answers as
// typed updates — each list's count and windows, and the rooms whose data changed (summary fields,
// unread counts, timeline and required state as Events, an invite's stripped state).
import "reflect-metadata";
import { Field, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.ts";
import { Event } from "./event.ts";
import { UnreadCount } from "./push.ts";

@InputType({ description: "A state entry to send with each room: `type` and `stateKey`, each \"*\" for any; stateKey \"$ME\" is the viewer, \"$LAZY\" (for m.room.member) the members the timeline needs." })
export class RequiredStateInput {
  @Field(() => String)
  type!: string;

  @Field(() => String)
  stateKey!: string;
}

@InputType({ description: "An inclusive window [start, end] into a sorted room list." })
export class RangeInput {
  @Field(() => Int)
  start!: number;

  @Field(() => Int)
  end!: number;
}

@InputType({ description: "Which rooms a list holds (every field optional; all given must match)." })
export class RoomListFiltersInput {
  @Field(() => Boolean, { nullable: true, description: "Only rooms in (true) or not in (false) the viewer's m.direct." })
  isDm?: boolean | null;

  @Field(() => [String], { nullable: true, description: "Only the children (m.space.child) of these spaces the viewer is joined to." })
  spaces?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  isEncrypted?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: "Only invites (true) or no invites (false)." })
  isInvite?: boolean | null;

  @Field(() => [String], { nullable: true, description: "Only rooms of these creation types (an empty string stands for rooms without a type)." })
  roomTypes?: string[] | null;

  @Field(() => [String], { nullable: true, description: "No rooms of these creation types (an empty string stands for rooms without a type)." })
  notRoomTypes?: string[] | null;

  @Field(() => String, { nullable: true, description: "Rooms whose name holds this text (case-insensitive)." })
  roomNameLike?: string | null;

  @Field(() => [String], { nullable: true, description: "Rooms with any of these tags." })
  tags?: string[] | null;

  @Field(() => [String], { nullable: true, description: "No rooms with any of these tags (wins over `tags`)." })
  notTags?: string[] | null;
}

@InputType({ description: "A sorted, filtered list of the viewer's rooms (by last activity), and the windows of it to send." })
export class RoomListInput {
  @Field(() => String, { description: "The list's name in the updates (at most 64 bytes)." })
  key!: string;

  @Field(() => [RangeInput])
  ranges!: RangeInput[];

  @Field(() => Int, { description: "Timeline events per room (0 to 1000)." })
  timelineLimit!: number;

  @Field(() => [RequiredStateInput], { nullable: true })
  requiredState?: RequiredStateInput[] | null;

  @Field(() => RoomListFiltersInput, { nullable: true })
  filters?: RoomListFiltersInput | null;
}

@InputType({ description: "A room to follow whatever the lists' windows (one the viewer has a membership in)." })
export class RoomSubscriptionInput {
  @Field(() => String)
  roomId!: string;

  @Field(() => Int, { description: "Timeline events (0 to 1000)." })
  timelineLimit!: number;

  @Field(() => [RequiredStateInput], { nullable: true })
  requiredState?: RequiredStateInput[] | null;
}

@ObjectType({ description: "One window of a list: the room ids at positions start..end, in order." })
export class RoomListWindow {
  @Field(() => Int)
  start!: number;

  @Field(() => Int)
  end!: number;

  @Field(() => [String])
  roomIds!: string[];
}

@ObjectType({ description: "A list as it is now: how many rooms match it, and its windows." })
export class RoomListState {
  @Field(() => String)
  key!: string;

  @Field(() => Int)
  count!: number;

  @Field(() => [RoomListWindow])
  windows!: RoomListWindow[];
}

@ObjectType({ description: "A user to name an unnamed room by." })
export class RoomHero {
  @Field(() => String)
  userId!: string;

  @Field(() => String, { nullable: true })
  displayName!: string | null;

  @Field(() => String, { nullable: true })
  avatarUrl!: string | null;
}

@ObjectType({ description: "A stripped state event of an invite or knock (what the viewer may see of a room before joining)." })
export class StrippedStateEvent {
  @Field(() => String)
  type!: string;

  @Field(() => String)
  stateKey!: string;

  @Field(() => String)
  sender!: string;

  @Field(() => GraphQLJSONObject)
  content!: Record<string, unknown>;
}

@ObjectType({ description: "A room's data that changed (all of it when `initial`): fields left null did not change, or (when initial) are not set." })
export class RoomListRoom {
  @Field(() => String)
  roomId!: string;

  @Field(() => Boolean, { description: "The room's first appearance on this subscription: replace what is held of it." })
  initial!: boolean;

  @Field(() => String, { nullable: true })
  name!: string | null;

  @Field(() => String, { nullable: true, description: "The room avatar's mxc:// URI." })
  avatar!: string | null;

  @Field(() => [RoomHero], { nullable: true, description: "For an unnamed room: members to name it by." })
  heroes!: RoomHero[] | null;

  @Field(() => Boolean)
  isDm!: boolean;

  @Field(() => Int, { nullable: true })
  joinedCount!: number | null;

  @Field(() => Int, { nullable: true })
  invitedCount!: number | null;

  @Field(() => UnreadCount, { description: "Unread notifications and highlights (all threads together)." })
  unread!: UnreadCount;

  @Field(() => Int, { nullable: true, description: "Orders rooms by their last bumping event (messages, not state); greater is more recent." })
  bumpStamp!: number | null;

  @Field(() => [Event], { description: "New timeline events, oldest first (the latest ones when initial)." })
  timeline!: Event[];

  @Field(() => Boolean, { nullable: true, description: "Events were left out before the timeline: paginate from prevBatch." })
  limited!: boolean | null;

  @Field(() => String, { nullable: true, description: "A /messages token (and roomTimeline `since`) before the timeline." })
  prevBatch!: string | null;

  @Field(() => Int, { nullable: true, description: "How many of the timeline's events are new since the previous update." })
  numLive!: number | null;

  @Field(() => Boolean, { description: "The timeline holds older events again because the room's timeline limit grew." })
  expandedTimeline!: boolean;

  @Field(() => [Event], { description: "State the room config asks for (changes, when not initial)." })
  requiredState!: Event[];

  @Field(() => [StrippedStateEvent], { nullable: true, description: "For an invite or knock: the room's stripped state." })
  inviteState!: StrippedStateEvent[] | null;
}

@ObjectType({ description: "One update of the live room list: the lists now, and the rooms with something new." })
export class RoomListUpdate {
  @Field(() => [RoomListState])
  lists!: RoomListState[];

  @Field(() => [RoomListRoom])
  rooms!: RoomListRoom[];
}
