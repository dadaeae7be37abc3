// GraphQL type of the viewer: the authenticated user and session that make the request. Profile fields
// and the device list are resolved on demand in resolvers/viewer.ts.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import type { Requester } from "../../domain/accounts/requester.ts";

@ObjectType({ description: "The authenticated user and session making the request." })
export class Viewer {
  @Field(() => String, { description: "The Matrix user ID, e.g. @alice:example.org." })
  userId!: string;

  @Field(() => String, { nullable: true, description: "The device of the access token (null for application services)." })
  deviceId!: string | null;

  @Field(() => Boolean)
  isGuest!: boolean;

  /** The requester behind this viewer (not a GraphQL field). */
  requester!: Requester;

  static of(r: Requester): Viewer {
    return Object.assign(new Viewer(), { userId: r.userId, deviceId: r.deviceId, isGuest: r.isGuest, requester: r });
  }
}
