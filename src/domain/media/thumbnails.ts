// Thumbnails (Client-Server API "Thumbnails"): which size answers a request (the closest pre-generated
// one of thumbnail_sizes, or the exact size with dynamic_thumbnails), rendering with sharp (crop or scale,
// animated GIF/WebP kept animated as WebP when asked), never larger than the original, kept in the media
// stores beside the content (storage.ts) with a row per thumbnail. The spec's default sizes are pre-generated on upload, as Synapse does.
import { stat } from "node:fs/promises";
import type { Metadata } from "sharp";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { ThumbnailMethod, ThumbnailSize } from "../../config/media.ts";
import { mxcUri, type MediaRef } from "./ids.ts";
import { unlinkQuietly, type ThumbnailKey } from "./files.ts";
import { essence } from "./serving.ts";
import type { StoredObject } from "./backend.ts";
import type { FileRange } from "./file-range.ts";

/** Source types we thumbnail, and the static format of their thumbnails (Synapse's map). */
const THUMBNAIL_FORMAT: Record<string, "jpeg" | "png"> = {
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/webp": "jpeg",
  "image/gif": "png",
  "image/png": "png",
};
const ANIMATABLE = new Set(["image/gif", "image/webp"]);

export const MAX_THUMBNAIL_DIMENSION = 10_000;

export interface ThumbnailRequest {
  width: number;
  height: number;
  method: ThumbnailMethod;
  animated: boolean;
}

export interface ThumbnailFile {
  mediaType: string;
  length: number;
  /** Reads [start, end] of it (the whole thumbnail by default) from its store. */
  open(start?: number, end?: number): Promise<FileRange>;
}

/** Runs a render on a local file of the source image. */
type WithSource = <T>(fn: (path: string) => Promise<T>) => Promise<T>;

export function cannotThumbnail(): MatrixError {
  return new MatrixError("M_UNKNOWN", "Cannot generate thumbnails for the requested content", 400);
}

export function canThumbnail(mediaType: string | null): boolean {
  return mediaType !== null && essence(mediaType) in THUMBNAIL_FORMAT;
}

/** The size to render for a request: exact with dynamic_thumbnails, else the best configured one. */
export function chooseSize(sizes: readonly ThumbnailSize[], dynamic: boolean, req: ThumbnailRequest): ThumbnailSize {
  if (dynamic || sizes.length === 0) return { width: req.width, height: req.height, method: req.method };
  const same = sizes.filter((t) => t.method === req.method);
  const pool = same.length ? same : [...sizes];
  const bigEnough = pool.filter((t) => t.width >= req.width && t.height >= req.height).sort((a, b) => a.width * a.height - b.width * b.height);
  if (bigEnough.length) return bigEnough[0]!;
  return pool.sort((a, b) => b.width * b.height - a.width * a.height)[0]!;
}

/** sharp (libvips, native), loaded with the first image this server decodes rather than at start. */
export async function loadSharp(): Promise<typeof import("sharp").default> {
  return (await import("sharp")).default;
}

