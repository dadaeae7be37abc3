// GET /_matrix/client/v1/media/preview_url (and the legacy /_matrix/media/v3/preview_url): OpenGraph
// data for a URL, when url_preview_enabled. The page is fetched through safe-fetch.ts (every hop checked
// against the address ranges and the URL blacklist), at most max_spider_size bytes, with
// url_preview_accept_language; an image (the URL itself, or the page's og:image) is stored as local media
// and named by its mxc URI. Results are kept per URL and fetch time, so `ts` can ask for an older one.
// Spec: Client-Server API "Content repository", GET /preview_url.
import { readFile } from "node:fs/promises";
import { requireNotGuest } from "../../accounts/guest-access.ts";
import type { Readable } from "node:stream";
import { MatrixError } from "../../errors.ts";
import type { Services } from "../../services.ts";
import type { Requester } from "../../accounts/requester.ts";
import { unlinkQuietly } from "../files.ts";
import { mxcUri } from "../ids.ts";
import { writeToTemp } from "../write-stream.ts";
import { adoptTempFile, isValidMediaType } from "../upload.ts";
import { essence } from "../serving.ts";
import { safeGet, type SafeFetchPolicy } from "./safe-fetch.ts";
import type { OpenGraph } from "./open-graph.ts";
import { loadSharp } from "../thumbnails.ts";

const ONE_HOUR = 3_600_000;
const MAX_REDIRECTS = 10;
const TIMEOUT_MS = 30_000;

function policy(s: Services): SafeFetchPolicy {
  return {
    ranges: { blacklist: s.config.url_preview_ip_range_blacklist, whitelist: s.config.url_preview_ip_range_whitelist },
    urlBlacklist: s.config.url_preview_url_blacklist,
    resolver: s.media.resolver,
    acceptLanguage: s.config.url_preview_accept_language,
    timeoutMs: TIMEOUT_MS,
    maxRedirects: MAX_REDIRECTS,
  };
}

interface Downloaded {
  url: URL;
  mediaType: string;
  tmp: { path: string; size: number };
}

/** Drops a response body we will not read (its abort error is expected, not unhandled). */
function discard(body: Readable): void {
  body.on("error", () => {});
  body.destroy();
}

/** Fetches `url` into a temp file: 2xx only, HTML or an image, at most max_spider_size. */
async function download(s: Services, url: URL): Promise<Downloaded> {
  const res = await safeGet(url, policy(s));
  if (res.status < 200 || res.status >= 300) {
    discard(res.body);
    throw new MatrixError("M_UNKNOWN", `Got error ${res.status}`, 502);
  }
  const raw = res.headers["content-type"];
  const mediaType = (Array.isArray(raw) ? raw[0] : raw)?.trim() || "application/octet-stream";
  const kind = essence(mediaType);
  if (!(kind === "text/html" || kind === "application/xhtml+xml" || kind.startsWith("image/")) || !isValidMediaType(mediaType)) {
    discard(res.body);
    throw new MatrixError("M_UNKNOWN", "Requested file's content type not allowed for this operation", 502);
  }
  const limit = s.config.max_spider_size;
  const tmp = await writeToTemp(s.media.files, res.body, limit, () => new MatrixError("M_TOO_LARGE", `Requested file is too large > ${limit} bytes`, 502)).finally(() => discard(res.body));
  return { url: res.url, mediaType, tmp };
}

/** Stores a downloaded image as local media; the OpenGraph fields that describe it. */
async function storeImage(s: Services, d: Downloaded): Promise<OpenGraph> {
  // Measured while the download is still a local file (it may be stored in a bucket next).
  let size: Record<string, number> = {};
  try {
    const sharp = await loadSharp();
    const meta = await sharp(d.tmp.path, { limitInputPixels: s.config.max_image_pixels }).metadata();
    if (meta.width && meta.height) size = { "og:image:width": meta.width, "og:image:height": meta.height };
  } catch {
    // Not decodable: no dimensions.
  }
  const ref = await adoptTempFile(s, d.tmp, { mediaType: d.mediaType, uploadName: null }, null);
  return { "og:image": mxcUri(ref), "og:image:type": d.mediaType, "matrix:image:size": d.tmp.size, ...size };
}

function parseUrl(text: string): URL {
  try {
    const url = new URL(text);
    if (url.protocol === "http:" || url.protocol === "https:") return url;
  } catch {
    // fall through
  }
  throw new MatrixError("M_INVALID_PARAM", "Invalid URL: only http and https URLs can be previewed", 400);
}

async function buildPreview(s: Services, url: URL): Promise<OpenGraph> {
  const page = await download(s, url);
  if (essence(page.mediaType).startsWith("image/")) return storeImage(s, page);
  const { decodeHtml, parseOpenGraph } = await import("./open-graph.ts"); // htmlparser2 loads with the first page
  let html: string;
  try {
    html = decodeHtml(await readFile(page.tmp.path), page.mediaType);
  } finally {
    await unlinkQuietly(page.tmp.path);
  }
  const og = parseOpenGraph(html);
  const image = og["og:image"];
  delete og["og:image"];
  if (typeof image === "string") {
    try {
      const img = await download(s, new URL(image, page.url));
      if (essence(img.mediaType).startsWith("image/")) Object.assign(og, await storeImage(s, img));
      else await unlinkQuietly(img.tmp.path);
    } catch (err) {
      s.log.info({ url: image, reason: (err as Error).message }, "URL preview image not fetched");
    }
  }
  return og;
}

/** The preview of `urlText` at `ts` (default now): from the cache when fresh, else fetched now. */
export async function previewUrl(s: Services, r: Requester, urlText: string, ts?: number): Promise<OpenGraph> {
  requireNotGuest(r, "previewUrl");
  // Synapse serves no such endpoint then.
  if (!s.config.url_preview_enabled) throw new MatrixError("M_UNRECOGNIZED", "URL previews are disabled on this server", 404);
  const url = parseUrl(urlText);
  const at = ts ?? s.clock.now();
  const cached = await s.media.store.urlPreview(url.href, at);
  if (cached && cached.expiresTs > at && Math.floor(cached.responseCode / 100) === 2) return JSON.parse(cached.og) as OpenGraph;
  const json = await s.media.previews.run(url.href, async () => {
    const og = await buildPreview(s, url);
    const now = s.clock.now();
    const text = JSON.stringify(og);
    const image = typeof og["og:image"] === "string" ? og["og:image"].split("/").pop()! : null;
    await s.media.store.addUrlPreview({ url: url.href, responseCode: 200, og: text, mediaId: image, downloadTs: now, expiresTs: now + ONE_HOUR });
    return text;
  });
  return JSON.parse(json) as OpenGraph;
}
