// Pure rules of the media repository: Content-Disposition (inline list, RFC 6266/5987 names), range
// parsing, thumbnail size selection, the URL pattern blacklist (globs and ^regexes on urlsplit's parts),
// OpenGraph parsing and charset decoding, mxc URIs, and the media options of homeserver.yaml.
import { describe, expect, it } from "vitest";
import { contentDisposition, mediaHeaders, servedContentType } from "../../src/domain/media/serving.ts";
import { parseRange } from "../../src/compat/media/send-file.ts";
import { chooseSize } from "../../src/domain/media/thumbnails.ts";
import { isUrlBlacklisted } from "../../src/domain/media/preview/url-blacklist.ts";
import { decodeHtml, parseOpenGraph } from "../../src/domain/media/preview/open-graph.ts";
import { parseMxc } from "../../src/domain/media/ids.ts";
import { DEFAULT_THUMBNAIL_SIZES } from "../../src/config/media.ts";
import { parseConfig } from "../../src/config/config.ts";

describe("serving headers", () => {
  it("serves inline only the safe types, with names as tokens or RFC 5987 ext-values", () => {
    expect(contentDisposition("image/png", "a.png")).toBe("inline; filename=a.png");
    expect(contentDisposition("IMAGE/PNG; x=y", null)).toBe("inline");
    expect(contentDisposition("image/svg+xml", "a.svg")).toBe("attachment; filename=a.svg");
    expect(contentDisposition("text/html", "x")).toBe("attachment; filename=x");
    expect(contentDisposition("application/octet-stream", "naïve file(1).txt")).toBe("attachment; filename*=utf-8''na%C3%AFve%20file%281%29.txt");
    expect(contentDisposition("image/svg+xml", "t.png", true)).toBe("inline; filename=t.png");
    expect(servedContentType("text/css")).toBe("text/css; charset=UTF-8");
    expect(servedContentType("text/plain; charset=ISO-8859-1")).toBe("text/plain; charset=ISO-8859-1");
    expect(servedContentType(null)).toBe("application/octet-stream");
    expect(mediaHeaders("image/png", null)).toMatchObject({ "referrer-policy": "no-referrer", "cross-origin-resource-policy": "cross-origin" });
  });

  it("parses single byte ranges", () => {
    expect(parseRange(undefined, 100)).toBeUndefined();
    expect(parseRange("bytes=0-0", 100)).toEqual([0, 0]);
    expect(parseRange("bytes=10-", 100)).toEqual([10, 99]);
    expect(parseRange("bytes=90-500", 100)).toEqual([90, 99]);
    expect(parseRange("bytes=-10", 100)).toEqual([90, 99]);
    expect(parseRange("bytes=-500", 100)).toEqual([0, 99]);
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=5-2", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=-0", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-1,5-6", 100)).toBeUndefined();
    expect(parseRange("items=0-1", 100)).toBeUndefined();
  });
});

describe("thumbnail sizes", () => {
  it("picks the smallest configured size of the method at least as big, else the largest", () => {
    const pick = (width: number, height: number, method: "crop" | "scale") => chooseSize(DEFAULT_THUMBNAIL_SIZES, false, { width, height, method, animated: false });
    expect(pick(32, 32, "crop")).toEqual({ width: 32, height: 32, method: "crop" });
    expect(pick(33, 20, "crop")).toEqual({ width: 96, height: 96, method: "crop" });
    expect(pick(400, 300, "scale")).toEqual({ width: 640, height: 480, method: "scale" });
    expect(pick(2000, 2000, "scale")).toEqual({ width: 800, height: 600, method: "scale" });
    expect(pick(500, 500, "crop")).toEqual({ width: 96, height: 96, method: "crop" });
    expect(chooseSize(DEFAULT_THUMBNAIL_SIZES, true, { width: 77, height: 55, method: "crop", animated: false })).toEqual({ width: 77, height: 55, method: "crop" });
    expect(chooseSize([{ width: 50, height: 50, method: "crop" }], false, { width: 10, height: 10, method: "scale", animated: false })).toEqual({ width: 50, height: 50, method: "crop" });
  });
});

describe("url_preview_url_blacklist", () => {
  const u = (s: string) => new URL(s);
  it("matches globs and ^regexes against urlsplit's parts; every part of an entry must match", () => {
    const list = [{ username: "*" }, { netloc: "google.com" }, { netloc: "*.google.com" }, { netloc: "www.acme.com", path: "/foo" }, { netloc: "^.*\\.evil\\.org$" }, { scheme: "http", port: "81" }];
    expect(isUrlBlacklisted(u("http://user@example.com/"), list)).toBe(true);
    expect(isUrlBlacklisted(u("https://google.com/search"), list)).toBe(true);
    expect(isUrlBlacklisted(u("https://mail.google.com/"), list)).toBe(true);
    expect(isUrlBlacklisted(u("https://notgoogle.com/"), list)).toBe(false);
    expect(isUrlBlacklisted(u("https://www.acme.com/foo"), list)).toBe(true);
    expect(isUrlBlacklisted(u("https://www.acme.com/bar"), list)).toBe(false);
    expect(isUrlBlacklisted(u("https://a.b.evil.org/x"), list)).toBe(true);
    expect(isUrlBlacklisted(u("http://example.com:81/"), list)).toBe(true);
    expect(isUrlBlacklisted(u("https://example.com:81/"), list)).toBe(false);
    expect(isUrlBlacklisted(u("https://example.com/"), list)).toBe(false);
    expect(isUrlBlacklisted(u("https://example.com/a.b"), [{ path: "/a?b" }])).toBe(true);
    expect(isUrlBlacklisted(u("https://example.com/x"), [{ path: "/[!x]" }])).toBe(false);
    expect(isUrlBlacklisted(u("https://example.com/y"), [{ path: "/[!x]" }])).toBe(true);
  });
});