/** Renders one thumbnail of `src` into `dest`; throws cannotThumbnail() for content sharp cannot decode. */
async function render(s: Services, src: string, dest: string, sourceType: string, size: ThumbnailSize, animated: boolean): Promise<{ mediaType: string }> {
  const limitInputPixels = Math.max(1, Math.floor(s.config.max_image_pixels));
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(src, { limitInputPixels, animated }).metadata();
  } catch (err) {
    if (/pixel limit/i.test(String((err as Error).message))) throw new MatrixError("M_TOO_LARGE", "Content is too large to thumbnail", 413);
    throw cannotThumbnail();
  }
  const pages = meta.pages ?? 1;
  const keepAnimation = animated && pages > 1;
  const rotated = (meta.orientation ?? 1) >= 5;
  const w0 = meta.width ?? 0;
  const h0 = keepAnimation ? (meta.pageHeight ?? meta.height ?? 0) : (meta.height ?? 0);
  const [ow, oh] = rotated ? [h0, w0] : [w0, h0];
  if (ow < 1 || oh < 1) throw cannotThumbnail();
  let width: number;
  let height: number;
  if (size.method === "scale") {
    const f = Math.min(size.width / ow, size.height / oh, 1);
    width = Math.max(1, Math.round(ow * f));
    height = Math.max(1, Math.round(oh * f));
  } else {
    const f = Math.max(size.width / ow, size.height / oh);
    width = Math.max(1, Math.min(ow, Math.round(f > 1 ? size.width / f : size.width)));
    height = Math.max(1, Math.min(oh, Math.round(f > 1 ? size.height / f : size.height)));
  }
  let img = sharp(src, { limitInputPixels, animated: keepAnimation }).rotate().resize(width, height, { fit: size.method === "crop" ? "cover" : "fill" });
  let mediaType: string;
  if (keepAnimation) {
    img = img.webp({ quality: 80 });
    mediaType = "image/webp";
  } else if (THUMBNAIL_FORMAT[essence(sourceType)] === "jpeg") {
    img = img.flatten({ background: "#ffffff" }).jpeg({ quality: 80 });
    mediaType = "image/jpeg";
  } else {
    img = img.png();
    mediaType = "image/png";
  }
  try {
    await img.toFile(dest);
  } catch {
    await unlinkQuietly(dest);
    throw cannotThumbnail();
  }
  return { mediaType };
}

/** Renders (once, however many ask), stores and records the thumbnail `key` of `ref`. */
async function generate(s: Services, ref: MediaRef, withSource: WithSource, sourceType: string, size: ThumbnailSize, animated: boolean): Promise<ThumbnailFile> {
  const { files, store, storage } = s.media;
  const job = `${mxcUri(ref)}/${size.width}x${size.height}/${size.method}/${animated}`;
  return (await s.media.renders.run(job, async () => {
    const tmp = await files.tempPath();
    let mediaType: string;
    let length: number;
    try {
      ({ mediaType } = await withSource((src) => render(s, src, tmp, sourceType, size, animated)));
      length = (await stat(tmp)).size;
    } catch (err) {
      await unlinkQuietly(tmp);
      throw err;
    }
    const key: ThumbnailKey = { ...size, mediaType, animated };
    const objectKey = files.thumbnailKey(ref, key);
    // adopt() owns the scratch file from here: it moves, uploads or removes it.
    const held = await storage.adopt(objectKey, tmp, { local: files.isLocal(ref), contentType: mediaType });
    await held.release();
    await store.addThumbnail(ref, { ...key, mediaLength: length });
    return { mediaType, length, open: (start?: number, end?: number) => storage.primary.open(objectKey, length, start, end) } satisfies ThumbnailFile;
  })) as ThumbnailFile;
}

/** The thumbnail answering `req` for stored media `src` (stored as `ref`): from the cache, else rendered now. */
export async function thumbnailOf(s: Services, ref: MediaRef, src: StoredObject, sourceType: string | null, req: ThumbnailRequest): Promise<ThumbnailFile> {
  if (!canThumbnail(sourceType)) throw cannotThumbnail();
  const size = chooseSize(s.config.thumbnail_sizes, s.config.dynamic_thumbnails, req);
  const animated = req.animated && ANIMATABLE.has(essence(sourceType!));
  const { storage, files } = s.media;
  const cached = (await s.media.store.thumbnails(ref)).find(
    (t) => t.width === size.width && t.height === size.height && t.method === size.method && t.animated === animated,
  );
  if (cached) {
    const found = await storage.find(files.thumbnailKey(ref, cached));
    if (found) return { mediaType: cached.mediaType, length: found.length, open: found.open };
    // The file went missing: render it again.
  }
  const withSource: WithSource = (fn) => storage.withLocalFile(files.contentKey(ref), src, fn);
  return generate(s, ref, withSource, sourceType!, size, animated);
}

/** Upload-time pre-generation of thumbnail_sizes (static) from the local file `src`, as Synapse does. */
export async function pregenerateThumbnails(s: Services, ref: MediaRef, mediaType: string, src: string): Promise<void> {
  if (!canThumbnail(mediaType)) return;
  const withSource: WithSource = (fn) => fn(src);
  for (const size of s.config.thumbnail_sizes) await generate(s, ref, withSource, mediaType, size, false);
}
