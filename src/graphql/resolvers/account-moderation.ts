// Account moderation on the GraphQL face (spec v1.18 "Server administration"): the query
// `accountModeration(userId)` and the mutations `setAccountLocked` / `setAccountSuspended`, server admins
// only — the domain operations of GET/PUT /_matrix/client/v1/admin/{lock,suspend}/{userId}
// (accounts/moderation.ts), with the same checks and errcodes.
import "reflect-metadata";
import { Arg, Ctx, Field, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { getModerationFlag, setModerationFlag } from "../../domain/accounts/moderation.ts";

@ObjectType({ description: "An account's moderation flags: locked (MSC3939) and suspended (MSC3823)." })
export class AccountModeration {
  @Field(() => String)
  userId!: string;

  @Field(() => Boolean, { description: "Every request but logging out is refused (M_USER_LOCKED, soft logout)." })
  locked!: boolean;

  @Field(() => Boolean, { description: "The account may read and leave, not send, join, invite, upload or change its profile." })
  suspended!: boolean;
}

@Resolver()
export class AccountModerationResolver {
  @Query(() => AccountModeration, { description: "A local account's moderation flags (GET /admin/lock and /admin/suspend); server admins only." })
  async accountModeration(@Arg("userId", () => String) userId: string, @Ctx() ctx: GraphqlContext): Promise<AccountModeration> {
    const r = await ctx.requester();
    const locked = await getModerationFlag(ctx.s, r, userId, "locked");
    const suspended = await getModerationFlag(ctx.s, r, userId, "suspended");
    return Object.assign(new AccountModeration(), { userId, locked, suspended });
  }

  @Mutation(() => Boolean, { description: "Locks or unlocks a local account (PUT /admin/lock/{userId}); server admins only, never their own." })
  async setAccountLocked(@Arg("userId", () => String) userId: string, @Arg("locked", () => Boolean) locked: boolean, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    return setModerationFlag(ctx.s, await ctx.requester(), userId, "locked", locked);
  }

  @Mutation(() => Boolean, { description: "Suspends or unsuspends a local account (PUT /admin/suspend/{userId}); server admins only, never their own." })
  async setAccountSuspended(@Arg("userId", () => String) userId: string, @Arg("suspended", () => Boolean) suspended: boolean, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    return setModerationFlag(ctx.s, await ctx.requester(), userId, "suspended", suspended);
  }
}
