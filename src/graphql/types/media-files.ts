// GraphQL types of media files (issue 39 item 3): `MediaFile`, an mxc:// URI with URLs a browser loads in
// <img src> without an Authorization header (the signed, short-lived URLs of avatarHttpUrl:
// src/domain/media/browser-urls.ts), `UploadTicket` (an upload by signed URL: signed-upload.ts says why
// not the multipart request spec), and `UrlPreview` (the OpenGraph data of GET /preview_url).
import "reflect-metadata";
import { Arg, Ctx, Field, Int, ObjectType, registerEnumType } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { browserMediaUrl, BROWSER_URL_LIFETIME_MS } from "../../domain/media/browser-urls.ts";
import { MAX_THUMBNAIL_DIMENSION } from "../../domain/media/thumbnails.ts";
import { MatrixError } from "../../domain/errors.ts";
import { Timestamp } from "./scalars.ts";
import { GraphQLJSONObject } from "./json.ts";

export enum ThumbnailMethod {
  SCALE = "scale",
  CROP = "crop",
}
registerEnumType(ThumbnailMethod, { name: "ThumbnailMethod", description: "How a thumbnail fits the size asked: SCALE keeps the aspect ratio inside it, CROP fills it." });

const URL_DOC = `Signed for the viewer, valid for at least ${BROWSER_URL_LIFETIME_MS / 60_000} minutes (query again for a fresh one); no Authorization header needed.`;

@ObjectType({ description: "A media file by its mxc:// URI, with URLs a browser can load directly (<img src>)." })
export class MediaFile {
  @Field(() => String, { description: "The mxc:// URI (what events and profiles carry)." })
  mxcUri!: string;

  @Field(() => String, { nullable: true, description: `The file itself. ${URL_DOC} Null for a malformed mxc URI.` })
  httpUrl(@Ctx() ctx: GraphqlContext): Promise<string | null> {
    return viewerUrl(ctx, this.mxcUri);
  }

  @Field(() => String, { nullable: true, description: `A thumbnail of about width×height pixels (never larger than the original). ${URL_DOC}` })
  thumbnailHttpUrl(
    @Arg("width", () => Int, { description: `1 to ${MAX_THUMBNAIL_DIMENSION}.` }) width: number,
    @Arg("height", () => Int, { description: `1 to ${MAX_THUMBNAIL_DIMENSION}.` }) height: number,
    @Arg("method", () => ThumbnailMethod, { defaultValue: ThumbnailMethod.SCALE }) method: ThumbnailMethod,
    @Ctx() ctx: GraphqlContext,
  ): Promise<string | null> {
    for (const [name, v] of [["width", width], ["height", height]] as const)
      if (!Number.isInteger(v) || v < 1 || v > MAX_THUMBNAIL_DIMENSION) throw new MatrixError("M_INVALID_PARAM", `${name} must be between 1 and ${MAX_THUMBNAIL_DIMENSION}`, 400);
    return viewerUrl(ctx, this.mxcUri, { width, height, method });
  }

  static of(mxcUri: string): MediaFile {
    return Object.assign(new MediaFile(), { mxcUri });
  }
}

async function viewerUrl(ctx: GraphqlContext, mxc: string, thumb?: { width: number; height: number; method: ThumbnailMethod }): Promise<string | null> {
  const { userId } = await ctx.requester();
  return browserMediaUrl(ctx.s, userId, mxc, thumb);
}

@ObjectType({
  description:
    "A reserved mxc:// URI and the URL to upload its content to: PUT the bytes to uploadUrl (Content-Type: the file's media type; " +
    "append &filename=<name> to name it), no Authorization header. A signed URL, not the GraphQL multipart request spec: a browser " +
    "sends a File as the body as it is (with progress events), nothing passes through the GraphQL layer, and CDNs and proxies need no " +
    "GraphQL support. The PUT answers {} (200) or a Matrix error; the content is then served at media.httpUrl.",
})
export class UploadTicket {
  @Field(() => String, { description: "Where to PUT the content; works once, until expiresAt." })
  uploadUrl!: string;

  @Field(() => Timestamp, { description: "When uploadUrl stops working." })
  expiresAt!: number;

  @Field(() => MediaFile, { description: "The file the content will be (its mxc:// URI to put in events, and browser URLs)." })
  media!: MediaFile;
}

@ObjectType({ description: "A URL's preview (GET /preview_url): its OpenGraph data, the og:image stored as local media." })
export class UrlPreview {
  @Field(() => String, { nullable: true, description: "og:title (or the page's <title>)." })
  title!: string | null;

  @Field(() => String, { nullable: true, description: "og:description (or the page's description)." })
  description!: string | null;

  @Field(() => String, { nullable: true, description: "og:site_name." })
  siteName!: string | null;

  @Field(() => MediaFile, { nullable: true, description: "og:image, stored on this server (its mxc:// URI and browser URLs)." })
  image!: MediaFile | null;

  @Field(() => Int, { nullable: true, description: "og:image:width in pixels." })
  imageWidth!: number | null;

  @Field(() => Int, { nullable: true, description: "og:image:height in pixels." })
  imageHeight!: number | null;

  @Field(() => GraphQLJSONObject, { description: "Every OpenGraph key as the REST endpoint answers it (og:*, matrix:image:size)." })
  openGraph!: Record<string, unknown>;

  static of(og: Record<string, string | number>): UrlPreview {
    const str = (k: string) => (typeof og[k] === "string" ? (og[k] as string) : null);
    const int = (k: string) => (typeof og[k] === "number" && Number.isInteger(og[k]) ? (og[k] as number) : null);
    const image = str("og:image");
    return Object.assign(new UrlPreview(), {
      title: str("og:title"),
      description: str("og:description"),
      siteName: str("og:site_name"),
      image: image?.startsWith("mxc://") ? MediaFile.of(image) : null,
      imageWidth: int("og:image:width"),
      imageHeight: int("og:image:height"),
      openGraph: og,
    });
  }
}
