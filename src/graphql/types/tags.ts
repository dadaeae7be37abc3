// GraphQL type of a room tag (spec: Client-Server API "Room Tagging"): the viewer's `m.tag` room account
// data, one entry per tag, with its order and the whole content the client stored.
import "reflect-metadata";
import { Field, Float, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.ts";

@ObjectType({ description: "One of the viewer's tags on a room (m.favourite, m.lowpriority, m.server_notice, u.*)." })
export class RoomTag {
  @Field(() => String)
  name!: string;

  @Field(() => Float, { nullable: true, description: "Where the room sorts among the rooms of this tag, 0 to 1; null when not given." })
  order!: number | null;

  @Field(() => GraphQLJSONObject, { description: "The tag's content as stored (order and any other keys the client gave)." })
  content!: Record<string, unknown>;
}
