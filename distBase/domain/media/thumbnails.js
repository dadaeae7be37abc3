// Thumbnails (Client-Server API "Thumbnails"): which size answers a request (the closest pre-generated
// one of thumbnail_sizes, or the exact size with dynamic_thumbnails), rendering with sharp (crop or scale,
// animated GIF/WebP kept animated as WebP when asked), never larger than the original, cached on disk
// with a row per thumbnail. The spec's default sizes are pre-generated on upload, as Synapse does.
import { rename, stat } from "node:fs/promises";
import { MatrixError } from "../errors.js";
import { mxcUri } from "./ids.js";
import { unlinkQuietly } from "./files.js";
import { essence } from "./serving.js";
/** Source types we thumbnail, and the static format of their thumbnails (Synapse's map). */
const THUMBNAIL_FORMAT = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/webp": "jpeg",
    "image/gif": "png",
    "image/png": "png",
};
const ANIMATABLE = new Set(["image/gif", "image/webp"]);
export const MAX_THUMBNAIL_DIMENSION = 10_000;
export function cannotThumbnail() {
    return new MatrixError("M_UNKNOWN", "Cannot generate thumbnails for the requested content", 400);
}
export function canThumbnail(mediaType) {
    return mediaType !== null && essence(mediaType) in THUMBNAIL_FORMAT;
}
/** The size to render for a request: exact with dynamic_thumbnails, else the best configured one. */
export function chooseSize(sizes, dynamic, req) {
    if (dynamic || sizes.length === 0)
        return { width: req.width, height: req.height, method: req.method };
    const same = sizes.filter((t) => t.method === req.method);
    const pool = same.length ? same : [...sizes];
    const bigEnough = pool.filter((t) => t.width >= req.width && t.height >= req.height).sort((a, b) => a.width * a.height - b.width * b.height);
    if (bigEnough.length)
        return bigEnough[0];
    return pool.sort((a, b) => b.width * b.height - a.width * a.height)[0];
}
/** sharp (libvips, native), loaded with the first image this server decodes rather than at start. */
export async function loadSharp() {
    return (await import("sharp")).default;
}
/** Renders one thumbnail of `src` into `dest`; throws cannotThumbnail() for content sharp cannot decode. */
async function render(s, src, dest, sourceType, size, animated) {
    const limitInputPixels = Math.max(1, Math.floor(s.config.max_image_pixels));
    const sharp = await loadSharp();
    let meta;
    try {
        meta = await sharp(src, { limitInputPixels, animated }).metadata();
    }
    catch (err) {
        if (/pixel limit/i.test(String(err.message)))
            throw new MatrixError("M_TOO_LARGE", "Content is too large to thumbnail", 413);
        throw cannotThumbnail();
    }
    const pages = meta.pages ?? 1;
    const keepAnimation = animated && pages > 1;
    const rotated = (meta.orientation ?? 1) >= 5;
    const w0 = meta.width ?? 0;
    const h0 = keepAnimation ? (meta.pageHeight ?? meta.height ?? 0) : (meta.height ?? 0);
    const [ow, oh] = rotated ? [h0, w0] : [w0, h0];
    if (ow < 1 || oh < 1)
        throw cannotThumbnail();
    let width;
    let height;
    if (size.method === "scale") {
        const f = Math.min(size.width / ow, size.height / oh, 1);
        width = Math.max(1, Math.round(ow * f));
        height = Math.max(1, Math.round(oh * f));
    }
    else {
        const f = Math.max(size.width / ow, size.height / oh);
        width = Math.max(1, Math.min(ow, Math.round(f > 1 ? size.width / f : size.width)));
        height = Math.max(1, Math.min(oh, Math.round(f > 1 ? size.height / f : size.height)));
    }
    let img = sharp(src, { limitInputPixels, animated: keepAnimation }).rotate().resize(width, height, { fit: size.method === "crop" ? "cover" : "fill" });
    let mediaType;
    if (keepAnimation) {
        img = img.webp({ quality: 80 });
        mediaType = "image/webp";
    }
    else if (THUMBNAIL_FORMAT[essence(sourceType)] === "jpeg") {
        img = img.flatten({ background: "#ffffff" }).jpeg({ quality: 80 });
        mediaType = "image/jpeg";
    }
    else {
        img = img.png();
        mediaType = "image/png";
    }
    try {
        await img.toFile(dest);
    }
    catch {
        await unlinkQuietly(dest);
        throw cannotThumbnail();
    }
    return { mediaType };
}
/** Renders (once, however many ask) and records the thumbnail `key` of `ref`. */
async function generate(s, ref, src, sourceType, size, animated) {
    const { files, store } = s.media;
    const job = `${mxcUri(ref)}/${size.width}x${size.height}/${size.method}/${animated}`;
    return (await s.media.renders.run(job, async () => {
        const tmp = await files.tempPath();
        try {
            const { mediaType } = await render(s, src, tmp, sourceType, size, animated);
            const key = { ...size, mediaType, animated };
            const dest = files.thumbnailPath(ref, key);
            await files.ensureDirFor(dest);
            await rename(tmp, dest);
            const length = (await stat(dest)).size;
            await store.addThumbnail(ref, { ...key, mediaLength: length });
            return { path: dest, mediaType, length };
        }
        finally {
            await unlinkQuietly(tmp);
        }
    }));
}
/** The thumbnail answering `req` for stored media at `src`: from the cache, else rendered now. */
export async function thumbnailOf(s, ref, src, sourceType, req) {
    if (!canThumbnail(sourceType))
        throw cannotThumbnail();
    const size = chooseSize(s.config.thumbnail_sizes, s.config.dynamic_thumbnails, req);
    const animated = req.animated && ANIMATABLE.has(essence(sourceType));
    const cached = (await s.media.store.thumbnails(ref)).find((t) => t.width === size.width && t.height === size.height && t.method === size.method && t.animated === animated);
    if (cached) {
        const path = s.media.files.thumbnailPath(ref, cached);
        try {
            const st = await stat(path);
            return { path, mediaType: cached.mediaType, length: st.size };
        }
        catch {
            // The file went missing: render it again.
        }
    }
    return generate(s, ref, src, sourceType, size, animated);
}
/** Upload-time pre-generation of thumbnail_sizes (static), as Synapse does. */
export async function pregenerateThumbnails(s, ref, mediaType, src) {
    if (!canThumbnail(mediaType))
        return;
    for (const size of s.config.thumbnail_sizes)
        await generate(s, ref, src, mediaType, size, false);
}
