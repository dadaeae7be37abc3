// Media on S3-compatible object storage, on SQLite and PostgreSQL, against a real local S3 server
// (s3rver, test/helpers/s3.ts) read back with the AWS SDK: a bucket as the primary store
// (media_store.backend: s3) — uploads on the legacy v3 and the v1 create routes, downloads on the
// authenticated and legacy routes, ranges (206/416), pre-generated and on-demand thumbnails, the objects
// really in the bucket and nothing on local disk, the admin API's delete removing them, a restart on an
// empty disk, and an unreachable endpoint answering 502 M_UNKNOWN while changing nothing — and Synapse's
// media_storage_providers (s3_storage_provider.S3StorageProviderBackend) beside local disk: copies
// uploaded (synchronously, and in the background), files gone from disk served from the bucket and
// fetched back for thumbnails, deletes — a server moved from local disk to a bucket (its old files served
// from disk until `weft media-upload` copies them up) — and a misconfigured bucket answering 502 M_UNKNOWN.
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { runMediaRetention } from "../../src/domain/media/retention.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { mediaRowCount, png, raw, storeFiles, upload } from "../helpers/media.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";

const V1 = "/_matrix/client/v1/media";
const LEGACY = "/_matrix/media/v3";
const SERVER = "weft.test";

/** A file of `n` bytes whose every position is distinguishable (a range served from the wrong place shows). */
function patterned(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i + 4 <= n; i += 4) b.writeUInt32BE(i, i);
  return b;
}

async function objectBytes(s3: TestS3, key: string): Promise<Buffer> {
  const res = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return Buffer.from(await res.Body!.transformToByteArray());
}

/** Local disk holds no media (the tmp folder may exist, empty). */
function nothingOnDisk(t: TestServer): void {
  expect(storeFiles(t).all).toEqual([]);
}

