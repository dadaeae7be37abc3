// Media on the GraphQL face: `createUpload` (reserve an mxc URI, get a signed URL to PUT its content to:
// domain/media/signed-upload.ts), `media(mxcUri)` (browser URLs of any mxc:// URI an event or profile
// carries), `urlPreview(url)` (the domain's preview of GET /preview_url) and `mediaUploadSizeLimit`
// (GET /media/config). Each calls one domain operation.
import "reflect-metadata";
import { Arg, Ctx, Float, Mutation, Query, Resolver } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { createSignedUpload } from "../../domain/media/signed-upload.ts";
import { previewUrl } from "../../domain/media/preview/preview.ts";
import { parseMxc } from "../../domain/media/ids.ts";
import { MatrixError } from "../../domain/errors.ts";
import { mediaConfig } from "../../domain/media/config.ts";
import { Timestamp } from "../types/scalars.ts";
import { MediaFile, UploadTicket, UrlPreview } from "../types/media-files.ts";

@Resolver()
export class MediaResolver {
  @Query(() => Float, { description: "The largest upload the server accepts, in bytes (GET /media/config's m.upload.size)." })
  async mediaUploadSizeLimit(@Ctx() ctx: GraphqlContext): Promise<number> {
    await ctx.requester();
    return mediaConfig(ctx.s)["m.upload.size"];
  }

  @Mutation(() => UploadTicket, {
    description:
      "Reserves an mxc:// URI (POST /media/v1/create: its rate limit and cap on pending uploads) and returns a short-lived URL to PUT the " +
      "content to, without a token (see UploadTicket). The upload then follows PUT /upload/{serverName}/{mediaId}'s rules (max_upload_size, quotas).",
  })
  async createUpload(@Ctx() ctx: GraphqlContext): Promise<UploadTicket> {
    const t = await createSignedUpload(ctx.s, await ctx.requester());
    return Object.assign(new UploadTicket(), { uploadUrl: t.uploadUrl, expiresAt: t.expiresAt, media: MediaFile.of(t.contentUri) });
  }

  @Query(() => MediaFile, { description: "A media file by mxc:// URI, for its browser URLs (the viewer's access to media applies when they are loaded). M_INVALID_PARAM for a malformed URI." })
  async media(@Arg("mxcUri", () => String) mxcUri: string, @Ctx() ctx: GraphqlContext): Promise<MediaFile> {
    await ctx.requester();
    if (!parseMxc(mxcUri)) throw new MatrixError("M_INVALID_PARAM", "mxcUri must be an mxc://server/mediaId URI", 400);
    return MediaFile.of(mxcUri);
  }

  @Query(() => UrlPreview, { description: "A preview of a web page (GET /preview_url): `ts` asks for the preview as of that time (cached previews). M_UNRECOGNIZED when previews are off." })
  async urlPreview(
    @Arg("url", () => String) url: string,
    @Arg("ts", () => Timestamp, { nullable: true }) ts: number | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<UrlPreview> {
    return UrlPreview.of(await previewUrl(ctx.s, await ctx.requester(), url, ts ?? undefined));
  }
}
