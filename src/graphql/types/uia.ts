// User-interactive authentication as a typed GraphQL flow (issue 39, item 4; spec: Client-Server API
// "User-Interactive Authentication API"): the `AuthRequired` result a mutation answers in place of REST's
// 401 (flows, params, session, the stages completed, and the failed stage's errcode), and `AuthInput`,
// the stage's credentials a client sends back (REST's `auth` dict). A mutation that needs UIA returns a
// union `<Name>Result = <its payload> | AuthRequired`, made by uiaResult() in ../uia.ts.
import "reflect-metadata";
import { Field, InputType, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.ts";
import { UserIdentifierInput } from "./auth.ts";

@ObjectType({ description: "One way to authenticate: the stages to complete, in order." })
export class AuthFlow {
  @Field(() => [String], { description: "Stage types, e.g. m.login.password, m.login.email.identity, m.login.recaptcha." })
  stages!: string[];
}

@ObjectType({
  description:
    "The operation needs (more) user-interactive authentication: complete a stage of one of `flows` and repeat the mutation " +
    "with `auth` (its type, `session` and the stage's credentials). Nothing was changed.",
})
export class AuthRequired {
  @Field(() => [AuthFlow])
  flows!: AuthFlow[];

  @Field(() => GraphQLJSONObject, { description: "Per stage type, what the client needs to complete it (e.g. m.login.terms: the policies)." })
  params!: Record<string, unknown>;

  @Field(() => String, { description: "The session to send back in `auth.session`; it is bound to this operation." })
  session!: string;

  @Field(() => [String], { description: "The stages already completed in this session." })
  completed!: string[];

  @Field(() => String, { nullable: true, description: "Why the stage just sent failed (e.g. M_FORBIDDEN for a wrong password); null when none was sent or it passed." })
  errcode!: string | null;

  @Field(() => String, { nullable: true, description: "The failure's message." })
  error!: string | null;
}

@InputType({ description: "The credentials of one user-interactive authentication stage (REST's `auth` dict)." })
export class AuthInput {
  @Field(() => String, { nullable: true, description: "The stage type (m.login.password, m.login.email.identity, m.login.dummy ...); may be absent to continue a session." })
  type?: string | null;

  @Field(() => String, { nullable: true, description: "The session of the AuthRequired answer." })
  session?: string | null;

  @Field(() => UserIdentifierInput, { nullable: true, description: "m.login.password: who authenticates (the viewer)." })
  identifier?: UserIdentifierInput | null;

  @Field(() => String, { nullable: true, description: "m.login.password: the password." })
  password?: string | null;

  @Field(() => String, { nullable: true, description: "m.login.registration_token / m.login.token: the token." })
  token?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Other fields of the stage (e.g. threepid_creds, response), as the spec names them." })
  extra?: Record<string, unknown> | null;
}
