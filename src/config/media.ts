// The media repository's options, with Synapse's names, defaults and checks: uploads and their store,
// authenticated media, thumbnails, URL previews (and the address ranges they may reach), retention, and
// the rc_media_create rate limit. Spec: Client-Server API "Content repository".
import path from "node:path";
import { ConfigError } from "./errors.ts";
import type { RateLimit, Reader } from "./config.ts";
import { DEFAULT_IP_RANGE_BLACKLIST, parseCidr, type Cidr } from "../domain/net/ip-ranges.ts";
import { readMediaStorageConfig, type MediaStorageConfig } from "./media-storage.ts";

export type ThumbnailMethod = "crop" | "scale";

export interface ThumbnailSize {
  width: number;
  height: number;
  method: ThumbnailMethod;
}

/** One `url_preview_url_blacklist` entry: URL parts (urlsplit's names) to glob or ^regex patterns. */
export type UrlBlacklistEntry = Partial<Record<UrlPart, string>>;
export const URL_PARTS = ["scheme", "netloc", "path", "params", "query", "fragment", "username", "password", "hostname", "port"] as const;
export type UrlPart = (typeof URL_PARTS)[number];

/** One of Synapse's `media_upload_limits`: at most `max_bytes` uploaded by a user within `time_period_ms`. */
export interface MediaUploadLimit {
  time_period_ms: number;
  max_bytes: number;
  /** The page M_USER_LIMIT_EXCEEDED's `info_uri` names (default: the server's own page about the limits). */
  info_uri?: string;
  /** Whether the user could raise the limit (an account tier, say): `can_upgrade` in the error. */
  can_upgrade: boolean;
}

/** `media_store` (the primary store: local disk or S3) and `media_storage_providers`: media-storage.ts. */
export interface MediaConfig extends MediaStorageConfig {
  max_upload_size: number;
  /** Per-user upload quotas, longest period first. */
  media_upload_limits: MediaUploadLimit[];
  /** Absolute folder holding local media, remote caches and thumbnails (with media_store.backend s3: scratch files only). */
  media_store_path: string;
  /** Media uploaded while true is served by the authenticated endpoints only (Synapse's default: true). */
  enable_authenticated_media: boolean;
  /** Images with more pixels are not thumbnailed. */
  max_image_pixels: number;
  /** Sizes pre-generated on upload (Synapse's DEFAULT_THUMBNAIL_SIZES). */
  thumbnail_sizes: ThumbnailSize[];
  /** Generate the exact size asked for instead of the closest pre-generated one. */
  dynamic_thumbnails: boolean;
  /** How long an mxc URI from POST /create waits for its content. */
  unused_expiration_time: number;
  max_pending_media_uploads: number;
  url_preview_enabled: boolean;
  /** 0.0.0.0 and :: are refused besides these, whatever the config says (ip-ranges.ts, as Synapse). */
  url_preview_ip_range_blacklist: Cidr[];
  url_preview_ip_range_whitelist: Cidr[];
  url_preview_url_blacklist: UrlBlacklistEntry[];
  url_preview_accept_language: string[];
  max_spider_size: number;
  media_retention: { local_media_lifetime?: number; remote_media_lifetime?: number };
  rc_media_create: RateLimit;
}

/** Synapse's DEFAULT_THUMBNAIL_SIZES. */
export const DEFAULT_THUMBNAIL_SIZES: ThumbnailSize[] = [
  { width: 32, height: 32, method: "crop" },
  { width: 96, height: 96, method: "crop" },
  { width: 320, height: 240, method: "scale" },
  { width: 640, height: 480, method: "scale" },
  { width: 800, height: 600, method: "scale" },
];

function ranges(key: string, list: unknown[]): Cidr[] {
  return list.map((v, i) => {
    try {
      return parseCidr(typeof v === "string" ? v : "");
    } catch {
      throw new ConfigError(`${key}[${i}]`, `${JSON.stringify(v)} is not an IP address or CIDR range`);
    }
  });
}