describe.each(backends())("media in an S3 bucket as the primary store on %s", (backend) => {
  let s3: TestS3;
  let t: TestServer;
  let alice: Session;
  let admin: Session;
  const clock = new TestClock();

  beforeAll(async () => {
    s3 = await startS3();
    t = await startTestServer({
      backend,
      clock,
      config: {
        media_retention: { local_media_lifetime: "7d" },
        media_store: { backend: "s3", ...s3.options("media/") },
        enable_authenticated_media: false, // the legacy download route serves too
        dynamic_thumbnails: true,
        max_upload_size: "20M",
        thumbnail_sizes: [{ width: 32, height: 32, method: "crop" }, { width: 96, height: 96, method: "crop" }],
      },
    });
    alice = await registerUser(t, "alice");
    admin = await registerUser(t, "root");
    await t.hs.services.users.setAdmin(`@root:${SERVER}`, true);
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it("stores uploads of both routes in the bucket (content and pre-generated thumbnails), none on disk, and serves them", async () => {
    const image = await png(120, 80);
    const res = await raw(t, "POST", `${LEGACY}/upload?filename=red.png`, { token: alice.access_token, body: image, headers: { "content-type": "image/png" } });
    expect(res.status).toBe(200);
    expectMatchesSpec({ status: res.status, json: res.json }, "POST", `${LEGACY}/upload`);
    const id = (res.json.content_uri as string).split("/").pop()!;

    const created = await raw(t, "POST", "/_matrix/media/v1/create", { token: alice.access_token });
    expect(created.status).toBe(200);
    const id2 = (created.json.content_uri as string).split("/").pop()!;
    const text = Buffer.from("text uploaded to a created mxc URI");
    const put = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/${id2}`, { token: alice.access_token, body: text, headers: { "content-type": "text/plain" } });
    expect([put.status, put.json]).toEqual([200, {}]);

    const contentKey = (mediaId: string) => "media/" + t.hs.services.media.files.contentKey({ origin: SERVER, mediaId });
    const keys = await s3.keys("media/");
    expect(keys).toContain(contentKey(id));
    expect(keys).toContain(contentKey(id2));
    const prefix = "media/" + t.hs.services.media.files.thumbnailPrefix({ origin: SERVER, mediaId: id });
    expect(keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)).sort()).toEqual(["32-32-image-png-crop", "96-96-image-png-crop"]);
    expect((await objectBytes(s3, contentKey(id))).equals(image)).toBe(true);
    expect((await objectBytes(s3, contentKey(id2))).equals(text)).toBe(true);
    nothingOnDisk(t);

    for (const p of [`${V1}/download/${SERVER}/${id}`, `${LEGACY}/download/${SERVER}/${id}`]) {
      const d = await raw(t, "GET", p, { token: alice.access_token });
      expect([d.status, d.headers.get("content-type"), d.headers.get("content-length"), d.headers.get("content-disposition")], p)
        .toEqual([200, "image/png", String(image.length), "inline; filename=red.png"]);
      expect(d.body.equals(image), p).toBe(true);
    }
    const d2 = await raw(t, "GET", `${V1}/download/${SERVER}/${id2}`, { token: alice.access_token });
    expect([d2.status, d2.body.toString()]).toEqual([200, text.toString()]);
  });

  it("answers byte ranges with S3's ranged GET: 206 with Content-Range, suffix ranges, 416 past the end", async () => {
    const file = patterned(100_000);
    const { mediaId } = await upload(t, alice.access_token, file, "application/octet-stream");
    const p = `${V1}/download/${SERVER}/${mediaId}`;
    const r = await raw(t, "GET", p, { token: alice.access_token, headers: { range: "bytes=70000-70099" } });
    expect([r.status, r.headers.get("content-range"), r.headers.get("content-length")]).toEqual([206, "bytes 70000-70099/100000", "100"]);
    expect(r.body.equals(file.subarray(70_000, 70_100))).toBe(true);
    const tail = await raw(t, "GET", `${LEGACY}/download/${SERVER}/${mediaId}`, { headers: { range: "bytes=-10" } });
    expect([tail.status, tail.headers.get("content-range")]).toEqual([206, "bytes 99990-99999/100000"]);
    expect(tail.body.equals(file.subarray(99_990))).toBe(true);
    const open = await raw(t, "GET", p, { token: alice.access_token, headers: { range: "bytes=99000-" } });
    expect([open.status, open.body.equals(file.subarray(99_000))]).toEqual([206, true]);
    const past = await raw(t, "GET", p, { token: alice.access_token, headers: { range: "bytes=100000-" } });
    expect([past.status, past.json.errcode, past.headers.get("content-range")]).toEqual([416, "M_UNKNOWN", "bytes */100000"]);
    const whole = await raw(t, "GET", p, { token: alice.access_token });
    expect([whole.status, whole.headers.get("accept-ranges"), whole.body.equals(file)]).toEqual([200, "bytes", true]);
  });

  it("streams a large upload up in parts and serves it back, a range from its far end too", async () => {
    const file = patterned(17 * 1024 * 1024 + 123); // three 8 MiB parts of a multipart upload
    const { mediaId } = await upload(t, alice.access_token, file, "application/octet-stream");
    const key = "media/" + t.hs.services.media.files.contentKey({ origin: SERVER, mediaId });
    expect((await objectBytes(s3, key)).equals(file)).toBe(true);
    const r = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token, headers: { range: `bytes=${file.length - 5000}-` } });
    expect([r.status, r.body.equals(file.subarray(file.length - 5000))]).toEqual([206, true]);
    const whole = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token });
    expect(whole.body.equals(file)).toBe(true);
    nothingOnDisk(t);
  });

  it("serves pre-generated thumbnails from the bucket, renders other sizes from the bucket's copy and stores them there", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(400, 300), "image/png");
    const pre = await raw(t, "GET", `${V1}/thumbnail/${SERVER}/${mediaId}?width=32&height=32&method=crop`, { token: alice.access_token });
    expect([pre.status, pre.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect(await sharp(pre.body).metadata()).toMatchObject({ width: 32, height: 32, format: "png" });
    const prefix = "media/" + t.hs.services.media.files.thumbnailPrefix({ origin: SERVER, mediaId });
    const before = await s3.keys(prefix);
    const dyn = await raw(t, "GET", `${LEGACY}/thumbnail/${SERVER}/${mediaId}?width=200&height=200&method=scale`, {});
    expect(dyn.status).toBe(200);
    expect(await sharp(dyn.body).metadata()).toMatchObject({ width: 200, height: 150 });
    const after = await s3.keys(prefix);
    expect(after.filter((k) => !before.includes(k))).toEqual([`${prefix}200-200-image-png-scale`]);
    const ranged = await raw(t, "GET", `${V1}/thumbnail/${SERVER}/${mediaId}?width=200&height=200&method=scale`, { token: alice.access_token, headers: { range: "bytes=0-7" } });
    expect([ranged.status, ranged.body.equals(dyn.body.subarray(0, 8))]).toEqual([206, true]);
    nothingOnDisk(t);
  });

  it("deletes the objects with the media (admin API), content and thumbnails", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(64, 64), "image/png");
    const files = t.hs.services.media.files;
    const mine = async () => (await s3.keys("media/")).filter((k) => k.includes(mediaId));
    expect((await mine()).length).toBe(3); // the content and two thumbnails
    expect(await mine()).toContain("media/" + files.contentKey({ origin: SERVER, mediaId }));
    const del = await raw(t, "DELETE", `/_synapse/admin/v1/media/${SERVER}/${mediaId}`, { token: admin.access_token });
    expect([del.status, del.json]).toEqual([200, { deleted_media: [mediaId], total: 1 }]);
    expect(await mine()).toEqual([]);
    const gone = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token });
    expect([gone.status, gone.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("serves everything after a restart with an empty local disk", async () => {
    const image = await png(50, 40);
    const { mediaId } = await upload(t, alice.access_token, image, "image/png");
    await t.stop();
    rmSync(t.config.media_store_path, { recursive: true, force: true });
    await t.restart();
    const d = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token });
    expect([d.status, d.body.equals(image)]).toEqual([200, true]);
    const th = await raw(t, "GET", `${V1}/thumbnail/${SERVER}/${mediaId}?width=32&height=32&method=crop`, { token: alice.access_token });
    expect(th.status).toBe(200);
    expect(await sharp(th.body).metadata()).toMatchObject({ width: 32, height: 32 });
    const dyn = await raw(t, "GET", `${V1}/thumbnail/${SERVER}/${mediaId}?width=20&height=20&method=scale`, { token: alice.access_token });
    expect(dyn.status).toBe(200);
    expect(await sharp(dyn.body).metadata()).toMatchObject({ width: 20, height: 16 });
    nothingOnDisk(t);
  });

  it("answers 502 M_UNKNOWN while the endpoint is unreachable, changing nothing, and recovers", async () => {
    const kept = Buffer.from("stored before the outage");
    const { mediaId } = await upload(t, alice.access_token, kept, "text/plain");
    const keysBefore = await s3.keys();
    const rows = await mediaRowCount(t);
    await s3.stop();
    try {
      const up = await raw(t, "POST", `${LEGACY}/upload`, { token: alice.access_token, body: Buffer.from("lost"), headers: { "content-type": "text/plain" } });
      expect([up.status, up.json?.errcode]).toEqual([502, "M_UNKNOWN"]);
      const img = await raw(t, "POST", `${LEGACY}/upload`, { token: alice.access_token, body: await png(40, 40), headers: { "content-type": "image/png" } });
      expect([img.status, img.json?.errcode]).toEqual([502, "M_UNKNOWN"]);
      const created = await raw(t, "POST", "/_matrix/media/v1/create", { token: alice.access_token });
      const pending = (created.json.content_uri as string).split("/").pop()!;
      const put = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/${pending}`, { token: alice.access_token, body: Buffer.from("lost too"), headers: { "content-type": "text/plain" } });
      expect([put.status, put.json?.errcode]).toEqual([502, "M_UNKNOWN"]);
      const d = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token });
      expect([d.status, d.json?.errcode]).toEqual([502, "M_UNKNOWN"]);
      const del = await raw(t, "DELETE", `/_synapse/admin/v1/media/${SERVER}/${mediaId}`, { token: admin.access_token });
      expect([del.status, del.json?.errcode]).toEqual([502, "M_UNKNOWN"]);
      expect(await mediaRowCount(t)).toBe(rows + 1); // only the /create reservation, still pending
      expect((await t.hs.services.media.store.get({ origin: SERVER, mediaId: pending }))?.uploadedTs).toBeNull();
      expect(storeFiles(t).all).toEqual([]);
      // The reserved id can still be uploaded to once the store is back.
      await s3.start();
      const retry = await raw(t, "PUT", `${LEGACY}/upload/${SERVER}/${pending}`, { token: alice.access_token, body: Buffer.from("made it"), headers: { "content-type": "text/plain" } });
      expect(retry.status).toBe(200);
      // The outage left no object behind: the only new one is the retried upload.
      const after = await s3.keys();
      expect(after.filter((k) => !keysBefore.includes(k))).toEqual(["media/" + t.hs.services.media.files.contentKey({ origin: SERVER, mediaId: pending })]);
    } finally {
      await s3.start();
    }
    const d = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token });
    expect([d.status, d.body.toString()]).toEqual([200, kept.toString()]);
  });

  it("media_retention deletes idle media's objects (content and thumbnails) from the bucket", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(40, 40), "image/png");
    expect((await s3.keys("media/local_")).filter((k) => k.includes(mediaId)).length).toBe(3);
    clock.advance(8 * 86_400_000);
    const rows = await mediaRowCount(t);
    const result = await runMediaRetention(t.hs.services);
    expect(result.local).toBe(rows);
    expect(await mediaRowCount(t)).toBe(0);
    expect(await s3.keys("media/local_")).toEqual([]);
  });
});

