// Mutations for accounts and sessions: register, login, logout. Each calls the domain operation its
// REST twin calls (POST /register, /login, /logout), with the input in the spec's snake_case body.
import "reflect-metadata";
import { Arg, Ctx, Mutation, Resolver } from "type-graphql";
import { login } from "../../domain/accounts/login.ts";
import { register, registrationFlows } from "../../domain/accounts/register.ts";
import { logout } from "../../domain/accounts/logout.ts";
import type { GraphqlContext } from "../context.ts";
import { AuthPayload, LoginInput, RegisterInput, RegistrationKind } from "../types/auth.ts";

/** The REST path registration runs under, so its UIA session is bound to the same operation as POST /register. */
const REGISTER_PATH = "/_matrix/client/v3/register";

/** A JSON body from the given fields, leaving out the ones not given (undefined or null). */
function body(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
}

@Resolver()
export class AccountResolver {
  @Mutation(() => AuthPayload, {
    nullable: true,
    description:
      "Registers an account and, unless inhibitLogin, logs it in. The server's registration flow is completed in " +
      "this one call: m.login.dummy, or m.login.registration_token with `registrationToken`. Errors carry the " +
      "Matrix errcode (M_USER_IN_USE, M_INVALID_USERNAME, M_WEAK_PASSWORD, M_FORBIDDEN ...).",
  })
  async register(@Arg("input", () => RegisterInput) input: RegisterInput, @Ctx() ctx: GraphqlContext): Promise<AuthPayload> {
    const fields = body({
      username: input.username,
      password: input.password,
      device_id: input.deviceId,
      initial_device_display_name: input.initialDeviceDisplayName,
      inhibit_login: input.inhibitLogin,
      refresh_token: input.refreshToken,
    });
    // Without a token and without a dummy flow, no stage is tried: the error is the 401's M_UNAUTHORIZED
    // with the server's `flows` in its extensions.
    const dummyAllowed = registrationFlows(ctx.s).some((f) => f.length === 1 && f[0] === "m.login.dummy");
    const auth = input.registrationToken != null
      ? { auth: { type: "m.login.registration_token", token: input.registrationToken } }
      : dummyAllowed ? { auth: { type: "m.login.dummy" } } : {};
    const result = await register(ctx.s, {
      kind: input.kind,
      body: input.kind === RegistrationKind.USER ? { ...fields, ...auth } : fields,
      path: REGISTER_PATH,
      method: "POST",
      clientIp: ctx.clientIp,
      bearerToken: ctx.bearerToken,
    });
    return AuthPayload.from(result);
  }

  @Mutation(() => AuthPayload, { nullable: true, description: "Logs in with a password or a login token and starts a session." })
  async login(@Arg("input", () => LoginInput) input: LoginInput, @Ctx() ctx: GraphqlContext): Promise<AuthPayload> {
    const result = await login(ctx.s, {
      body: body({
        type: input.type,
        user: input.user,
        identifier: input.identifier ? body({ ...input.identifier }) : undefined,
        password: input.password,
        token: input.token,
        device_id: input.deviceId,
        initial_device_display_name: input.initialDeviceDisplayName,
        refresh_token: input.refreshToken,
      }),
      clientIp: ctx.clientIp,
      bearerToken: ctx.bearerToken,
    });
    return AuthPayload.from(result);
  }

  @Mutation(() => Boolean, { nullable: true, description: "Ends the viewer's session: its device and tokens are deleted. Returns true." })
  async logout(@Ctx() ctx: GraphqlContext): Promise<boolean> {
    await logout(ctx.s, await ctx.requester());
    ctx.forgetRequester();
    return true;
  }
}
