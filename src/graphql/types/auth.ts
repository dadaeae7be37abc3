// GraphQL inputs and payload of registration and login: the fields of POST /register and POST /login
// (Client-Server API "Account registration", "Login") in camelCase, and the session they start.
import "reflect-metadata";
import { Field, Float, InputType, ObjectType, registerEnumType } from "type-graphql";

export enum RegistrationKind {
  USER = "user",
  GUEST = "guest",
}
registerEnumType(RegistrationKind, { name: "RegistrationKind", description: "The `kind` of POST /register." });

export enum LoginType {
  PASSWORD = "m.login.password",
  TOKEN = "m.login.token",
}
registerEnumType(LoginType, {
  name: "LoginType",
  description: "The login type: PASSWORD is m.login.password, TOKEN is m.login.token (a login token).",
});

@InputType({ description: "POST /register. With a USER kind the server's registration flow is completed in this call." })
export class RegisterInput {
  @Field(() => RegistrationKind, { defaultValue: RegistrationKind.USER })
  kind!: RegistrationKind;

  @Field(() => String, { nullable: true, description: "The localpart wanted; a numeric one is generated when absent." })
  username?: string | null;

  @Field(() => String, { nullable: true })
  password?: string | null;

  @Field(() => String, { nullable: true, description: "Reuse this device ID instead of generating one (ignored for guests)." })
  deviceId?: string | null;

  @Field(() => String, { nullable: true })
  initialDeviceDisplayName?: string | null;

  @Field(() => Boolean, { defaultValue: false, description: "Create the account without logging in (no access token)." })
  inhibitLogin!: boolean;

  @Field(() => Boolean, { defaultValue: false, description: "Ask for a refresh token (the access token then expires)." })
  refreshToken!: boolean;

  @Field(() => String, {
    nullable: true,
    description: "The registration token, required when the server only registers with one (m.login.registration_token).",
  })
  registrationToken?: string | null;
}

@InputType({ description: "The spec's login `identifier` (m.id.user, m.id.thirdparty, m.id.phone)." })
export class UserIdentifierInput {
  @Field(() => String, { description: "m.id.user, m.id.thirdparty or m.id.phone." })
  type!: string;

  @Field(() => String, { nullable: true })
  user?: string | null;

  @Field(() => String, { nullable: true })
  medium?: string | null;

  @Field(() => String, { nullable: true })
  address?: string | null;

  @Field(() => String, { nullable: true })
  country?: string | null;

  @Field(() => String, { nullable: true })
  phone?: string | null;
}

@InputType({ description: "POST /login." })
export class LoginInput {
  @Field(() => LoginType, { defaultValue: LoginType.PASSWORD })
  type!: LoginType;

  @Field(() => String, { nullable: true, description: "PASSWORD: a localpart or a full user ID (short for an m.id.user identifier)." })
  user?: string | null;

  @Field(() => UserIdentifierInput, { nullable: true, description: "PASSWORD: who is logging in, as the spec's identifier." })
  identifier?: UserIdentifierInput | null;

  @Field(() => String, { nullable: true, description: "PASSWORD: the password." })
  password?: string | null;

  @Field(() => String, { nullable: true, description: "TOKEN: the login token." })
  token?: string | null;

  @Field(() => String, { nullable: true, description: "Reuse this device (its other sessions end) instead of creating one." })
  deviceId?: string | null;

  @Field(() => String, { nullable: true })
  initialDeviceDisplayName?: string | null;

  @Field(() => Boolean, { defaultValue: false, description: "Ask for a refresh token (the access token then expires)." })
  refreshToken!: boolean;
}

@ObjectType({ description: "A new session (or, with inhibitLogin, just the new account)." })
export class AuthPayload {
  @Field(() => String)
  userId!: string;

  @Field(() => String, { nullable: true, description: "Null when registration was asked to inhibit login." })
  accessToken!: string | null;

  @Field(() => String, { nullable: true })
  deviceId!: string | null;

  @Field(() => String, { nullable: true, description: "Set when a refresh token was asked for." })
  refreshToken!: string | null;

  @Field(() => Float, { nullable: true, description: "Milliseconds until the access token expires (null: it does not)." })
  expiresInMs!: number | null;

  @Field(() => String, { description: "The server name of the homeserver." })
  homeServer!: string;

  static from(r: { user_id: string; home_server: string; access_token?: string; device_id?: string; refresh_token?: string; expires_in_ms?: number }): AuthPayload {
    return Object.assign(new AuthPayload(), {
      userId: r.user_id,
      accessToken: r.access_token ?? null,
      deviceId: r.device_id ?? null,
      refreshToken: r.refresh_token ?? null,
      expiresInMs: r.expires_in_ms ?? null,
      homeServer: r.home_server,
    });
  }
}