describe.each(backends())("media_storage_providers (synapse-s3-storage-provider) beside local disk on %s", (backend) => {
  let s3: TestS3;
  let t: TestServer;
  let alice: Session;
  let admin: Session;

  beforeAll(async () => {
    s3 = await startS3();
    t = await startTestServer({
      backend,
      config: {
        dynamic_thumbnails: true,
        thumbnail_sizes: [{ width: 32, height: 32, method: "crop" }],
        media_storage_providers: [{
          module: "s3_storage_provider.S3StorageProviderBackend",
          store_local: true, store_remote: true, store_synchronous: true,
          config: { ...s3.options("synapse/"), region_name: "us-east-1", storage_class: "STANDARD" },
        }, {
          // A second provider, written in the background after the answer (Synapse's default).
          module: "s3_storage_provider.S3StorageProviderBackend",
          store_local: true,
          config: s3.options("later/"),
        }],
      },
    });
    alice = await registerUser(t, "alice");
    admin = await registerUser(t, "root");
    await t.hs.services.users.setAdmin(`@root:${SERVER}`, true);
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it("keeps the local file and uploads a copy (content and thumbnails) before answering", async () => {
    const image = await png(80, 60);
    const { mediaId } = await upload(t, alice.access_token, image, "image/png");
    const files = t.hs.services.media.files;
    const ref = { origin: SERVER, mediaId };
    expect(storeFiles(t).all.filter((f) => f.includes(mediaId)).length).toBe(2);
    expect((await objectBytes(s3, "synapse/" + files.contentKey(ref))).equals(image)).toBe(true);
    expect(await s3.keys("synapse/" + files.thumbnailPrefix(ref))).toEqual(["synapse/" + files.thumbnailPrefix(ref) + "32-32-image-png-crop"]);
    // The asynchronous provider gets its copies once the background uploads are done.
    await t.hs.services.media.storage.settled();
    expect((await objectBytes(s3, "later/" + files.contentKey(ref))).equals(image)).toBe(true);
    expect(await s3.keys("later/" + files.thumbnailPrefix(ref))).toEqual(["later/" + files.thumbnailPrefix(ref) + "32-32-image-png-crop"]);
  });

  it("serves media whose local files are gone from the bucket (ranges too) and fetches it back for a new thumbnail", async () => {
    const image = await png(300, 200);
    const { mediaId } = await upload(t, alice.access_token, image, "image/png");
    const ref = { origin: SERVER, mediaId };
    const files = t.hs.services.media.files;
    rmSync(files.contentPath(ref));
    rmSync(files.thumbnailDir(ref), { recursive: true });
    expect(storeFiles(t).all.filter((f) => f.includes(mediaId))).toEqual([]);
    const d = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token });
    expect([d.status, d.body.equals(image)]).toEqual([200, true]);
    const r = await raw(t, "GET", `${V1}/download/${SERVER}/${mediaId}`, { token: alice.access_token, headers: { range: "bytes=8-15" } });
    expect([r.status, r.headers.get("content-range"), r.body.equals(image.subarray(8, 16))]).toEqual([206, `bytes 8-15/${image.length}`, true]);
    const pre = await raw(t, "GET", `${V1}/thumbnail/${SERVER}/${mediaId}?width=32&height=32&method=crop`, { token: alice.access_token });
    expect(pre.status).toBe(200);
    expect(await sharp(pre.body).metadata()).toMatchObject({ width: 32, height: 32 });
    const dyn = await raw(t, "GET", `${V1}/thumbnail/${SERVER}/${mediaId}?width=150&height=150&method=scale`, { token: alice.access_token });
    expect(dyn.status).toBe(200);
    expect(await sharp(dyn.body).metadata()).toMatchObject({ width: 150, height: 100 });
    // Fetched back into the local store to render, as Synapse does; the new thumbnail went to both stores.
    expect(storeFiles(t).all.filter((f) => f.includes(mediaId)).sort()).toEqual([files.contentKey(ref), files.thumbnailKey(ref, { width: 150, height: 150, method: "scale", mediaType: "image/png", animated: false })].sort());
    expect(await s3.keys("synapse/" + files.thumbnailPrefix(ref))).toContain("synapse/" + files.thumbnailKey(ref, { width: 150, height: 150, method: "scale", mediaType: "image/png", animated: false }));
  });

  it("deletes local files and objects together (admin API)", async () => {
    const { mediaId } = await upload(t, alice.access_token, await png(40, 40), "image/png");
    const mine = async () => (await s3.keys()).filter((k) => k.includes(mediaId));
    await t.hs.services.media.storage.settled();
    expect((await mine()).length).toBe(4); // content and thumbnail, in each provider
    const del = await raw(t, "DELETE", `/_synapse/admin/v1/media/${SERVER}/${mediaId}`, { token: admin.access_token });
    expect(del.status).toBe(200);
    expect(await mine()).toEqual([]);
    expect(storeFiles(t).all.filter((f) => f.includes(mediaId))).toEqual([]);
  });

  it("fails an upload with 502 M_UNKNOWN when the synchronous provider is unreachable, leaving no file or row", async () => {
    const rows = await mediaRowCount(t);
    const onDisk = storeFiles(t).all.length;
    await s3.stop();
    try {
      const up = await raw(t, "POST", `${LEGACY}/upload`, { token: alice.access_token, body: await png(30, 30), headers: { "content-type": "image/png" } });
      expect([up.status, up.json?.errcode]).toEqual([502, "M_UNKNOWN"]);
    } finally {
      await s3.start();
    }
    expect(await mediaRowCount(t)).toBe(rows);
    expect(storeFiles(t).all.length).toBe(onDisk);
    expect(storeFiles(t).tmp).toEqual([]);
  });
});

