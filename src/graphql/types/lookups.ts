// GraphQL types of small lookups and tokens (spec: Client-Server API "Room aliases", "Room directory",
// "Events" timestamp_to_event, "OpenID", "Refreshing access tokens"): what an alias names, the event
// nearest a time, an OpenID token for a third party, and a refreshed access/refresh token pair.
import "reflect-metadata";
import { Field, Float, ObjectType } from "type-graphql";

@ObjectType({ description: "The room an alias names and servers that can be joined through." })
export class RoomAliasTarget {
  @Field(() => String)
  roomId!: string;

  @Field(() => [String])
  servers!: string[];
}

@ObjectType({ description: "The event nearest a time in a room, in the direction asked." })
export class TimestampEvent {
  @Field(() => String)
  eventId!: string;

  @Field(() => Float, { description: "Its origin_server_ts (ms since the epoch)." })
  originServerTs!: number;
}

@ObjectType({ description: "An OpenID token a third party (a widget, an integration manager) exchanges with this server for the viewer's user id." })
export class OpenIdToken {
  @Field(() => String)
  accessToken!: string;

  @Field(() => String, { description: "Bearer." })
  tokenType!: string;

  @Field(() => String, { description: "The server the third party asks (federation /openid/userinfo)." })
  matrixServerName!: string;

  @Field(() => Float, { description: "Seconds until it expires." })
  expiresIn!: number;
}

@ObjectType({ description: "A new access token and refresh token (the old refresh token is spent once the new access token is used)." })
export class RefreshedTokens {
  @Field(() => String)
  accessToken!: string;

  @Field(() => String)
  refreshToken!: string;

  @Field(() => Float, { nullable: true, description: "Milliseconds until the access token expires (null: it does not)." })
  expiresInMs!: number | null;
}
