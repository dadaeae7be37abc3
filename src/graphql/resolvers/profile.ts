// Profiles in GraphQL: the viewer's displayName, avatarUrl, timeZone and extended profileFields (read once
// per request through the profile DataLoader), any user's profile (`profile`), and the mutations that set
// them, calling the domain operations of GET, PUT and DELETE /profile/{userId}/{keyName}.
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { AVATAR_HTTP_URL_DOC, SIZE_ARG_DOC, avatarHttpUrl } from "../types/media.ts";
import { setAvatarUrl, setDisplayName } from "../../domain/profile/profile.ts";
import { deleteProfileKey, setProfileKey } from "../../domain/profile/extended-fields.ts";
import type { GraphqlContext } from "../context.ts";
import { Viewer } from "../types/viewer.ts";
import { GraphQLJSON, GraphQLJSONObject } from "../types/json.ts";
import { PROFILE_FIELDS_DOC, UserProfile, extendedFields, timeZoneOf } from "../types/profile.ts";

@Resolver(() => Viewer)
export class ProfileResolver {
  @FieldResolver(() => String, { nullable: true })
  async displayName(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<string | null> {
    return (await ctx.loaders.profile.load(viewer.userId)).displayname ?? null;
  }

  @FieldResolver(() => String, { nullable: true, description: "An mxc:// URI (for a browser, use avatarHttpUrl)." })
  async avatarUrl(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<string | null> {
    return (await ctx.loaders.profile.load(viewer.userId)).avatar_url ?? null;
  }

  @FieldResolver(() => String, { nullable: true, description: AVATAR_HTTP_URL_DOC })
  async avatarHttpUrl(
    @Root() viewer: Viewer,
    @Arg("size", () => Int, { nullable: true, description: SIZE_ARG_DOC }) size: number | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string | null> {
    return avatarHttpUrl(ctx, (await ctx.loaders.profile.load(viewer.userId)).avatar_url, size);
  }

  @FieldResolver(() => String, { nullable: true, description: "The viewer's time zone (m.tz), e.g. Europe/London." })
  async timeZone(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<string | null> {
    return timeZoneOf(await ctx.loaders.profile.load(viewer.userId));
  }

  @FieldResolver(() => GraphQLJSONObject, { description: PROFILE_FIELDS_DOC })
  async profileFields(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<Record<string, unknown>> {
    return extendedFields(await ctx.loaders.profile.load(viewer.userId));
  }

  @Query(() => UserProfile, {
    nullable: true,
    description: "A user's profile, local or remote (GET /profile/{userId}); null when the user is unknown or has no profile information.",
  })
  async profile(@Arg("userId", () => String) userId: string, @Ctx() ctx: GraphqlContext): Promise<UserProfile | null> {
    const p = await ctx.loaders.profile.load(userId);
    return Object.keys(p).length === 0 ? null : UserProfile.of(userId, p);
  }

  @Mutation(() => Viewer, { nullable: true, description: "Sets the viewer's display name (null removes it); returns the viewer." })
  async setDisplayName(
    @Arg("displayName", () => String, { nullable: true }) displayName: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Viewer> {
    const r = await ctx.requester();
    await setDisplayName(ctx.s, r, r.userId, displayName ?? null);
    ctx.loaders.profile.clear(r.userId);
    return Viewer.of(r);
  }

  @Mutation(() => Viewer, { nullable: true, description: "Sets the viewer's avatar to an mxc:// URI (null removes it); returns the viewer." })
  async setAvatarUrl(
    @Arg("avatarUrl", () => String, { nullable: true }) avatarUrl: string | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Viewer> {
    const r = await ctx.requester();
    await setAvatarUrl(ctx.s, r, r.userId, avatarUrl ?? null);
    ctx.loaders.profile.clear(r.userId);
    return Viewer.of(r);
  }

  @Mutation(() => Viewer, {
    nullable: true,
    description:
      "Sets one field of the viewer's profile (PUT /profile/{userId}/{keyName}): m.tz (a string), a custom key such as " +
      "org.example.pronouns (any JSON value, null included), or displayname / avatar_url (strings); returns the viewer.",
  })
  async setProfileField(
    @Arg("key", () => String) key: string,
    @Arg("value", () => GraphQLJSON, { nullable: true }) value: unknown,
    @Ctx() ctx: GraphqlContext,
  ): Promise<Viewer> {
    const r = await ctx.requester();
    await setProfileKey(ctx.s, r, r.userId, key, value ?? null);
    ctx.loaders.profile.clear(r.userId);
    return Viewer.of(r);
  }

  @Mutation(() => Viewer, { nullable: true, description: "Removes one field of the viewer's profile (DELETE /profile/{userId}/{keyName}); returns the viewer." })
  async deleteProfileField(@Arg("key", () => String) key: string, @Ctx() ctx: GraphqlContext): Promise<Viewer> {
    const r = await ctx.requester();
    await deleteProfileKey(ctx.s, r, r.userId, key);
    ctx.loaders.profile.clear(r.userId);
    return Viewer.of(r);
  }
}

@Resolver(() => UserProfile)
export class UserProfileResolver {
  @FieldResolver(() => String, { nullable: true, description: AVATAR_HTTP_URL_DOC })
  async avatarHttpUrl(
    @Root() profile: UserProfile,
    @Arg("size", () => Int, { nullable: true, description: SIZE_ARG_DOC }) size: number | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string | null> {
    return avatarHttpUrl(ctx, profile.avatarUrl, size);
  }
}