describe.each(backends())("a bucket store that refuses every request on %s", (backend) => {
  let s3: TestS3;
  let t: TestServer;
  let alice: Session;

  beforeAll(async () => {
    s3 = await startS3();
    // The endpoint answers, but the bucket named does not exist there (a misconfiguration).
    t = await startTestServer({ backend, config: { media_store: { backend: "s3", ...s3.options(), bucket: "no-such-bucket" } } });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it("answers uploads 502 M_UNKNOWN (never a bare 500), storing nothing; unknown media stays 404", async () => {
    const rows = await mediaRowCount(t);
    for (const [type, body] of [["text/plain", Buffer.from("x")], ["image/png", await png(20, 20)]] as const) {
      const up = await raw(t, "POST", `${LEGACY}/upload`, { token: alice.access_token, body, headers: { "content-type": type } });
      expect([up.status, up.json?.errcode, typeof up.json?.error], type).toEqual([502, "M_UNKNOWN", "string"]);
    }
    expect(await mediaRowCount(t)).toBe(rows);
    expect(storeFiles(t).all).toEqual([]);
    expect(await s3.keys()).toEqual([]);
    const d = await raw(t, "GET", `${V1}/download/${SERVER}/abcdefghijklmnopqrstuvwx`, { token: alice.access_token });
    expect([d.status, d.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });
});

/** Runs the `weft` command line (node --import tsx src/cli.ts) to its exit. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const root = path.resolve(import.meta.dirname, "../..");
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "src/cli.ts"), ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe.each(backends())("moving a server's media from local disk to a bucket on %s", (backend) => {
  let s3: TestS3;
  let t: TestServer;
  let alice: Session;

  beforeAll(async () => {
    s3 = await startS3();
    t = await startTestServer({ backend, config: { thumbnail_sizes: [{ width: 32, height: 32, method: "crop" }] } });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it("serves the old files from disk after the switch, and from the bucket once weft media-upload copied them up", async () => {
    const image = await png(64, 48);
    const text = Buffer.from("uploaded before the move");
    const img = await upload(t, alice.access_token, image, "image/png");
    const txt = await upload(t, alice.access_token, text, "text/plain");
    const before = storeFiles(t).all.filter((f) => !f.startsWith("tmp")).sort();
    expect(before.length).toBe(3); // two files and a thumbnail

    // The switch: the same server, restarted with a bucket as its primary store.
    const bucket = { backend: "s3", ...s3.options("moved/") };
    await t.stop();
    const yaml = path.join(t.dir, "media-move.yaml");
    writeFileSync(yaml, JSON.stringify({ server_name: SERVER, media_store_path: t.config.media_store_path, media_store: bucket }));
    t.config.media_store = { backend: "s3", s3: { bucket: s3.bucket, region: "us-east-1", endpoint_url: s3.endpoint, access_key_id: "S3RVER", secret_access_key: "S3RVER", prefix: "moved/", force_path_style: true } };
    await t.restart();
    const check = async () => {
      const d = await raw(t, "GET", `${V1}/download/${SERVER}/${img.mediaId}`, { token: alice.access_token });
      expect([d.status, d.body.equals(image)]).toEqual([200, true]);
      const r = await raw(t, "GET", `${V1}/download/${SERVER}/${txt.mediaId}`, { token: alice.access_token, headers: { range: "bytes=0-7" } });
      expect([r.status, r.body.toString()]).toEqual([206, "uploaded"]);
      const th = await raw(t, "GET", `${V1}/thumbnail/${SERVER}/${img.mediaId}?width=32&height=32&method=crop`, { token: alice.access_token });
      expect([th.status, (await sharp(th.body).metadata()).width]).toEqual([200, 32]);
    };
    await check();
    expect(await s3.keys()).toEqual([]);

    const first = await runCli(["media-upload", "-c", yaml]);
    expect([first.code, first.stdout.trim()], first.stderr).toEqual([0, "uploaded 3, already there 0, removed from local disk 0"]);
    expect(await s3.keys()).toEqual(before.map((f) => `moved/${f.split(path.sep).join("/")}`).sort());
    const second = await runCli(["media-upload", "--config", yaml, "--delete-local"]);
    expect([second.code, second.stdout.trim()], second.stderr).toEqual([0, "uploaded 0, already there 3, removed from local disk 3"]);
    expect(storeFiles(t).all).toEqual([]);
    await check();

    const none = await runCli(["media-upload", "-c", path.join(t.dir, "missing.yaml")]);
    expect(none.code).toBe(1);
  });
});
