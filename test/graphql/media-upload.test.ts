// Media through GraphQL only, on SQLite and PostgreSQL: `createUpload` reserves an mxc URI and signs a URL
// that a plain PUT with no Authorization header fills; the returned MediaFile's httpUrl and thumbnailHttpUrl
// load without a token; a bad signature, another user's name, an expired URL or a second PUT are refused
// with errcode JSON and leave storage unchanged; `urlPreview` gives a local page's OpenGraph data with its
// image as a MediaFile.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { mediaRowCount, png, storeFiles } from "../helpers/media.ts";
import { DEFAULT_IP_RANGE_BLACKLIST } from "../../src/domain/net/ip-ranges.ts";
import { gql, REGISTER } from "./client.ts";

const CREATE_UPLOAD = `mutation { createUpload { uploadUrl expiresAt media { mxcUri httpUrl thumb: thumbnailHttpUrl(width: 32, height: 32, method: CROP) } } }`;
const MEDIA = `query ($mxc: String!) { media(mxcUri: $mxc) { mxcUri httpUrl thumbnailHttpUrl(width: 100, height: 100) } }`;

const put = (url: string, body: Buffer, type = "image/png") => fetch(url, { method: "PUT", body, headers: { "content-type": type } });
const errOf = async (r: Response) => [r.status, ((await r.json()) as { errcode?: string }).errcode];