describe("OpenGraph", () => {
  it("reads og: tags first, twitter: tags where og: is missing, then title, description and images", () => {
    expect(parseOpenGraph(`<meta property="og:title" content="A"><meta name="twitter:title" content="B"><meta name="twitter:description" content="D"><title>C</title>`)).toEqual({ "og:title": "A", "og:description": "D" });
    const fallback = parseOpenGraph(`<html><head><title>T &amp; U</title></head><body><nav>menu</nav><h1>Head</h1><p>Some   text here.</p><script>bad()</script><img src="/small.png" width="5" height="5"><img src="/big.png" width="300" height="200"></body></html>`);
    expect(fallback).toEqual({ "og:title": "T & U", "og:description": "Head Some text here.", "og:image": "/big.png" });
    expect(parseOpenGraph(`<body><h2>Only heading</h2></body>`)["og:title"]).toBe("Only heading");
    expect(parseOpenGraph(`<meta property="og:${"x".repeat(60)}" content="y"><meta property="og:long" content="${"z".repeat(1001)}">`)).toEqual({});
    expect(parseOpenGraph("not html at all")).toEqual({});
  });

  it("decodes with the header's charset, else a meta charset, else UTF-8", () => {
    expect(decodeHtml(Buffer.from("<title>caf\xe9</title>", "latin1"), "text/html; charset=ISO-8859-1")).toBe("<title>café</title>");
    expect(decodeHtml(Buffer.from(`<meta charset="iso-8859-1"><title>\xe0 la carte</title>`, "latin1"), "text/html")).toContain("à la carte");
    expect(decodeHtml(Buffer.from(`<meta http-equiv="Content-Type" content="text/html; charset=utf-16le">`, "latin1"), "text/html; charset=utf-8")).toContain("http-equiv");
    expect(decodeHtml(Buffer.from("<title>café</title>"), "text/html; charset=bogus")).toBe("<title>café</title>");
  });
});

