// The content repository over HTTP, on SQLite and PostgreSQL: uploads (streamed, size limits, content
// types, filenames), asynchronous uploads (/create, PUT, M_CANNOT_OVERWRITE_MEDIA, rc_media_create),
// authenticated downloads with their headers (Content-Disposition, CSP, CORP, Referrer-Policy, ranges),
// the legacy unauthenticated endpoints, thumbnails of real PNG, JPEG and animated GIF images (decoded and
// measured), and bad input that must leave no file or row behind.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { pollUntil } from "../helpers/js-sdk.ts";
import { animatedGif, jpeg, mediaRowCount, png, raw, storeFiles, upload } from "../helpers/media.ts";

const V1 = "/_matrix/client/v1/media";
const LEGACY = "/_matrix/media/v3";
const SERVER = "weft.test";
const CSP = "sandbox; default-src 'none'; script-src 'none'; plugin-types application/pdf; style-src 'unsafe-inline'; media-src 'self'; object-src 'self';";

describe.each(backends())("media repository on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { max_upload_size: "2M", rc_media_create: { per_second: 0.001, burst_count: 3 }, max_pending_media_uploads: 2 } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  const dl = (p: string, token?: string, headers?: Record<string, string>) => raw(t, "GET", p, { token, headers });

  it("uploads a PNG and serves it to another user with the spec's headers", async () => {
    const image = await png(200, 100);
    const res = await raw(t, "POST", `${LEGACY}/upload?filename=red.png`, { token: alice.access_token, body: image, headers: { "content-type": "image/png" } });
    expect(res.status).toBe(200);
    expectMatchesSpec({ status: res.status, json: res.json }, "POST", `${LEGACY}/upload`);
    expect(res.json.content_uri).toMatch(/^mxc:\/\/weft\.test\/[A-Za-z0-9]{24}$/);
    const id = res.json.content_uri.split("/").pop();

    for (const p of [`${V1}/download/${SERVER}/${id}`, `/_proto/client/v1/media/download/${SERVER}/${id}`]) {
      const d = await dl(p, bob.access_token);
      expect(d.status, p).toBe(200);
      expect(d.body.equals(image)).toBe(true);
      expect(d.headers.get("content-type")).toBe("image/png");
      expect(d.headers.get("content-length")).toBe(String(image.length));
      expect(d.headers.get("content-disposition")).toBe("inline; filename=red.png");
      expect(d.headers.get("content-security-policy")).toBe(CSP);
      expect(d.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
      expect(d.headers.get("referrer-policy")).toBe("no-referrer");
      expect(d.headers.get("access-control-allow-origin")).toBe("*");
    }
    // The file name in the path overrides the uploaded one.
    const named = await dl(`${V1}/download/${SERVER}/${id}/other%20name.png`, bob.access_token);
    expect(named.headers.get("content-disposition")).toBe("inline; filename*=utf-8''other%20name.png");
    expect(named.body.equals(image)).toBe(true);
  });

  it("requires an access token on the authenticated endpoints", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(10, 10), "image/png");
    for (const p of [`${V1}/download/${SERVER}/${mediaId}`, `${V1}/thumbnail/${SERVER}/${mediaId}?width=32&height=32`, `${V1}/config`]) {
      const r = await dl(p);
      expect([r.status, r.json.errcode], p).toEqual([401, "M_MISSING_TOKEN"]);
      const bad = await dl(p, "not-a-token");
      expect([bad.status, bad.json.errcode], p).toEqual([401, "M_UNKNOWN_TOKEN"]);
    }
    const up = await raw(t, "POST", `${LEGACY}/upload`, { body: "x" });
    expect([up.status, up.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
  });

  it("serves inline only a safe list of types, attachment for the rest, names encoded per RFC 5987", async () => {
    const cases: [string, string | undefined, string][] = [
      ["text/plain", "notes.txt", "inline; filename=notes.txt"],
      ["text/html", "page.html", "attachment; filename=page.html"],
      ["image/svg+xml", "logo.svg", "attachment; filename=logo.svg"],
      ["application/pdf", "résumé 1.pdf", "attachment; filename*=utf-8''r%C3%A9sum%C3%A9%201.pdf"],
      ["audio/ogg", undefined, "inline"],
      ["application/octet-stream", "a;b\"c", "attachment; filename*=utf-8''a%3Bb%22c"],
      // Complement's TestMediaFilenames/.../Will_serve_*: a type with parameters and capitals is judged by
      // its essence; `image/svg` (not a safe type) is an attachment.
      ["image/png", undefined, "inline"],
      ["Text/Plain; charset=utf-8", undefined, "inline"],
      ["image/svg", undefined, "attachment"],
    ];
    for (const [type, name, disposition] of cases) {
      const { mediaId } = await upload(t, alice.access_token, Buffer.from("<script>alert(1)</script>"), type, name);
      const d = await dl(`${V1}/download/${SERVER}/${mediaId}`, alice.access_token);
      expect(d.headers.get("content-disposition"), type).toBe(disposition);
      expect(d.headers.get("content-security-policy")).toBe(CSP);
    }
    // Text types get a charset; an upload without Content-Type is application/octet-stream.
    const txt = await upload(t, alice.access_token, Buffer.from("hello"), "text/plain");
    expect((await dl(`${V1}/download/${SERVER}/${txt.mediaId}`, alice.access_token)).headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    const none = await raw(t, "POST", `${LEGACY}/upload`, { token: alice.access_token, body: new Uint8Array([1, 2, 3]) as unknown as Buffer });
    const noneId = none.json.content_uri.split("/").pop();
    const d = await dl(`${V1}/download/${SERVER}/${noneId}`, alice.access_token);
    expect([d.headers.get("content-type"), d.headers.get("content-disposition")]).toEqual(["application/octet-stream", "attachment"]);
  });

  it("answers range requests: 206 with Content-Range, suffix ranges, 416 past the end", async () => {
    const body = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
    const { mediaId } = await upload(t, alice.access_token, body, "application/octet-stream");
    const p = `${V1}/download/${SERVER}/${mediaId}`;
    const first = await dl(p, alice.access_token, { range: "bytes=0-9" });
    expect([first.status, first.headers.get("content-range"), first.headers.get("content-length")]).toEqual([206, "bytes 0-9/100", "10"]);
    expect(first.body.equals(body.subarray(0, 10))).toBe(true);
    const open = await dl(p, alice.access_token, { range: "bytes=95-" });
    expect([open.status, open.headers.get("content-range")]).toEqual([206, "bytes 95-99/100"]);
    expect(open.body.equals(body.subarray(95))).toBe(true);
    const suffix = await dl(p, alice.access_token, { range: "bytes=-3" });
    expect(suffix.body.equals(body.subarray(97))).toBe(true);
    const past = await dl(p, alice.access_token, { range: "bytes=100-200" });
    expect([past.status, past.headers.get("content-range"), past.json.errcode]).toEqual([416, "bytes */100", "M_UNKNOWN"]);
    const whole = await dl(p, alice.access_token);
    expect([whole.status, whole.headers.get("accept-ranges"), whole.body.length]).toEqual([200, "bytes", 100]);
    const head = await raw(t, "HEAD", p, { token: alice.access_token });
    expect([head.status, head.headers.get("content-length"), head.body.length]).toEqual([200, "100", 0]);
    const options = await raw(t, "OPTIONS", p);
    expect([options.status, options.headers.get("access-control-allow-origin")]).toEqual([200, "*"]);
    const wrongMethod = await raw(t, "POST", p, { token: alice.access_token, body: "x" });
    expect([wrongMethod.status, wrongMethod.json.errcode]).toEqual([405, "M_UNRECOGNIZED"]);
  });

  it("hides media uploaded under authenticated media from the legacy unauthenticated endpoints", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(64, 64), "image/png");
    for (const p of [`${LEGACY}/download/${SERVER}/${mediaId}`, `/_matrix/media/r0/download/${SERVER}/${mediaId}/x.png`, `${LEGACY}/thumbnail/${SERVER}/${mediaId}?width=32&height=32`]) {
      const r = await dl(p, alice.access_token);
      expect([r.status, r.json.errcode], p).toEqual([404, "M_NOT_FOUND"]);
    }
    const cfg = await dl(`${LEGACY}/config`, alice.access_token);
    expect([cfg.status, cfg.json]).toEqual([200, { "m.upload.size": 2 * 1024 * 1024 }]);
    expect((await dl(`${LEGACY}/config`)).status).toBe(401);
    const v1cfg = await dl(`${V1}/config`, bob.access_token);
    expect([v1cfg.status, v1cfg.json]).toEqual([200, { "m.upload.size": 2 * 1024 * 1024 }]);
    expectMatchesSpec({ status: v1cfg.status, json: v1cfg.json }, "GET", `${V1}/config`);
  });

  it("thumbnails PNG and JPEG: crop and scale, closest configured size, never larger than the original", async () => {
    const big = await upload(t, alice.access_token, await jpeg(1000, 500), "image/jpeg");
    const thumb = async (id: string, q: string) => {
      const r = await dl(`${V1}/thumbnail/${SERVER}/${id}?${q}`, bob.access_token);
      expect(r.status, `${q}: ${r.body.toString().slice(0, 200)}`).toBe(200);
      const meta = await sharp(r.body).metadata();
      return { r, meta, size: [meta.width, meta.height] };
    };
    const crop = await thumb(big.mediaId, "width=32&height=32&method=crop");
    expect(crop.size).toEqual([32, 32]);
    expect([crop.r.headers.get("content-type"), crop.meta.format]).toEqual(["image/jpeg", "jpeg"]);
    expect(crop.r.headers.get("content-disposition")).toBe("inline; filename=thumbnail.jpeg");
    expect(crop.r.headers.get("referrer-policy")).toBe("no-referrer");
    // 50x50 crop: the closest configured crop size at least as big is 96x96.
    expect((await thumb(big.mediaId, "width=50&height=50&method=crop")).size).toEqual([96, 96]);
    // scale 300x200 → the 320x240 size, aspect kept: 320x160.
    expect((await thumb(big.mediaId, "width=300&height=200&method=scale")).size).toEqual([320, 160]);
    // Bigger than every configured size → the largest (800x600): 800x400.
    expect((await thumb(big.mediaId, "width=5000&height=5000")).size).toEqual([800, 400]);

    const small = await upload(t, alice.access_token, await png(50, 30), "image/png");
    const s1 = await thumb(small.mediaId, "width=800&height=600&method=scale");
    expect([s1.size, s1.meta.format]).toEqual([[50, 30], "png"]);
    expect((await thumb(small.mediaId, "width=96&height=96&method=crop")).size).toEqual([30, 30]);
    expect((await thumb(small.mediaId, "width=96&height=96&method=crop")).size).toEqual([30, 30]); // from the cache
  });

  it("pre-generates the configured thumbnail sizes on upload and caches them on disk", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(1200, 900), "image/png");
    const rows = await t.hs.services.db.mediaThumbnail.findMany({ where: { mediaId } });
    expect(rows.map((r) => `${r.width}x${r.height}/${r.method}/${r.mediaType}`).sort()).toEqual(
      ["320x240/scale/image/png", "32x32/crop/image/png", "640x480/scale/image/png", "800x600/scale/image/png", "96x96/crop/image/png"],
    );
    const files = storeFiles(t).all.filter((f) => f.includes(`${mediaId}/`));
    expect(files).toHaveLength(5);
  });

  it("keeps an animated GIF animated (WebP) only with animated=true", async () => {
    const gif = await upload(t, alice.access_token, await animatedGif(120, 80, 3), "image/gif");
    const animated = await dl(`${V1}/thumbnail/${SERVER}/${gif.mediaId}?width=32&height=32&method=crop&animated=true`, bob.access_token);
    expect([animated.status, animated.headers.get("content-type")]).toEqual([200, "image/webp"]);
    const am = await sharp(animated.body, { animated: true }).metadata();
    expect([am.format, am.pages, am.width, am.pageHeight]).toEqual(["webp", 3, 32, 32]);
    const still = await dl(`${V1}/thumbnail/${SERVER}/${gif.mediaId}?width=32&height=32&method=crop&animated=false`, bob.access_token);
    expect(still.headers.get("content-type")).toBe("image/png");
    expect((await sharp(still.body, { animated: true }).metadata()).pages ?? 1).toBe(1);
    // A JPEG asked for animated is a still thumbnail.
    const j = await upload(t, alice.access_token, await jpeg(100, 100), "image/jpeg");
    const jr = await dl(`${V1}/thumbnail/${SERVER}/${j.mediaId}?width=32&height=32&animated=true`, bob.access_token);
    expect(jr.headers.get("content-type")).toBe("image/jpeg");
  });

  it("refuses bad thumbnail parameters and content it cannot thumbnail", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(40, 40), "image/png");
    const p = `${V1}/thumbnail/${SERVER}/${mediaId}`;
    for (const [q, code] of [
      ["width=0&height=32", "M_INVALID_PARAM"], ["width=32&height=100000", "M_INVALID_PARAM"], ["width=-5&height=32", "M_INVALID_PARAM"],
      ["width=abc&height=32", "M_INVALID_PARAM"], ["height=32", "M_MISSING_PARAM"], ["width=32&height=32&method=stretch", "M_INVALID_PARAM"],
      ["width=32&height=32&animated=yes", "M_INVALID_PARAM"],
    ] as const) {
      const r = await dl(`${p}?${q}`, alice.access_token);
      expect([r.status, r.json.errcode], q).toEqual([400, code]);
    }
    // An image that fails to decode: the upload succeeds (no thumbnails made), thumbnails are refused.
    const broken = await upload(t, alice.access_token, Buffer.from("\x89PNG\r\n\x1a\nthis is not really a png"), "image/png");
    expect(await t.hs.services.db.mediaThumbnail.count({ where: { mediaId: broken.mediaId } })).toBe(0);
    const br = await dl(`${V1}/thumbnail/${SERVER}/${broken.mediaId}?width=32&height=32`, alice.access_token);
    expect([br.status, br.json.errcode]).toEqual([400, "M_UNKNOWN"]);
    expect((await dl(`${V1}/download/${SERVER}/${broken.mediaId}`, alice.access_token)).status).toBe(200);
    const text = await upload(t, alice.access_token, Buffer.from("hello"), "text/plain");
    const tr = await dl(`${V1}/thumbnail/${SERVER}/${text.mediaId}?width=32&height=32`, alice.access_token);
    expect([tr.status, tr.json.errcode]).toEqual([400, "M_UNKNOWN"]);
    expect(storeFiles(t).tmp).toEqual([]);
  });

  it("refuses media ids and server names with path characters before touching the disk", async () => {
    for (const id of ["..%2F..%2Fhomeserver.db", "a%2Fb", "a.b", "%2E%2E%2Fx", "caf%C3%A9"]) {
      const r = await dl(`${V1}/download/${SERVER}/${id}`, alice.access_token);
      expect([r.status, r.json.errcode], id).toEqual([400, "M_INVALID_PARAM"]);
      const th = await dl(`${V1}/thumbnail/${SERVER}/${id}?width=32&height=32`, alice.access_token);
      expect(th.status, id).toBe(400);
    }
    const badServer = await dl(`${V1}/download/bad%2Fserver/abc`, alice.access_token);
    expect([badServer.status, badServer.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const unknown = await dl(`${V1}/download/${SERVER}/doesNotExist123`, alice.access_token);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const put = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/..%2Fescape`, { token: alice.access_token, body: "x" });
    expect([put.status, put.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
  });

  it("refuses oversized and malformed uploads, leaving no file or row", async () => {
    const rows = await mediaRowCount(t);
    const files = storeFiles(t).all.length;
    // Content-Length over the limit: 413 before the body is read.
    const big = await raw(t, "POST", `${LEGACY}/upload`, { token: alice.access_token, body: Buffer.alloc(3 * 1024 * 1024) });
    expect([big.status, big.json.errcode]).toEqual([413, "M_TOO_LARGE"]);
    // A chunked body (no Content-Length) counted while streaming.
    async function* chunks() {
      for (let i = 0; i < 40; i++) yield new Uint8Array(100 * 1024);
    }
    const chunked = await fetch(`${t.baseUrl}${LEGACY}/upload`, { method: "POST", headers: { authorization: `Bearer ${alice.access_token}` }, body: chunks() as unknown as Blob, duplex: "half" } as RequestInit);
    expect([chunked.status, ((await chunked.json()) as { errcode: string }).errcode]).toEqual([413, "M_TOO_LARGE"]);
    for (const type of ["not a type", "image/", "text/plain; charset", "a/b/c"]) {
      const r = await raw(t, "POST", `${LEGACY}/upload`, { token: alice.access_token, body: "x", headers: { "content-type": type } });
      expect([r.status, r.json.errcode], type).toEqual([400, "M_INVALID_PARAM"]);
    }
    const badName = await raw(t, "POST", `${LEGACY}/upload?filename=a%0Ab`, { token: alice.access_token, body: "x" });
    expect([badName.status, badName.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    expect(await mediaRowCount(t)).toBe(rows);
    expect(storeFiles(t).all.length).toBe(files);
    expect(storeFiles(t).tmp).toEqual([]);
  });

  it("stores a zero-length upload as an empty file (as Synapse does)", async () => {
    const r = await raw(t, "POST", `${LEGACY}/upload?filename=empty.txt`, { token: alice.access_token, body: "", headers: { "content-type": "text/plain" } });
    expect(r.status).toBe(200);
    const d = await dl(`${V1}/download/${SERVER}/${r.json.content_uri.split("/").pop()}`, bob.access_token);
    expect([d.status, d.headers.get("content-length"), d.body.length]).toEqual([200, "0", 0]);
  });

  it("leaves nothing behind when the client abandons an upload halfway", async () => {
    const rows = await mediaRowCount(t);
    const before = storeFiles(t).all.length;
    const { inFlight } = t.hs.services;
    const port = Number(new URL(t.baseUrl).port);
    const socket = connect(port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    socket.write(`POST ${LEGACY}/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.access_token}\r\nContent-Type: image/png\r\nContent-Length: 100000\r\n\r\n`);
    socket.write(Buffer.alloc(40_000, 7));
    // The handler is reading the body into a temporary file ...
    await pollUntil(async () => (inFlight.size > 0 && storeFiles(t).tmp.length > 0 ? true : undefined), 10_000, "the upload to start");
    socket.destroy(); // ... when the client goes away.
    await pollUntil(async () => (inFlight.size === 0 ? true : undefined), 10_000, "the upload handler to finish");
    expect(storeFiles(t).tmp).toEqual([]);
    expect(storeFiles(t).all.length).toBe(before);
    expect(await mediaRowCount(t)).toBe(rows);
  });

  it("uploads asynchronously: /create, a waiting download, PUT, and the errors of each", async () => {
    const created = await raw(t, "POST", "/_matrix/media/v1/create", { token: alice.access_token });
    expect(created.status).toBe(200);
    expectMatchesSpec({ status: created.status, json: created.json }, "POST", "/_matrix/media/v1/create");
    const now = Date.now();
    expect(created.json.unused_expires_at).toBeGreaterThan(now + 23 * 3_600_000);
    const id = created.json.content_uri.split("/").pop();
    const p = `${V1}/download/${SERVER}/${id}`;

    const early = await dl(`${p}?timeout_ms=0`, bob.access_token);
    expect([early.status, early.json.errcode]).toEqual([504, "M_NOT_YET_UPLOADED"]);
    // A download that waits is answered once the content arrives.
    const waiting = dl(`${p}?timeout_ms=20000`, bob.access_token);
    await pollUntil(async () => (t.hs.services.inFlight.size > 0 ? true : undefined), 5000, "the download to wait");
    const other = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/${id}`, { token: bob.access_token, body: "x" });
    expect([other.status, other.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const put = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/${id}?filename=late.txt`, { token: alice.access_token, body: "late content", headers: { "content-type": "text/plain" } });
    expect([put.status, put.json]).toEqual([200, {}]);
    const got = await waiting;
    expect([got.status, got.body.toString(), got.headers.get("content-disposition")]).toEqual([200, "late content", "inline; filename=late.txt"]);
    const again = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/${id}`, { token: alice.access_token, body: "y" });
    expect([again.status, again.json.errcode]).toEqual([409, "M_CANNOT_OVERWRITE_MEDIA"]);
    const unknown = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/neverCreated`, { token: alice.access_token, body: "y" });
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const remote = await raw(t, "PUT", `${LEGACY}/upload/other.example/${id}`, { token: alice.access_token, body: "y" });
    expect([remote.status, remote.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("limits pending uploads and rate-limits /create (rc_media_create) with Retry-After", async () => {
    const carol = await registerUser(t, "carol");
    const a = await raw(t, "POST", "/_matrix/media/v1/create", { token: carol.access_token });
    const b = await raw(t, "POST", "/_matrix/media/v1/create", { token: carol.access_token });
    expect([a.status, b.status]).toEqual([200, 200]);
    const pending = await raw(t, "POST", "/_matrix/media/v1/create", { token: carol.access_token });
    expect([pending.status, pending.json.errcode]).toEqual([429, "M_LIMIT_EXCEEDED"]);
    // Completing one frees a slot; the burst of 3 is spent then.
    await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/${a.json.content_uri.split("/").pop()}`, { token: carol.access_token, body: "x" });
    const limited = await raw(t, "POST", "/_matrix/media/v1/create", { token: carol.access_token });
    expect([limited.status, limited.json.errcode]).toEqual([429, "M_LIMIT_EXCEEDED"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.json.retry_after_ms).toBeGreaterThan(0);
  });
});

