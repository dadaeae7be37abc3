// The account's administrative details over GraphQL — thin faces over the domain operations of their REST
// twins: third-party identifiers (GET /account/3pid, /3pid/add with UIA, /3pid/delete, the e-mail
// requestToken endpoints), login flows and SSO (GET /login, /login/sso/redirect) and account validity.
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { Viewer } from "../types/viewer.ts";
import { GraphQLJSONObject } from "../types/json.ts";
import { AccountValidity, EmailTokenPurpose, LoginFlow, ThirdPartyIdentifier } from "../types/account-admin.ts";
import { addThreePid, deleteThreePid, listThreePids } from "../../domain/accounts/threepids.ts";
import { requestEmailToken } from "../../domain/threepids/email-validation.ts";
import { loginFlows } from "../../domain/accounts/login.ts";
import { ssoRedirectUrl } from "../../domain/sso/flow.ts";
import { accountExpiry } from "../../domain/accounts/account-validity.ts";

/** The REST path adding an address runs under, so its UIA session is bound to the same operation as POST /account/3pid/add. */
const ADD_PATH = "/_matrix/client/v3/account/3pid/add";

/** A JSON body from the given fields, leaving out the ones not given. */
const body = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));

@Resolver(() => Viewer)
export class ViewerAccountAdminResolver {
  @FieldResolver(() => [ThirdPartyIdentifier], { description: "The account's e-mail addresses and phone numbers (GET /account/3pid)." })
  async threepids(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<ThirdPartyIdentifier[]> {
    return (await listThreePids(ctx.s, viewer.requester)).threepids.map(ThirdPartyIdentifier.from);
  }

  @FieldResolver(() => AccountValidity, { description: "When the account expires (Synapse's account_validity)." })
  async accountValidity(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<AccountValidity> {
    return Object.assign(new AccountValidity(), { enabled: ctx.s.config.account_validity.enabled, expiresAt: await accountExpiry(ctx.s, viewer.requester.userId) });
  }
}

@Resolver()
export class AccountAdminResolver {
  @Query(() => [LoginFlow], { description: "The ways to log in to this server, with the SSO identity providers (GET /login)." })
  loginFlows(@Ctx() ctx: GraphqlContext): LoginFlow[] {
    return loginFlows(ctx.s).map(LoginFlow.from);
  }

  @Query(() => String, {
    description:
      "The URL a client opens in a browser to sign in through single sign-on (GET /login/sso/redirect[/{idpId}]); " +
      "after the provider, the browser returns to `redirectUrl` with a loginToken for the m.login.token login. " +
      "M_NOT_FOUND for an unknown provider, M_UNRECOGNIZED when SSO is not configured.",
  })
  ssoRedirectUrl(
    @Arg("redirectUrl", () => String) redirectUrl: string,
    @Arg("idpId", () => String, { nullable: true }) idpId: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): string {
    return ssoRedirectUrl(ctx.s, idpId ?? undefined, redirectUrl);
  }

  @Mutation(() => String, {
    description:
      "Mails a validation link for an e-mail address (POST /register|/account/3pid|/account/password/email/requestToken) " +
      "and returns the session id (sid). The answer is the same whether or not the address is in use.",
  })
  async requestEmailToken(
    @Arg("purpose", () => EmailTokenPurpose) purpose: EmailTokenPurpose,
    @Arg("clientSecret", () => String) clientSecret: string,
    @Arg("email", () => String) email: string,
    @Arg("sendAttempt", () => Int) sendAttempt: number,
    @Arg("nextLink", () => String, { nullable: true }) nextLink: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string> {
    const { sid } = await requestEmailToken(ctx.s, purpose, body({ client_secret: clientSecret, email, send_attempt: sendAttempt, next_link: nextLink }), ctx.clientIp);
    return sid;
  }

  @Mutation(() => Boolean, {
    description:
      "Adds the address a validated session proves to the account (POST /account/3pid/add). Needs user-interactive " +
      "auth: without `auth` (or with a stage still to do) the error is M_UNAUTHORIZED with `flows` and `session` in its extensions.",
  })
  async addThreepid(
    @Arg("clientSecret", () => String) clientSecret: string,
    @Arg("sid", () => String) sid: string,
    @Arg("auth", () => GraphQLJSONObject, { nullable: true }) auth: Record<string, unknown> | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    await addThreePid(ctx.s, await ctx.requester(), { path: ADD_PATH, method: "POST", body: body({ client_secret: clientSecret, sid, auth }), clientIp: ctx.clientIp });
    return true;
  }

  @Mutation(() => String, {
    description: "Removes an address from the account and unbinds it on identity servers (POST /account/3pid/delete); returns id_server_unbind_result.",
  })
  async deleteThreepid(
    @Arg("medium", () => String) medium: string,
    @Arg("address", () => String) address: string,
    @Arg("idServer", () => String, { nullable: true }) idServer: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string> {
    return (await deleteThreePid(ctx.s, await ctx.requester(), body({ medium, address, id_server: idServer }))).id_server_unbind_result;
  }
}
