// GraphQL types of an account's administrative details: its third-party identifiers (GET /account/3pid),
// the login flows with their SSO identity providers (GET /login), and its account validity.
import "reflect-metadata";
import { Field, Float, ObjectType, registerEnumType } from "type-graphql";
import type { LoginFlow as DomainLoginFlow } from "../../domain/accounts/login.ts";
import type { IdentityProviderInfo } from "../../domain/sso/flow.ts";

@ObjectType({ description: "A third-party identifier (e-mail address or phone number) of the account." })
export class ThirdPartyIdentifier {
  @Field(() => String, { description: "email or msisdn." })
  medium!: string;

  @Field(() => String)
  address!: string;

  @Field(() => Float, { description: "When the address was validated (ms since the epoch)." })
  validatedAt!: number;

  @Field(() => Float, { description: "When it was added to the account (ms since the epoch)." })
  addedAt!: number;

  static from(t: { medium: string; address: string; validated_at: number; added_at: number }): ThirdPartyIdentifier {
    return Object.assign(new ThirdPartyIdentifier(), { medium: t.medium, address: t.address, validatedAt: t.validated_at, addedAt: t.added_at });
  }
}

@ObjectType({ description: "A single sign-on identity provider (the m.login.sso flow's identity_providers)." })
export class IdentityProvider {
  @Field(() => String)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true, description: "An mxc:// URI of the provider's icon." })
  icon!: string | null;

  @Field(() => String, { nullable: true })
  brand!: string | null;

  static from(p: IdentityProviderInfo): IdentityProvider {
    return Object.assign(new IdentityProvider(), { id: p.id, name: p.name, icon: p.icon ?? null, brand: p.brand ?? null });
  }
}

@ObjectType({ description: "A way to log in (GET /login's flows)." })
export class LoginFlow {
  @Field(() => String, { description: "m.login.password, m.login.token, m.login.sso, m.login.application_service ..." })
  type!: string;

  @Field(() => Boolean, { nullable: true, description: "m.login.token: whether POST /login/get_token is available." })
  getLoginToken!: boolean | null;

  @Field(() => [IdentityProvider], { description: "m.login.sso: the identity providers (empty for other flows)." })
  identityProviders!: IdentityProvider[];

  static from(f: DomainLoginFlow): LoginFlow {
    return Object.assign(new LoginFlow(), { type: f.type, getLoginToken: f.get_login_token ?? null, identityProviders: (f.identity_providers ?? []).map(IdentityProvider.from) });
  }
}

@ObjectType({ description: "Account validity (Synapse's account_validity): when the account expires." })
export class AccountValidity {
  @Field(() => Boolean, { description: "Whether account validity is enabled on this server." })
  enabled!: boolean;

  @Field(() => Float, { nullable: true, description: "When the account expires (ms since the epoch); null: never." })
  expiresAt!: number | null;
}

export enum EmailTokenPurpose {
  REGISTER = "register",
  ADD = "add",
  PASSWORD = "password",
}
registerEnumType(EmailTokenPurpose, {
  name: "EmailTokenPurpose",
  description: "What a validated address is for: registering, adding it to the account, resetting a password.",
});
