// Remote media and the federation side of the content repository, on SQLite and PostgreSQL, with two
// Weft servers. The serving side is real: server B answers with federationDownload/federationThumbnail
// (the multipart/mixed bodies of the Server-Server API "Content Repository"). The federation route and
// its X-Matrix authentication are not wired yet, so server A's RemoteMediaFetcher here calls B's
// operation in-process and unpacks the multipart body as a federation client would; everything after
// that — caching, serving, thumbnails, the errors — is A's real code over HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { parseMultipart, png, raw, storeFiles, upload } from "../helpers/media.ts";
import { federationDownload, federationThumbnail } from "../../src/domain/media/federation.ts";
import type { RemoteMediaFetcher } from "../../src/domain/media/media-services.ts";
import { MatrixError } from "../../src/domain/errors.ts";

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

function filenameOf(disposition: string | undefined): string | null {
  if (!disposition) return null;
  const star = /filename\*=utf-8''([^;]+)/i.exec(disposition);
  if (star) return decodeURIComponent(star[1]!);
  return /filename=([^;]+)/i.exec(disposition)?.[1] ?? null;
}

describe.each(backends())("remote media and federation serving on %s", (backend) => {
  let a: TestServer;
  let b: TestServer;
  let alice: Session;
  let bert: Session;
  let fetches: string[];

  /** A's fetcher: B's federation answer, unpacked from multipart/mixed as a federation client would. */
  const viaB: RemoteMediaFetcher = {
    async download(origin, mediaId) {
      fetches.push(`${origin}/${mediaId}`);
      if (origin !== "other.test") throw new Error("unreachable");
      const m = await federationDownload(b.hs.services, mediaId, { timeoutMs: 0 });
      const body = await readAll(m.body);
      expect(body.length).toBe(m.contentLength);
      const [meta, file] = parseMultipart(m.contentType, body);
      expect(JSON.parse(meta!.body.toString())).toEqual({});
      return { mediaType: file!.headers["content-type"] ?? null, uploadName: filenameOf(file!.headers["content-disposition"]), body: (async function* () { yield file!.body; })() };
    },
  };

  beforeAll(async () => {
    b = await startTestServer({ backend, serverName: "other.test" });
    a = await startTestServer({ backend, config: { max_upload_size: "300K" } });
    alice = await registerUser(a, "alice");
    bert = await registerUser(b, "bert");
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("answers remote media as an unreachable origin when no federation client is configured", async () => {
    fetches = [];
    a.hs.services.media.remoteFetcher = undefined;
    for (const p of ["/_matrix/client/v1/media/download/other.test/abcdef", "/_matrix/client/v1/media/thumbnail/other.test/abcdef?width=32&height=32"]) {
      const r = await raw(a, "GET", p, { token: alice.access_token });
      expect([r.status, r.json.errcode], p).toEqual([502, "M_UNKNOWN"]);
    }
    expect(await a.hs.services.db.media.count({ where: { origin: "other.test" } })).toBe(0);
  });

  it("serves B's media as multipart/mixed: a JSON part, then the file with its headers", async () => {
    const image = await png(80, 40);
    const { mediaId } = await upload(b, bert.access_token, image, "image/png", "wide image.png");
    const m = await federationDownload(b.hs.services, mediaId);
    expect(m.contentType).toMatch(/^multipart\/mixed; boundary=[0-9a-f]+$/);
    const body = await readAll(m.body);
    expect(body.length).toBe(m.contentLength);
    const parts = parseMultipart(m.contentType, body);
    expect(parts).toHaveLength(2);
    expect(parts[0]!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(parts[0]!.body.toString())).toEqual({});
    expect(parts[1]!.headers["content-type"]).toBe("image/png");
    expect(parts[1]!.headers["content-disposition"]).toBe("inline; filename*=utf-8''wide%20image.png");
    expect(parts[1]!.body.equals(image)).toBe(true);

    const th = await federationThumbnail(b.hs.services, mediaId, { width: 32, height: 32, method: "crop", animated: false });
    const tparts = parseMultipart(th.contentType, await readAll(th.body));
    expect(tparts[1]!.headers["content-type"]).toBe("image/png");
    const meta = await sharp(tparts[1]!.body).metadata();
    expect([meta.width, meta.height]).toEqual([32, 32]);

    await expect(federationDownload(b.hs.services, "unknownMedia")).rejects.toMatchObject({ errcode: "M_NOT_FOUND", httpStatus: 404 });
    await expect(federationDownload(b.hs.services, "../etc")).rejects.toMatchObject({ errcode: "M_INVALID_PARAM" });
    const created = await raw(b, "POST", "/_matrix/media/v1/create", { token: bert.access_token });
    await expect(federationDownload(b.hs.services, created.json.content_uri.split("/").pop(), { timeoutMs: 0 })).rejects.toMatchObject({ errcode: "M_NOT_YET_UPLOADED", httpStatus: 504 });
  });

  it("fetches remote media once, caches it, and serves it with the same headers and thumbnails", async () => {
    fetches = [];
    a.hs.services.media.remoteFetcher = viaB;
    const image = await png(300, 200);
    const { mediaId } = await upload(b, bert.access_token, image, "image/png", "remote.png");
    const p = `/_matrix/client/v1/media/download/other.test/${mediaId}`;
    const [r1, r2, r3] = await Promise.all([1, 2, 3].map(() => raw(a, "GET", p, { token: alice.access_token })));
    for (const r of [r1!, r2!, r3!]) {
      expect(r.status).toBe(200);
      expect(r.body.equals(image)).toBe(true);
      expect(r.headers.get("content-type")).toBe("image/png");
      expect(r.headers.get("content-disposition")).toBe("inline; filename=remote.png");
      expect(r.headers.get("referrer-policy")).toBe("no-referrer");
    }
    expect(fetches).toEqual([`other.test/${mediaId}`]);
    const th = await raw(a, "GET", `/_matrix/client/v1/media/thumbnail/other.test/${mediaId}?width=96&height=96&method=crop`, { token: alice.access_token });
    expect(th.status).toBe(200);
    const meta = await sharp(th.body).metadata();
    expect([meta.width, meta.height]).toEqual([96, 96]);
    expect(fetches).toHaveLength(1);
    expect(storeFiles(a).all.some((f) => f.startsWith("remote_content"))).toBe(true);
    // The legacy endpoint does not serve media cached through authenticated media.
    const legacy = await raw(a, "GET", `/_matrix/media/v3/download/other.test/${mediaId}`);
    expect([legacy.status, legacy.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("passes on the origin's 404, refuses remote files over max_upload_size, and leaves nothing behind", async () => {
    fetches = [];
    a.hs.services.media.remoteFetcher = viaB;
    const missing = await raw(a, "GET", "/_matrix/client/v1/media/download/other.test/nothingThere", { token: alice.access_token });
    expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const big = await upload(b, bert.access_token, Buffer.alloc(400 * 1024, 1), "application/octet-stream");
    const tooBig = await raw(a, "GET", `/_matrix/client/v1/media/download/other.test/${big.mediaId}`, { token: alice.access_token });
    expect([tooBig.status, tooBig.json.errcode]).toEqual([502, "M_TOO_LARGE"]);
    a.hs.services.media.remoteFetcher = { download: async () => { throw new MatrixError("M_UNKNOWN", "boom", 500); } };
    const down = await raw(a, "GET", "/_matrix/client/v1/media/download/third.test/abc", { token: alice.access_token });
    expect([down.status, down.json.errcode]).toEqual([502, "M_UNKNOWN"]);
    expect(await a.hs.services.db.media.count({ where: { mediaId: { in: [big.mediaId, "nothingThere", "abc"] } } })).toBe(0);
    expect(storeFiles(a).tmp).toEqual([]);
  });
});