describe.each(backends())("media with enable_authenticated_media off, on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  beforeAll(async () => {
    t = await startTestServer({ backend, config: { enable_authenticated_media: false, max_image_pixels: 5000 } });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("serves media on the legacy endpoints too, without a token", async () => {
    const image = await png(70, 50);
    const { mediaId } = await upload(t, alice.access_token, image, "image/png", "x.png");
    for (const p of [`${LEGACY}/download/${SERVER}/${mediaId}`, `/_matrix/media/r0/download/${SERVER}/${mediaId}/y.png`, `/_proto/media/v3/download/${SERVER}/${mediaId}`]) {
      const r = await raw(t, "GET", p);
      expect(r.status, p).toBe(200);
      expect(r.body.equals(image)).toBe(true);
      expect(r.headers.get("referrer-policy")).toBe("no-referrer");
    }
    const th = await raw(t, "GET", `${LEGACY}/thumbnail/${SERVER}/${mediaId}?width=32&height=32&method=crop`);
    expect(th.status).toBe(200);
    const meta = await sharp(th.body).metadata();
    expect([meta.width, meta.height]).toEqual([32, 32]);
    // An image of more pixels than max_image_pixels (100x100 > 5000) is stored but not thumbnailed.
    const huge = await upload(t, alice.access_token, await png(100, 100), "image/png");
    const tooBig = await raw(t, "GET", `${LEGACY}/thumbnail/${SERVER}/${huge.mediaId}?width=32&height=32`);
    expect([tooBig.status, tooBig.json.errcode]).toEqual([413, "M_TOO_LARGE"]);
    expect((await raw(t, "GET", `${LEGACY}/download/${SERVER}/${huge.mediaId}`)).status).toBe(200);
    // Remote media is not fetched through the legacy endpoint with allow_remote=false.
    const remote = await raw(t, "GET", `${LEGACY}/download/other.example/abc?allow_remote=false`);
    expect([remote.status, remote.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });
});