describe.each(backends())("media over GraphQL on %s", (backend) => {
  let t: TestServer;
  let token: string;
  let otherToken: string;
  let web: Server;
  let webPort: number;
  let image: Buffer;
  const clock = new TestClock();

  beforeAll(async () => {
    image = await png(300, 200);
    web = createServer((req, res) => {
      if (req.url === "/page") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        return res.end(`<html><head><title>t</title><meta property="og:title" content="A page"><meta property="og:description" content="About things">` +
          `<meta property="og:site_name" content="Site"><meta property="og:image" content="/img.png"></head><body></body></html>`);
      }
      if (req.url === "/img.png") {
        res.writeHead(200, { "content-type": "image/png" });
        return res.end(image);
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", () => r()));
    webPort = (web.address() as AddressInfo).port;
    t = await startTestServer({
      backend,
      clock,
      config: { url_preview_enabled: true, url_preview_ip_range_blacklist: [...DEFAULT_IP_RANGE_BLACKLIST], url_preview_ip_range_whitelist: ["127.0.0.1"] },
    });
    token = (await gql(t, REGISTER, { input: { username: "uma", password: "uma-pw" } })).body.data.register.accessToken;
    otherToken = (await gql(t, REGISTER, { input: { username: "vic", password: "vic-pw" } })).body.data.register.accessToken;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((r) => web?.close(() => r()));
  });

  it("uploads an image through a signed URL and serves it and its thumbnail without a token", async () => {
    const r = await gql(t, CREATE_UPLOAD, undefined, token);
    expect(r.body.errors).toBeUndefined();
    const ticket = r.body.data.createUpload;
    expect(ticket.uploadUrl).toMatch(new RegExp(`^${t.baseUrl}/_impl/media/v1/upload/weft\\.test/`));
    expect(ticket.uploadUrl).not.toContain(token);
    expect(ticket.expiresAt).toBeGreaterThan(clock.now());
    expect(ticket.media.mxcUri).toMatch(/^mxc:\/\/weft\.test\//);

    // A browser on another origin asks first (a PUT with a Content-Type): the preflight allows it.
    const preflight = await fetch(ticket.uploadUrl, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "PUT", "access-control-request-headers": "content-type" } });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("PUT");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("content-type");

    const up = await put(ticket.uploadUrl + "&filename=photo.png", image);
    expect([up.status, await up.json()]).toEqual([200, {}]);

    const full = await fetch(ticket.media.httpUrl);
    expect(full.status).toBe(200);
    expect(full.headers.get("content-type")).toBe("image/png");
    expect(full.headers.get("content-disposition")).toBe("inline; filename=photo.png");
    expect(Buffer.from(await full.arrayBuffer()).equals(image)).toBe(true);
    const thumb = await fetch(ticket.media.thumb);
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect([thumb.status, meta.width, meta.height]).toEqual([200, 32, 32]);

    // `media(mxcUri)` gives the same file's URLs to any viewer (here another user).
    const m = await gql(t, MEDIA, { mxc: ticket.media.mxcUri }, otherToken);
    expect(m.body.errors).toBeUndefined();
    expect(Buffer.from(await (await fetch(m.body.data.media.httpUrl)).arrayBuffer()).equals(image)).toBe(true);
    const scaled = await sharp(Buffer.from(await (await fetch(m.body.data.media.thumbnailHttpUrl)).arrayBuffer())).metadata();
    expect(Math.max(scaled.width!, scaled.height!)).toBeLessThanOrEqual(300);
  });

  it("refuses a bad signature, another user's name, a second PUT and an expired URL, storing nothing", async () => {
    const ticket = (await gql(t, CREATE_UPLOAD, undefined, token)).body.data.createUpload;
    const files = storeFiles(t).all.length;
    const rows = await mediaRowCount(t);
    const tampered = ticket.uploadUrl.replace(/sig=([^&])/, (_m: string, c: string) => `sig=${c === "A" ? "B" : "A"}`);
    const otherUser = ticket.uploadUrl.replace(encodeURIComponent("@uma:weft.test"), encodeURIComponent("@vic:weft.test"));
    const otherMedia = ticket.uploadUrl.replace(/upload\/weft\.test\/[^?]+/, "upload/weft.test/AAAAAAAAAAAAAAAAAAAAAAAA");
    for (const url of [tampered, otherUser, otherMedia, ticket.uploadUrl.replace(/&sig=[^&]*/, "")]) {
      expect(await errOf(await put(url, image)), url).toEqual([403, "M_FORBIDDEN"]);
    }
    expect(storeFiles(t).all.length).toBe(files);
    expect(await mediaRowCount(t)).toBe(rows);

    // The download URL of media never uploaded, with a bad signature, is refused the same way.
    const badGet = await fetch(ticket.media.httpUrl.replace(/sig=([^&])/, (_m: string, c: string) => `sig=${c === "A" ? "B" : "A"}`));
    expect(await errOf(badGet)).toEqual([403, "M_FORBIDDEN"]);

    expect((await put(ticket.uploadUrl, image)).status).toBe(200);
    expect(await errOf(await put(ticket.uploadUrl, image))).toEqual([409, "M_CANNOT_OVERWRITE_MEDIA"]);

    const late = (await gql(t, CREATE_UPLOAD, undefined, token)).body.data.createUpload;
    clock.advance(11 * 60_000);
    expect(await errOf(await put(late.uploadUrl, image))).toEqual([403, "M_FORBIDDEN"]);
    const lateRows = await mediaRowCount(t);
    expect(await errOf(await put(late.uploadUrl, image))).toEqual([403, "M_FORBIDDEN"]);
    expect(await mediaRowCount(t)).toBe(lateRows);
  });

  it("needs a token to create an upload; refuses a malformed mxc URI", async () => {
    const anon = await gql(t, CREATE_UPLOAD);
    expect(anon.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_MISSING_TOKEN", code: "UNAUTHENTICATED" });
    const bad = await gql(t, MEDIA, { mxc: "https://example.org/x.png" }, token);
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_INVALID_PARAM", code: "BAD_USER_INPUT" });
    const badSize = await gql(t, `query ($mxc: String!) { media(mxcUri: $mxc) { thumbnailHttpUrl(width: 0, height: 10) } }`, { mxc: "mxc://weft.test/abc" }, token);
    expect(badSize.body.errors?.[0]?.extensions?.errcode).toBe("M_INVALID_PARAM");
  });

  it("previews a URL: OpenGraph fields and the image as a MediaFile a browser loads", async () => {
    const r = await gql(t, `query ($url: String!) { urlPreview(url: $url) { title description siteName imageWidth imageHeight openGraph image { mxcUri httpUrl } } }`,
      { url: `http://127.0.0.1:${webPort}/page` }, token);
    expect(r.body.errors).toBeUndefined();
    const p = r.body.data.urlPreview;
    expect([p.title, p.description, p.siteName, p.imageWidth, p.imageHeight]).toEqual(["A page", "About things", "Site", 300, 200]);
    expect(p.openGraph["og:image"]).toBe(p.image.mxcUri);
    const img = await fetch(p.image.httpUrl);
    expect(img.status).toBe(200);
    expect(Buffer.from(await img.arrayBuffer()).equals(image)).toBe(true);
    const blocked = await gql(t, `query ($url: String!) { urlPreview(url: $url) { title } }`, { url: "http://127.0.0.2:1/" }, token);
    expect(blocked.body.errors?.[0]?.extensions?.errcode).toBe("M_UNKNOWN");
  });
});
