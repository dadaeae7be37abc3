// The account's own sessions and security on the GraphQL face, over the REST face's domain operations:
// `logoutAll` (POST /logout/all), `changePassword` (POST /account/password, signed in) and
// `deactivateAccount` (POST /account/deactivate), both with user-interactive authentication as the
// typed AuthRequired result (../uia.ts); `usernameAvailable` (GET /register/available) and
// `capabilities` (GET /capabilities), `createLoginToken` (POST /v1/login/get_token, UIA) and
// `registrationTokenValid` (GET /v1/register/m.login.registration_token/validity). Spec: Client-Server API "Account registration and management".
import "reflect-metadata";
import { Arg, Ctx, Mutation, Query, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { AuthInput, type AuthRequired } from "../types/uia.ts";
import { AccountDeactivated, Capabilities, LoginToken, PasswordChanged, RoomVersionCapability } from "../types/account-security.ts";
import { authDictOf, authRequiredOr, uiaResult } from "../uia.ts";
import { logoutAll } from "../../domain/accounts/logout.ts";
import { changePassword } from "../../domain/accounts/change-password.ts";
import { deactivateOwnAccount } from "../../domain/accounts/deactivate.ts";
import { registrationTokenValid, usernameAvailable } from "../../domain/accounts/register.ts";
import { getLoginToken } from "../../domain/accounts/login-token.ts";
import { capabilities } from "../../domain/server/capabilities.ts";
import { MatrixError } from "../../domain/errors.ts";

export const ChangePasswordResult = uiaResult("ChangePasswordResult", PasswordChanged, "The password was changed.");
export const CreateLoginTokenResult = uiaResult("CreateLoginTokenResult", LoginToken, "The login token.");
export const DeactivateAccountResult = uiaResult("DeactivateAccountResult", AccountDeactivated, "The account was deactivated.");

/** The REST operations the UIA sessions are bound to, so a session started on either face finishes on the other. */
const PASSWORD_PATH = "/_matrix/client/v3/account/password";
const DEACTIVATE_PATH = "/_matrix/client/v3/account/deactivate";
const LOGIN_TOKEN_PATH = "/_matrix/client/v1/login/get_token";

/** A JSON body from the given fields, leaving out the ones not given (undefined or null). */
const given = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

const enabled = (c: Record<string, unknown> | undefined) => c?.enabled === true;

@Resolver()
export class AccountSecurityResolver {
  @Mutation(() => Boolean, { description: "Ends every session of the viewer's, this one included: all devices and tokens are deleted (POST /logout/all). Returns true." })
  async logoutAll(@Ctx() ctx: GraphqlContext): Promise<boolean> {
    await logoutAll(ctx.s, await ctx.requester());
    ctx.forgetRequester();
    return true;
  }

  @Mutation(() => ChangePasswordResult, {
    description:
      "Changes the viewer's password (POST /account/password): checked against the password policy, then user-interactive " +
      "authentication (m.login.password with the current one): the first call answers AuthRequired; repeat it with `auth`. " +
      "Unless logoutDevices is false, the viewer's other sessions end.",
  })
  async changePassword(
    @Arg("newPassword", () => String) newPassword: string,
    @Arg("logoutDevices", () => Boolean, { nullable: true, description: "Default true." }) logoutDevices: boolean | null,
    @Arg("auth", () => AuthInput, { nullable: true }) auth: AuthInput | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PasswordChanged | AuthRequired> {
    const r = await ctx.requester();
    const body = given({ new_password: newPassword, logout_devices: logoutDevices, auth: authDictOf(auth) });
    return authRequiredOr(async () => {
      await changePassword(ctx.s, r, { path: PASSWORD_PATH, method: "POST", body, clientIp: ctx.clientIp });
      return Object.assign(new PasswordChanged(), { otherDevicesLoggedOut: logoutDevices !== false });
    });
  }

  @Mutation(() => DeactivateAccountResult, {
    description:
      "Deactivates the viewer's account for good (POST /account/deactivate): user-interactive authentication first " +
      "(m.login.password): the first call answers AuthRequired; repeat it with `auth`. `erase` also hides their messages from new members.",
  })
  async deactivateAccount(
    @Arg("erase", () => Boolean, { nullable: true, description: "Default false." }) erase: boolean | null,
    @Arg("auth", () => AuthInput, { nullable: true }) auth: AuthInput | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<AccountDeactivated | AuthRequired> {
    const r = await ctx.requester();
    const body = given({ erase, auth: authDictOf(auth) });
    return authRequiredOr(async () => {
      const res = await deactivateOwnAccount(ctx.s, r, { path: DEACTIVATE_PATH, method: "POST", body, clientIp: ctx.clientIp });
      ctx.forgetRequester();
      return Object.assign(new AccountDeactivated(), { idServerUnbindResult: res.id_server_unbind_result });
    });
  }

  @Mutation(() => CreateLoginTokenResult, {
    description:
      "Creates a login token to sign in another device with m.login.token (POST /v1/login/get_token; with " +
      "login_via_existing_session.enabled, else M_UNRECOGNIZED). With require_ui_auth the first call answers AuthRequired; repeat it with `auth`.",
  })
  async createLoginToken(@Arg("auth", () => AuthInput, { nullable: true }) auth: AuthInput | null, @Ctx() ctx: GraphqlContext): Promise<LoginToken | AuthRequired> {
    const r = await ctx.requester();
    const body = given({ auth: authDictOf(auth) });
    return authRequiredOr(async () => {
      const t = await getLoginToken(ctx.s, r, { path: LOGIN_TOKEN_PATH, method: "POST", body, clientIp: ctx.clientIp });
      return Object.assign(new LoginToken(), { loginToken: t.login_token, expiresInMs: t.expires_in_ms });
    });
  }

  @Query(() => Boolean, {
    description: "Whether a registration token may still be used (GET /v1/register/m.login.registration_token/validity). M_FORBIDDEN when registration tokens are off. Needs no token.",
  })
  async registrationTokenValid(@Arg("token", () => String) token: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    return registrationTokenValid(ctx.s, token, ctx.clientIp);
  }

  @Query(() => Boolean, {
    description:
      "Whether a localpart is free to register (GET /register/available): false when taken; an invalid or reserved one is " +
      "M_INVALID_USERNAME / M_EXCLUSIVE, M_FORBIDDEN when registration is off. Needs no token.",
  })
  async usernameAvailable(@Arg("username", () => String) username: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    try {
      await usernameAvailable(ctx.s, username, ctx.clientIp);
      return true;
    } catch (err) {
      if (err instanceof MatrixError && err.errcode === "M_USER_IN_USE") return false;
      throw err;
    }
  }

  @Query(() => Capabilities, { description: "What the server lets the viewer do (GET /capabilities)." })
  async capabilities(@Ctx() ctx: GraphqlContext): Promise<Capabilities> {
    const c = capabilities(ctx.s, await ctx.requester()).capabilities;
    const versions = c["m.room_versions"] as { default: string; available: Record<string, string> };
    return Object.assign(new Capabilities(), {
      changePassword: enabled(c["m.change_password"]),
      defaultRoomVersion: versions.default,
      roomVersions: Object.entries(versions.available).map(([id, stability]) => Object.assign(new RoomVersionCapability(), { id, stability })),
      setDisplayname: enabled(c["m.set_displayname"]),
      setAvatarUrl: enabled(c["m.set_avatar_url"]),
      threepidChanges: enabled(c["m.3pid_changes"]),
      getLoginToken: enabled(c["m.get_login_token"]),
      forgetForcedUponLeave: enabled(c["m.forget_forced_upon_leave"]),
      all: c,
    });
  }
}
