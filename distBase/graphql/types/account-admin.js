var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var ThirdPartyIdentifier_1, IdentityProvider_1, LoginFlow_1;
// GraphQL types of an account's administrative details: its third-party identifiers (GET /account/3pid),
// the login flows with their SSO identity providers (GET /login), and its account validity.
import "reflect-metadata";
import { Field, Float, ObjectType, registerEnumType } from "type-graphql";
let ThirdPartyIdentifier = ThirdPartyIdentifier_1 = class ThirdPartyIdentifier {
    medium;
    address;
    validatedAt;
    addedAt;
    static from(t) {
        return Object.assign(new ThirdPartyIdentifier_1(), { medium: t.medium, address: t.address, validatedAt: t.validated_at, addedAt: t.added_at });
    }
};
__decorate([
    Field(() => String, { description: "email or msisdn." }),
    __metadata("design:type", String)
], ThirdPartyIdentifier.prototype, "medium", void 0);
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], ThirdPartyIdentifier.prototype, "address", void 0);
__decorate([
    Field(() => Float, { description: "When the address was validated (ms since the epoch)." }),
    __metadata("design:type", Number)
], ThirdPartyIdentifier.prototype, "validatedAt", void 0);
__decorate([
    Field(() => Float, { description: "When it was added to the account (ms since the epoch)." }),
    __metadata("design:type", Number)
], ThirdPartyIdentifier.prototype, "addedAt", void 0);
ThirdPartyIdentifier = ThirdPartyIdentifier_1 = __decorate([
    ObjectType({ description: "A third-party identifier (e-mail address or phone number) of the account." })
], ThirdPartyIdentifier);
export { ThirdPartyIdentifier };
let IdentityProvider = IdentityProvider_1 = class IdentityProvider {
    id;
    name;
    icon;
    brand;
    static from(p) {
        return Object.assign(new IdentityProvider_1(), { id: p.id, name: p.name, icon: p.icon ?? null, brand: p.brand ?? null });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], IdentityProvider.prototype, "id", void 0);
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], IdentityProvider.prototype, "name", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "An mxc:// URI of the provider's icon." }),
    __metadata("design:type", Object)
], IdentityProvider.prototype, "icon", void 0);
__decorate([
    Field(() => String, { nullable: true }),
    __metadata("design:type", Object)
], IdentityProvider.prototype, "brand", void 0);
IdentityProvider = IdentityProvider_1 = __decorate([
    ObjectType({ description: "A single sign-on identity provider (the m.login.sso flow's identity_providers)." })
], IdentityProvider);
export { IdentityProvider };
let LoginFlow = LoginFlow_1 = class LoginFlow {
    type;
    getLoginToken;
    identityProviders;
    static from(f) {
        return Object.assign(new LoginFlow_1(), { type: f.type, getLoginToken: f.get_login_token ?? null, identityProviders: (f.identity_providers ?? []).map(IdentityProvider.from) });
    }
};
__decorate([
    Field(() => String, { description: "m.login.password, m.login.token, m.login.sso, m.login.application_service ..." }),
    __metadata("design:type", String)
], LoginFlow.prototype, "type", void 0);
__decorate([
    Field(() => Boolean, { nullable: true, description: "m.login.token: whether POST /login/get_token is available." }),
    __metadata("design:type", Object)
], LoginFlow.prototype, "getLoginToken", void 0);
__decorate([
    Field(() => [IdentityProvider], { description: "m.login.sso: the identity providers (empty for other flows)." }),
    __metadata("design:type", Array)
], LoginFlow.prototype, "identityProviders", void 0);
LoginFlow = LoginFlow_1 = __decorate([
    ObjectType({ description: "A way to log in (GET /login's flows)." })
], LoginFlow);
export { LoginFlow };
let AccountValidity = class AccountValidity {
    enabled;
    expiresAt;
};
__decorate([
    Field(() => Boolean, { description: "Whether account validity is enabled on this server." }),
    __metadata("design:type", Boolean)
], AccountValidity.prototype, "enabled", void 0);
__decorate([
    Field(() => Float, { nullable: true, description: "When the account expires (ms since the epoch); null: never." }),
    __metadata("design:type", Object)
], AccountValidity.prototype, "expiresAt", void 0);
AccountValidity = __decorate([
    ObjectType({ description: "Account validity (Synapse's account_validity): when the account expires." })
], AccountValidity);
export { AccountValidity };
export var EmailTokenPurpose;
(function (EmailTokenPurpose) {
    EmailTokenPurpose["REGISTER"] = "register";
    EmailTokenPurpose["ADD"] = "add";
    EmailTokenPurpose["PASSWORD"] = "password";
})(EmailTokenPurpose || (EmailTokenPurpose = {}));
registerEnumType(EmailTokenPurpose, {
    name: "EmailTokenPurpose",
    description: "What a validated address is for: registering, adding it to the account, resetting a password.",
});
