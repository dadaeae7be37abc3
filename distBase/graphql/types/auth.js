var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var AuthPayload_1;
// GraphQL inputs and payload of registration and login: the fields of POST /register and POST /login
// (Client-Server API "Account registration", "Login") in camelCase, and the session they start.
import "reflect-metadata";
import { Field, Float, InputType, ObjectType, registerEnumType } from "type-graphql";
export var RegistrationKind;
(function (RegistrationKind) {
    RegistrationKind["USER"] = "user";
    RegistrationKind["GUEST"] = "guest";
})(RegistrationKind || (RegistrationKind = {}));
registerEnumType(RegistrationKind, { name: "RegistrationKind", description: "The `kind` of POST /register." });
export var LoginType;
(function (LoginType) {
    LoginType["PASSWORD"] = "m.login.password";
    LoginType["TOKEN"] = "m.login.token";
})(LoginType || (LoginType = {}));
registerEnumType(LoginType, {
    name: "LoginType",
    description: "The login type: PASSWORD is m.login.password, TOKEN is m.login.token (a login token).",
});
let RegisterInput = class RegisterInput {
    kind;
    username;
    password;
    deviceId;
    initialDeviceDisplayName;
    inhibitLogin;
    refreshToken;
    registrationToken;
};
__decorate([
    Field(() => RegistrationKind, { defaultValue: RegistrationKind.USER }),
    __metadata("design:type", String)
], RegisterInput.prototype, "kind", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The localpart wanted; a numeric one is generated when absent." }),
    __metadata("design:type", Object)
], RegisterInput.prototype, "username", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], RegisterInput.prototype, "password", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "Reuse this device ID instead of generating one (ignored for guests)." }),
    __metadata("design:type", Object)
], RegisterInput.prototype, "deviceId", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], RegisterInput.prototype, "initialDeviceDisplayName", void 0);
__decorate([
    Field(() => Boolean, { defaultValue: false, description: "Create the account without logging in (no access token)." }),
    __metadata("design:type", Boolean)
], RegisterInput.prototype, "inhibitLogin", void 0);
__decorate([
    Field(() => Boolean, { defaultValue: false, description: "Ask for a refresh token (the access token then expires)." }),
    __metadata("design:type", Boolean)
], RegisterInput.prototype, "refreshToken", void 0);
__decorate([
    Field(() => String, {
        nullable: true,
        description: "The registration token, required when the server only registers with one (m.login.registration_token).",
    }),
    __metadata("design:type", Object)
], RegisterInput.prototype, "registrationToken", void 0);
RegisterInput = __decorate([
    InputType({ description: "POST /register. With a USER kind the server's registration flow is completed in this call." })
], RegisterInput);
export { RegisterInput };
let UserIdentifierInput = class UserIdentifierInput {
    type;
    user;
    medium;
    address;
    country;
    phone;
};
__decorate([
    Field(() => String, { description: "m.id.user, m.id.thirdparty or m.id.phone." }),
    __metadata("design:type", String)
], UserIdentifierInput.prototype, "type", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], UserIdentifierInput.prototype, "user", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], UserIdentifierInput.prototype, "medium", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], UserIdentifierInput.prototype, "address", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], UserIdentifierInput.prototype, "country", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], UserIdentifierInput.prototype, "phone", void 0);
UserIdentifierInput = __decorate([
    InputType({ description: "The spec's login `identifier` (m.id.user, m.id.thirdparty, m.id.phone)." })
], UserIdentifierInput);
export { UserIdentifierInput };
let LoginInput = class LoginInput {
    type;
    user;
    identifier;
    password;
    token;
    deviceId;
    initialDeviceDisplayName;
    refreshToken;
};
__decorate([
    Field(() => LoginType, { defaultValue: LoginType.PASSWORD }),
    __metadata("design:type", String)
], LoginInput.prototype, "type", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "PASSWORD: a localpart or a full user ID (short for an m.id.user identifier)." }),
    __metadata("design:type", Object)
], LoginInput.prototype, "user", void 0);
__decorate([
    Field(() => UserIdentifierInput, { nullable: true, description: "PASSWORD: who is logging in, as the spec's identifier." }),
    __metadata("design:type", Object)
], LoginInput.prototype, "identifier", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "PASSWORD: the password." }),
    __metadata("design:type", Object)
], LoginInput.prototype, "password", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "TOKEN: the login token." }),
    __metadata("design:type", Object)
], LoginInput.prototype, "token", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "Reuse this device (its other sessions end) instead of creating one." }),
    __metadata("design:type", Object)
], LoginInput.prototype, "deviceId", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], LoginInput.prototype, "initialDeviceDisplayName", void 0);
__decorate([
    Field(() => Boolean, { defaultValue: false, description: "Ask for a refresh token (the access token then expires)." }),
    __metadata("design:type", Boolean)
], LoginInput.prototype, "refreshToken", void 0);
LoginInput = __decorate([
    InputType({ description: "POST /login." })
], LoginInput);
export { LoginInput };
let AuthPayload = AuthPayload_1 = class AuthPayload {
    userId;
    accessToken;
    deviceId;
    refreshToken;
    expiresInMs;
    homeServer;
    static from(r) {
        return Object.assign(new AuthPayload_1(), {
            userId: r.user_id,
            accessToken: r.access_token ?? null,
            deviceId: r.device_id ?? null,
            refreshToken: r.refresh_token ?? null,
            expiresInMs: r.expires_in_ms ?? null,
            homeServer: r.home_server,
        });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], AuthPayload.prototype, "userId", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "Null when registration was asked to inhibit login." }),
    __metadata("design:type", Object)
], AuthPayload.prototype, "accessToken", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], AuthPayload.prototype, "deviceId", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "Set when a refresh token was asked for." }),
    __metadata("design:type", Object)
], AuthPayload.prototype, "refreshToken", void 0);
__decorate([
    Field(() => Float, { nullable: true, description: "Milliseconds until the access token expires (null: it does not)." }),
    __metadata("design:type", Object)
], AuthPayload.prototype, "expiresInMs", void 0);
__decorate([
    Field(() => String, { description: "The server name of the homeserver." }),
    __metadata("design:type", String)
], AuthPayload.prototype, "homeServer", void 0);
AuthPayload = AuthPayload_1 = __decorate([
    ObjectType({ description: "A new session (or, with inhibitLogin, just the new account)." })
], AuthPayload);
export { AuthPayload };
