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
// Mutations for accounts and sessions: register, login, logout. Each calls the domain operation its
// REST twin calls (POST /register, /login, /logout), with the input in the spec's snake_case body.
import "reflect-metadata";
import { Arg, Ctx, Mutation, Resolver } from "type-graphql";
import { login } from "../../domain/accounts/login.js";
import { register, registrationFlows } from "../../domain/accounts/register.js";
import { logout } from "../../domain/accounts/logout.js";
import { AuthPayload, LoginInput, RegisterInput, RegistrationKind } from "../types/auth.js";
/** The REST path registration runs under, so its UIA session is bound to the same operation as POST /register. */
const REGISTER_PATH = "/_matrix/client/v3/register";
/** A JSON body from the given fields, leaving out the ones not given (undefined or null). */
function body(fields) {
    return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
}
let AccountResolver = class AccountResolver {
    async register(input, ctx) {
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
    async login(input, ctx) {
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
    async logout(ctx) {
        await logout(ctx.s, await ctx.requester());
        ctx.forgetRequester();
        return true;
    }
};
__decorate([
    Mutation(() => AuthPayload, {
        nullable: true,
        description: "Registers an account and, unless inhibitLogin, logs it in. The server's registration flow is completed in " +
            "this one call: m.login.dummy, or m.login.registration_token with `registrationToken`. Errors carry the " +
            "Matrix errcode (M_USER_IN_USE, M_INVALID_USERNAME, M_WEAK_PASSWORD, M_FORBIDDEN ...).",
    }),
    __param(0, Arg("input", () => RegisterInput)),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [RegisterInput, Object]),
    __metadata("design:returntype", Promise)
], AccountResolver.prototype, "register", null);
__decorate([
    Mutation(() => AuthPayload, { nullable: true, description: "Logs in with a password or a login token and starts a session." }),
    __param(0, Arg("input", () => LoginInput)),
    __param(1, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [LoginInput, Object]),
    __metadata("design:returntype", Promise)
], AccountResolver.prototype, "login", null);
__decorate([
    Mutation(() => Boolean, { nullable: true, description: "Ends the viewer's session: its device and tokens are deleted. Returns true." }),
    __param(0, Ctx()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object]),
    __metadata("design:returntype", Promise)
], AccountResolver.prototype, "logout", null);
AccountResolver = __decorate([
    Resolver()
], AccountResolver);
export { AccountResolver };
