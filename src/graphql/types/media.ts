// Browser URLs of avatars for the GraphQL face: `avatarHttpUrl(size)` beside every `avatarUrl` (the mxc://
// URI). An <img src> cannot send an Authorization header and the spec forbids access tokens in media URLs,
// so these are short-lived URLs signed for the viewer (src/domain/media/browser-urls.ts).
import "reflect-metadata";
import { Arg, Ctx, Field, Int, ObjectType } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { browserMediaUrl, BROWSER_URL_LIFETIME_MS } from "../../domain/media/browser-urls.ts";
import { MAX_THUMBNAIL_DIMENSION } from "../../domain/media/thumbnails.ts";
import { MatrixError } from "../../domain/errors.ts";

export const AVATAR_HTTP_URL_DOC =
  "The avatar as a URL a browser can load directly (<img src>), with no Authorization header: signed for the viewer, " +
  `valid for at least ${BROWSER_URL_LIFETIME_MS / 60_000} minutes (query again for a fresh one). With \`size\`, a square thumbnail of about ` +
  "size×size pixels (cropped, never larger than the original); without it, the original file. Null without an avatar or without a viewer.";

export const SIZE_ARG_DOC = `Thumbnail edge in pixels (1 to ${MAX_THUMBNAIL_DIMENSION}); omit for the original file.`;

export async function avatarHttpUrl(ctx: GraphqlContext, mxc: string | null | undefined, size: number | null | undefined): Promise<string | null> {
  if (!mxc) return null;
  if (size != null && (!Number.isInteger(size) || size < 1 || size > MAX_THUMBNAIL_DIMENSION))
    throw new MatrixError("M_INVALID_PARAM", `size must be between 1 and ${MAX_THUMBNAIL_DIMENSION}`, 400);
  let userId: string;
  try {
    userId = (await ctx.requester()).userId;
  } catch {
    return null;
  }
  return browserMediaUrl(ctx.s, userId, mxc, size == null ? undefined : { width: size, height: size, method: "crop" });
}

/** The `avatarHttpUrl(size)` field, for object types that carry an `avatarUrl` (an mxc:// URI). */
@ObjectType()
export abstract class WithAvatarHttpUrl {
  abstract avatarUrl: string | null;

  @Field(() => String, { nullable: true, description: AVATAR_HTTP_URL_DOC })
  avatarHttpUrl(
    @Arg("size", () => Int, { nullable: true, description: SIZE_ARG_DOC }) size: number | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string | null> {
    return avatarHttpUrl(ctx, this.avatarUrl, size);
  }
}