describe("mxc URIs and media options", () => {
  it("parses only well-formed mxc URIs", () => {
    expect(parseMxc("mxc://example.org/abc_DEF-1")).toEqual({ origin: "example.org", mediaId: "abc_DEF-1" });
    expect(parseMxc("mxc://[::1]:8448/abc")).toEqual({ origin: "[::1]:8448", mediaId: "abc" });
    for (const bad of ["mxc://example.org/a/b", "mxc://example.org/", "http://example.org/abc", "mxc://bad host/abc", "mxc://example.org/a.b", 42, null]) expect(parseMxc(bad), String(bad)).toBeUndefined();
  });

  it("reads Synapse's media options with their defaults and refuses bad ones", () => {
    const base = { server_name: "example.org" };
    const c = parseConfig(base, "/srv/weft");
    expect(c).toMatchObject({
      max_upload_size: 50 * 1024 * 1024, media_store_path: "/srv/weft/media_store", enable_authenticated_media: true,
      dynamic_thumbnails: false, url_preview_enabled: false, url_preview_accept_language: ["en"], max_spider_size: 10 * 1024 * 1024,
      rc_media_create: { per_second: 10, burst_count: 50 }, media_retention: { local_media_lifetime: undefined, remote_media_lifetime: undefined },
      max_pending_media_uploads: 5, unused_expiration_time: 86_400_000,
    });
    expect(c.thumbnail_sizes).toEqual(DEFAULT_THUMBNAIL_SIZES);
    const custom = parseConfig({ ...base, media_store_path: "/data/media", thumbnail_sizes: [{ width: 64, height: 64, method: "crop" }], media_retention: { remote_media_lifetime: "14d" }, url_preview_enabled: true, url_preview_ip_range_blacklist: ["10.0.0.0/8"], url_preview_ip_range_whitelist: ["10.1.0.0/16"] });
    expect(custom.media_store_path).toBe("/data/media");
    expect(custom.thumbnail_sizes).toEqual([{ width: 64, height: 64, method: "crop" }]);
    expect(custom.media_retention.remote_media_lifetime).toBe(14 * 86_400_000);
    expect(custom.url_preview_ip_range_blacklist.map((r) => r.text)).toEqual(["10.0.0.0/8"]);
    expect(custom.url_preview_ip_range_whitelist.map((r) => r.text)).toEqual(["10.1.0.0/16"]);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ url_preview_enabled: true }, /url_preview_ip_range_blacklist/],
      [{ url_preview_ip_range_blacklist: ["10.0.0.0/99"] }, /url_preview_ip_range_blacklist\[0\]/],
      [{ url_preview_ip_range_whitelist: ["nope"] }, /url_preview_ip_range_whitelist\[0\]/],
      [{ thumbnail_sizes: [{ width: 0, height: 10 }] }, /thumbnail_sizes\[0\]\.width/],
      [{ thumbnail_sizes: [{ width: 10, height: 10, method: "stretch" }] }, /thumbnail_sizes\[0\]\.method/],
      [{ url_preview_url_blacklist: [{ host: "x" }] }, /url_preview_url_blacklist\[0\]\.host/],
      [{ url_preview_url_blacklist: [{ path: "^(" }] }, /url_preview_url_blacklist\[0\]\.path/],
      [{ max_upload_size: "lots" }, /max_upload_size/],
      [{ media_retention: { local_media_lifetime: "soon" } }, /media_retention\.local_media_lifetime/],
      [{ rc_media_create: { per_second: -1 } }, /rc_media_create\.per_second/],
    ];
    for (const [extra, message] of bad) expect(() => parseConfig({ ...base, ...extra }), JSON.stringify(extra)).toThrow(message);
  });

  it("reads media_store (local by default, or an S3 bucket) and Synapse's media_storage_providers, and refuses bad ones", () => {
    const base = { server_name: "example.org" };
    const plain = parseConfig(base, "/srv/weft");
    expect([plain.media_store, plain.media_storage_providers, plain.warnings]).toEqual([{ backend: "local" }, [], []]);
    const s3 = parseConfig({ ...base, media_store: { backend: "s3", bucket: "my-media", endpoint_url: "http://minio:9000", access_key_id: "k", secret_access_key: "s", prefix: "weft/" } });
    expect(s3.media_store).toEqual({ backend: "s3", s3: { bucket: "my-media", region: "us-east-1", endpoint_url: "http://minio:9000", access_key_id: "k", secret_access_key: "s", prefix: "weft/", force_path_style: true } });
    expect(s3.warnings).toEqual([]);
    const aws = parseConfig({ ...base, media_store: { backend: "s3", bucket: "my-media", region: "eu-west-1", storage_class: "STANDARD_IA" } });
    expect(aws.media_store).toEqual({ backend: "s3", s3: { bucket: "my-media", region: "eu-west-1", prefix: "", force_path_style: false, storage_class: "STANDARD_IA" } });
    const providers = parseConfig({
      ...base,
      media_storage_providers: [
        { module: "s3_storage_provider.S3StorageProviderBackend", store_local: true, store_remote: true, store_synchronous: true, config: { bucket: "synapse-media", region_name: "fr-par", endpoint_url: "https://s3.fr-par.scw.cloud", access_key_id: "k", secret_access_key: "s", session_token: "t" } },
        { module: "s3_storage_provider.S3StorageProviderBackend", config: { bucket: "backup-media", force_path_style: false } },
      ],
    });
    expect(providers.media_storage_providers).toEqual([
      { store_local: true, store_remote: true, store_synchronous: true, s3: { bucket: "synapse-media", region: "fr-par", endpoint_url: "https://s3.fr-par.scw.cloud", access_key_id: "k", secret_access_key: "s", session_token: "t", prefix: "", force_path_style: true } },
      // Synapse's defaults: nothing is stored on a provider unless asked, and in the background.
      { store_local: false, store_remote: false, store_synchronous: false, s3: { bucket: "backup-media", region: "us-east-1", prefix: "", force_path_style: false } },
    ]);
    expect(parseConfig({ ...base, media_store: { backend: "s3", bucket: "my-media", regoin: "x" } }).warnings).toEqual([expect.stringContaining("media_store.regoin")]);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ media_store: { backend: "gcs" } }, /media_store\.backend/],
      [{ media_store: { backend: "s3" } }, /media_store\.bucket/],
      [{ media_store: { backend: "s3", bucket: "Bad_Bucket" } }, /media_store\.bucket/],
      [{ media_store: { backend: "s3", bucket: "ok-bucket", endpoint_url: "minio:9000" } }, /media_store\.endpoint_url/],
      [{ media_store: { backend: "s3", bucket: "ok-bucket", access_key_id: "k" } }, /media_store\.secret_access_key/],
      [{ media_storage_providers: [{ module: "synapse.media.storage_provider.FileStorageProviderBackend", config: { directory: "/x" } }] }, /media_storage_providers\[0\]\.module/],
      [{ media_storage_providers: [{ module: "s3_storage_provider.S3StorageProviderBackend", config: {} }] }, /media_storage_providers\[0\]\.config\.bucket/],
      [{ media_storage_providers: [{ module: "s3_storage_provider.S3StorageProviderBackend", store_local: "yes", config: { bucket: "ok-bucket" } }] }, /media_storage_providers\[0\]\.store_local/],
      [{ media_storage_providers: "s3" }, /media_storage_providers/],
    ];
    for (const [extra, message] of bad) expect(() => parseConfig({ ...base, ...extra }), JSON.stringify(extra)).toThrow(message);
  });
});
