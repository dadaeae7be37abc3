// Media over federation with both Weft servers keeping their media in an S3 bucket (one s3rver, a
// prefix each), on SQLite and PostgreSQL: B serves its media and thumbnails to A's signed federation
// requests straight from its bucket; A caches the remote media in its own bucket (remote_content and
// remote_thumbnails, nothing on A's disk), serves it with ranges and thumbnails, and purge_media_cache
// removes the cached objects. A third server, C, keeps local disk with Synapse's storage provider set to
// store_remote only: its cache of B's media is copied to the bucket, its own uploads are not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { fetch as undiciFetch } from "undici";
import { backends, insecureAgent, type TestServer } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { png, storeFiles } from "../helpers/media.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";

async function get(t: TestServer, p: string, token?: string, headers: Record<string, string> = {}) {
  const res = await undiciFetch(t.baseUrl + p, { method: "GET", headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) }, dispatcher: insecureAgent });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

describe.each(backends())("federation media between servers on S3 on %s", (backend) => {
  let s3: TestS3;
  let a: FederatedServer;
  let b: FederatedServer;
  let c: FederatedServer;
  let alice: Session;
  let carol: Session;
  let bob: Session;
  let admin: Session;

  beforeAll(async () => {
    s3 = await startS3();
    [a, b, c] = await Promise.all([
      startFederatedServer({ backend, config: { media_store: { backend: "s3", ...s3.options("a/") }, dynamic_thumbnails: true } }),
      startFederatedServer({ backend, config: { media_store: { backend: "s3", ...s3.options("b/") } } }),
      // Local disk, with Synapse's storage provider copying the cache of remote media only.
      startFederatedServer({
        backend,
        config: { media_storage_providers: [{ module: "s3_storage_provider.S3StorageProviderBackend", store_local: false, store_remote: true, store_synchronous: true, config: s3.options("c/") }] },
      }),
    ]);
    [alice, bob, admin, carol] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob"), registerUser(a, "root"), registerUser(c, "carol")]);
    await a.hs.services.users.setAdmin(`@root:${a.serverName}`, true);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), c?.close()]);
    await s3?.close();
  });

  it("A fetches B's media from B's bucket over federation, caches it in its own bucket and serves it, ranges and thumbnails too", async () => {
    const image = await png(240, 120);
    const up = await undiciFetch(`${b.baseUrl}/_matrix/media/v3/upload?filename=b.png`, { method: "POST", body: image, headers: { authorization: `Bearer ${bob.access_token}`, "content-type": "image/png" }, dispatcher: insecureAgent });
    expect(up.status).toBe(200);
    const mediaId = ((await up.json()) as { content_uri: string }).content_uri.split("/").pop()!;
    const ref = { origin: b.serverName, mediaId };
    const remoteKey = "a/" + a.hs.services.media.files.contentKey(ref);
    expect(remoteKey).toContain("remote_content/");
    expect(await s3.keys(remoteKey)).toEqual([]);

    const d = await get(a, `/_matrix/client/v1/media/download/${b.serverName}/${mediaId}`, alice.access_token);
    expect([d.status, d.headers.get("content-type"), d.body.equals(image)]).toEqual([200, "image/png", true]);
    expect(await s3.keys(remoteKey)).toEqual([remoteKey]);
    const r = await get(a, `/_matrix/client/v1/media/download/${b.serverName}/${mediaId}`, alice.access_token, { range: "bytes=4-11" });
    expect([r.status, r.headers.get("content-range"), r.body.equals(image.subarray(4, 12))]).toEqual([206, `bytes 4-11/${image.length}`, true]);

    const th = await get(a, `/_matrix/client/v1/media/thumbnail/${b.serverName}/${mediaId}?width=60&height=60&method=scale`, alice.access_token);
    expect(th.status).toBe(200);
    expect(await sharp(th.body).metadata()).toMatchObject({ width: 60, height: 30 });
    const thumbPrefix = "a/" + a.hs.services.media.files.thumbnailPrefix(ref);
    expect(thumbPrefix).toContain("remote_thumbnails/");
    expect(await s3.keys(thumbPrefix)).toEqual([`${thumbPrefix}60-60-image-png-scale`]);
    expect(storeFiles(a).all).toEqual([]);
    expect(storeFiles(b).all).toEqual([]);

    // The admin API's purge of the remote cache removes the cached objects; the next download fetches again.
    const purge = await undiciFetch(`${a.baseUrl}/_synapse/admin/v1/purge_media_cache?before_ts=${Date.now() + 60_000}`, { method: "POST", headers: { authorization: `Bearer ${admin.access_token}` }, dispatcher: insecureAgent });
    expect([purge.status, ((await purge.json()) as { deleted: number }).deleted]).toEqual([200, 1]);
    expect(await s3.keys(remoteKey)).toEqual([]);
    expect(await s3.keys(thumbPrefix)).toEqual([]);
    expect((await s3.keys("b/")).length).toBeGreaterThan(0); // B's own media is untouched
    const again = await get(a, `/_matrix/client/v1/media/download/${b.serverName}/${mediaId}`, alice.access_token);
    expect([again.status, again.body.equals(image)]).toEqual([200, true]);
    expect(await s3.keys(remoteKey)).toEqual([remoteKey]);
  });

  it("a server on local disk with store_remote copies cached remote media to the provider, and not its own uploads", async () => {
    const bytes = Buffer.from("remote media for the provider");
    const up = await undiciFetch(`${b.baseUrl}/_matrix/media/v3/upload`, { method: "POST", body: bytes, headers: { authorization: `Bearer ${bob.access_token}`, "content-type": "text/plain" }, dispatcher: insecureAgent });
    const mediaId = ((await up.json()) as { content_uri: string }).content_uri.split("/").pop()!;
    const d = await get(c, `/_matrix/client/v1/media/download/${b.serverName}/${mediaId}`, carol.access_token);
    expect([d.status, d.body.toString()]).toEqual([200, bytes.toString()]);
    const key = c.hs.services.media.files.contentKey({ origin: b.serverName, mediaId });
    expect(storeFiles(c).all).toContain(key);
    expect(await s3.keys("c/")).toEqual([`c/${key}`]);
    const own = await undiciFetch(`${c.baseUrl}/_matrix/media/v3/upload`, { method: "POST", body: Buffer.from("stays local"), headers: { authorization: `Bearer ${carol.access_token}`, "content-type": "text/plain" }, dispatcher: insecureAgent });
    expect(own.status).toBe(200);
    expect(await s3.keys("c/")).toEqual([`c/${key}`]);
  });
});
