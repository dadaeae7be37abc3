// GraphQL types of the account's own security operations and the server's capabilities (spec:
// Client-Server API "Password management", "Account deactivation", "Capabilities negotiation"): the
// payloads of changePassword and deactivateAccount (each in a union with AuthRequired, ../uia.ts) and
// the capabilities the viewer has, the well-known ones typed and the whole map as JSON.
import "reflect-metadata";
import { Field, Float, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.ts";

@ObjectType({ description: "The password was changed." })
export class PasswordChanged {
  @Field(() => Boolean, { description: "The viewer's other devices were signed out (logoutDevices was not false)." })
  otherDevicesLoggedOut!: boolean;
}

@ObjectType({ description: "The account was deactivated: every session, this one included, has ended." })
export class AccountDeactivated {
  @Field(() => String, { description: "REST's id_server_unbind_result: `no-support` (no identity server bindings are removed)." })
  idServerUnbindResult!: string;
}

@ObjectType({ description: "A single-use token another device logs in with (m.login.token)." })
export class LoginToken {
  @Field(() => String)
  loginToken!: string;

  @Field(() => Float, { description: "Milliseconds until it expires." })
  expiresInMs!: number;
}

@ObjectType({ description: "A room version the server supports." })
export class RoomVersionCapability {
  @Field(() => String)
  id!: string;

  @Field(() => String, { description: "stable or unstable." })
  stability!: string;
}

@ObjectType({ description: "What the server lets the viewer do (GET /capabilities)." })
export class Capabilities {
  @Field(() => Boolean, { description: "m.change_password." })
  changePassword!: boolean;

  @Field(() => String, { description: "m.room_versions.default: the version new rooms get." })
  defaultRoomVersion!: string;

  @Field(() => [RoomVersionCapability], { description: "m.room_versions.available." })
  roomVersions!: RoomVersionCapability[];

  @Field(() => Boolean, { description: "m.set_displayname." })
  setDisplayname!: boolean;

  @Field(() => Boolean, { description: "m.set_avatar_url." })
  setAvatarUrl!: boolean;

  @Field(() => Boolean, { description: "m.3pid_changes." })
  threepidChanges!: boolean;

  @Field(() => Boolean, { description: "m.get_login_token." })
  getLoginToken!: boolean;

  @Field(() => Boolean, { description: "m.forget_forced_upon_leave." })
  forgetForcedUponLeave!: boolean;

  @Field(() => GraphQLJSONObject, { description: "Every capability as REST's `capabilities` object (m.profile_fields, unstable ones ...)." })
  all!: Record<string, Record<string, unknown>>;
}
