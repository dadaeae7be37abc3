var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
// The account's administrative details over GraphQL — thin faces over the domain operations of their REST
// twins: third-party identifiers (GET /account/3pid, /3pid/add with UIA, /3pid/delete, the e-mail
// requestToken endpoints), login flows and SSO (GET /login, /login/sso/redirect) and account validity.
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { Viewer } from "../types/viewer.js";
import { GraphQLJSONObject } from "../types/json.js";
import { AccountValidity, EmailTokenPurpose, LoginFlow, ThirdPartyIdentifier } from "../types/account-admin.js";
import { addThreePid, deleteThreePid, listThreePids } from "../../domain/accounts/threepids.js";
import { requestEmailToken } from "../../domain/threepids/email-validation.js";
import { loginFlows } from "../../domain/accounts/login.js";
import { ssoRedirectUrl } from "../../domain/sso/flow.js";
import { accountExpiry } from "../../domain/accounts/account-validity.js";
/** The REST path adding an address runs under, so its UIA session is bound to the same operation as POST /account/3pid/add. */
const ADD_PATH = "/_matrix/client/v3/account/3pid/add";
/** A JSON body from the given fields, leaving out the ones not given. */
const body = (fields) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
let ViewerAccountAdminResolver = class ViewerAccountAdminResolver {
    async threepids(viewer, ctx) {
        return (await listThreePids(ctx.s, viewer.requester)).threepids.map(ThirdPartyIdentifier.from);
    }
    async accountValidity(viewer, ctx) {
        return Object.assign(new AccountValidity(), { enabled: ctx.s.config.account_validity.enabled, expiresAt: await accountExpiry(ctx.s, viewer.requester.userId) });
    }
};
__decorate([
    FieldResolver(() => [ThirdPartyIdentifier], { description: "The account's e-mail addresses and phone numbers (GET /account/3pid)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, Object]),
    __metadata("design:returntype", Promise)
], ViewerAccountAdminResolver.prototype, "threepids", null);
__decorate([
    FieldResolver(() => AccountValidity, { description: "When the account expires (Synapse's account_validity)." }),
    __param(0, Root()),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Viewer, Object]),
    __metadata("design:returntype", Promise)
], ViewerAccountAdminResolver.prototype, "accountValidity", null);
ViewerAccountAdminResolver = __decorate([
    Resolver(() => Viewer)
], ViewerAccountAdminResolver);
export { ViewerAccountAdminResolver };
let AccountAdminResolver = class AccountAdminResolver {
    loginFlows(ctx) {
        return loginFlows(ctx.s).map(LoginFlow.from);
    }
    ssoRedirectUrl(redirectUrl, idpId, ctx) {
        return ssoRedirectUrl(ctx.s, idpId ?? undefined, redirectUrl);
    }
    async requestEmailToken(purpose, clientSecret, email, sendAttempt, nextLink, ctx) {
        const { sid } = await requestEmailToken(ctx.s, purpose, body({ client_secret: clientSecret, email, send_attempt: sendAttempt, next_link: nextLink }), ctx.clientIp);
        return sid;
    }
    async addThreepid(clientSecret, sid, auth, ctx) {
        await addThreePid(ctx.s, await ctx.requester(), { path: ADD_PATH, method: "POST", body: body({ client_secret: clientSecret, sid, auth }), clientIp: ctx.clientIp });
        return true;
    }
    async deleteThreepid(medium, address, idServer, ctx) {
        return (await deleteThreePid(ctx.s, await ctx.requester(), body({ medium, address, id_server: idServer }))).id_server_unbind_result;
    }
};
__decorate([
    Query(() => [LoginFlow], { description: "The ways to log in to this server, with the SSO identity providers (GET /login)." }),
    __param(0, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object]),
    __metadata("design:returntype", Array)
], AccountAdminResolver.prototype, "loginFlows", null);
__decorate([
    Query(() => String, {
        description: "The URL a client opens in a browser to sign in through single sign-on (GET /login/sso/redirect[/{idpId}]); " +
            "after the provider, the browser returns to `redirectUrl` with a loginToken for the m.login.token login. " +
            "M_NOT_FOUND for an unknown provider, M_UNRECOGNIZED when SSO is not configured.",
    }),
    __param(0, Arg("redirectUrl", () => String)),
    __param(1, Arg("idpId", () => String, { nullable: true })),
    __param(2, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, Object, Object]),
    __metadata("design:returntype", String)
], AccountAdminResolver.prototype, "ssoRedirectUrl", null);
__decorate([
    Mutation(() => String, {
        description: "Mails a validation link for an e-mail address (POST /register|/account/3pid|/account/password/email/requestToken) " +
            "and returns the session id (sid). The answer is the same whether or not the address is in use.",
    }),
    __param(0, Arg("purpose", () => EmailTokenPurpose)),
    __param(1, Arg("clientSecret", () => String)),
    __param(2, Arg("email", () => String)),
    __param(3, Arg("sendAttempt", () => Int)),
    __param(4, Arg("nextLink", () => String, { nullable: true })),
    __param(5, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, String, Number, Object, Object]),
    __metadata("design:returntype", Promise)
], AccountAdminResolver.prototype, "requestEmailToken", null);
__decorate([
    Mutation(() => Boolean, {
        description: "Adds the address a validated session proves to the account (POST /account/3pid/add). Needs user-interactive " +
            "auth: without `auth` (or with a stage still to do) the error is M_UNAUTHORIZED with `flows` and `session` in its extensions.",
    }),
    __param(0, Arg("clientSecret", () => String)),
    __param(1, Arg("sid", () => String)),
    __param(2, Arg("auth", () => GraphQLJSONObject, { nullable: true })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], AccountAdminResolver.prototype, "addThreepid", null);
__decorate([
    Mutation(() => String, {
        description: "Removes an address from the account and unbinds it on identity servers (POST /account/3pid/delete); returns id_server_unbind_result.",
    }),
    __param(0, Arg("medium", () => String)),
    __param(1, Arg("address", () => String)),
    __param(2, Arg("idServer", () => String, { nullable: true })),
    __param(3, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [String, String, Object, Object]),
    __metadata("design:returntype", Promise)
], AccountAdminResolver.prototype, "deleteThreepid", null);
AccountAdminResolver = __decorate([
    Resolver()
], AccountAdminResolver);
export { AccountAdminResolver };