function thumbnailSizes(r: Reader): ThumbnailSize[] {
  if (!r.has("thumbnail_sizes")) return DEFAULT_THUMBNAIL_SIZES;
  return r.list("thumbnail_sizes").map((item, i) => {
    const name = `thumbnail_sizes[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ConfigError(name, "must be a mapping of width, height and method");
    const { width, height, method = "scale" } = item as Record<string, unknown>;
    for (const [k, v] of [["width", width], ["height", height]] as const)
      if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 10_000) throw new ConfigError(`${name}.${k}`, "must be an integer between 1 and 10000");
    if (method !== "crop" && method !== "scale") throw new ConfigError(`${name}.method`, `must be "crop" or "scale"`);
    return { width: width as number, height: height as number, method };
  });
}

function urlBlacklist(r: Reader): UrlBlacklistEntry[] {
  return r.list("url_preview_url_blacklist").map((item, i) => {
    const name = `url_preview_url_blacklist[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ConfigError(name, "must be a mapping of URL parts to patterns");
    const entry: UrlBlacklistEntry = {};
    for (const [k, v] of Object.entries(item)) {
      if (!(URL_PARTS as readonly string[]).includes(k)) throw new ConfigError(`${name}.${k}`, `is not a URL part (one of ${URL_PARTS.join(", ")})`);
      if (typeof v !== "string") throw new ConfigError(`${name}.${k}`, "must be a string (a glob, or a regular expression starting with ^)");
      if (v.startsWith("^")) {
        try {
          new RegExp(v);
        } catch {
          throw new ConfigError(`${name}.${k}`, `${JSON.stringify(v)} is not a valid regular expression`);
        }
      }
      entry[k as UrlPart] = v;
    }
    return entry;
  });
}

function uploadLimits(r: Reader): MediaUploadLimit[] {
  return r.list("media_upload_limits").map((item, i) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ConfigError(`media_upload_limits[${i}]`, "must be a mapping");
    const l = r.child(item as Record<string, unknown>, `media_upload_limits[${i}].`);
    const period = l.duration("time_period");
    if (period === undefined || period <= 0) throw new ConfigError(`media_upload_limits[${i}].time_period`, "is required (a duration such as 1d)");
    if (!l.has("max_size")) throw new ConfigError(`media_upload_limits[${i}].max_size`, "is required (a size such as 1G)");
    const info = l.optString("info_uri");
    if (info !== undefined && !URL.canParse(info)) throw new ConfigError(`media_upload_limits[${i}].info_uri`, "must be a URL");
    return { time_period_ms: period, max_bytes: l.size("max_size", 0), can_upgrade: l.bool("can_upgrade", false), ...(info ? { info_uri: info } : {}) };
  }).sort((a, b) => b.time_period_ms - a.time_period_ms);
}

export function readMediaConfig(r: Reader, baseDir: string): MediaConfig {
  const previews = r.bool("url_preview_enabled", false);
  if (previews && !r.has("url_preview_ip_range_blacklist"))
    throw new ConfigError("url_preview_ip_range_blacklist", "is required when url_preview_enabled is true (for security, list the address ranges previews must never reach)");
  const blacklist = r.has("url_preview_ip_range_blacklist") ? r.list("url_preview_ip_range_blacklist") : [...DEFAULT_IP_RANGE_BLACKLIST];
  const languages = r.list("url_preview_accept_language").map((v, i) => {
    if (typeof v !== "string" || !/^[\x20-\x7e]+$/.test(v)) throw new ConfigError(`url_preview_accept_language[${i}]`, "must be a language tag such as en-US or \"fr;q=0.8\"");
    return v;
  });
  const retention = r.section("media_retention");
  return {
    max_upload_size: r.size("max_upload_size", 50 * 1024 * 1024),
    media_upload_limits: uploadLimits(r),
    media_store_path: path.resolve(baseDir, r.string("media_store_path", "media_store")),
    ...readMediaStorageConfig(r),
    enable_authenticated_media: r.bool("enable_authenticated_media", true),
    max_image_pixels: r.size("max_image_pixels", 32 * 1024 * 1024),
    thumbnail_sizes: thumbnailSizes(r),
    dynamic_thumbnails: r.bool("dynamic_thumbnails", false),
    unused_expiration_time: r.duration("unused_expiration_time", 24 * 3_600_000)!,
    max_pending_media_uploads: r.number("max_pending_media_uploads", 5, { min: 1, integer: true }),
    url_preview_enabled: previews,
    url_preview_ip_range_blacklist: ranges("url_preview_ip_range_blacklist", blacklist),
    url_preview_ip_range_whitelist: ranges("url_preview_ip_range_whitelist", r.list("url_preview_ip_range_whitelist")),
    url_preview_url_blacklist: urlBlacklist(r),
    url_preview_accept_language: languages.length ? languages : ["en"],
    max_spider_size: r.size("max_spider_size", 10 * 1024 * 1024),
    media_retention: {
      local_media_lifetime: retention.duration("local_media_lifetime"),
      remote_media_lifetime: retention.duration("remote_media_lifetime"),
    },
    rc_media_create: r.rateLimit("rc_media_create", { per_second: 10, burst_count: 50 }),
  };
}
