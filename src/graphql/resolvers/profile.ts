// Profile of the viewer: displayName and avatarUrl fields (read once per request through the profile
// DataLoader) and the mutations that set them, calling the domain operations of PUT /profile/{userId}/...
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from "type-graphql";
import { AVATAR_HTTP_URL_DOC, SIZE_ARG_DOC, avatarHttpUrl } from "../types/media.ts";
import { setAvatarUrl, setDisplayName } from "../../domain/profile/profile.ts";
import type { GraphqlContext } from "../context.ts";
import { Viewer } from "../types/viewer.ts";

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
}
