// The media admin API (Synapse admin API "Media") over HTTP on /_synapse/admin/v1 and /_impl/admin/v1,
// on SQLite and PostgreSQL: a room's media, quarantine (one item, a room's, a user's) and its undoing,
// protection, deleting one item and a user's uploads, purging the remote cache; and media_retention
// with a clock the test moves.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { png, raw, upload } from "../helpers/media.ts";
import { runMediaRetention } from "../../src/domain/media/retention.ts";
import type { RemoteMediaFetcher } from "../../src/domain/media/media-services.ts";

const V1 = "/_matrix/client/v1/media";

/** A stand-in origin server answering every remote media id with a few bytes. */
const remoteOrigin: RemoteMediaFetcher = {
  download: async () => ({ mediaType: "text/plain", uploadName: null, body: (async function* () { yield Buffer.from("remote bytes"); })() }),
};

describe.each(backends())("media admin API on %s", (backend) => {
  let t: TestServer;
  let admin: Session;
  let alice: Session;
  const get = (p: string, token = alice.access_token) => raw(t, "GET", p, { token });

  beforeAll(async () => {
    t = await startTestServer({ backend });
    admin = await registerUser(t, "root");
    await t.hs.services.users.setAdmin("@root:weft.test", true);
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("lists the media a room's events name, local and remote; admins only", async () => {
    const roomId = await createRoom(t, alice);
    const img = await upload(t, alice.access_token, await png(20, 20), "image/png");
    const thumb = await upload(t, alice.access_token, await png(10, 10), "image/png");
    for (const [txn, content] of [
      ["1", { msgtype: "m.image", body: "a.png", url: img.mxc, info: { thumbnail_url: thumb.mxc } }],
      ["2", { msgtype: "m.file", body: "b", url: "mxc://remote.example/RemoteMedia1" }],
      ["3", { msgtype: "m.text", body: "no media" }],
    ] as const) {
      const r = await t.call("PUT", `/_matrix/client/v3/rooms/${roomId}/send/m.room.message/${txn}`, { token: alice.access_token, body: content });
      expect(r.status).toBe(200);
    }
    for (const prefix of ["/_synapse/admin/v1", "/_impl/admin/v1"]) {
      const r = await raw(t, "GET", `${prefix}/room/${encodeURIComponent(roomId)}/media`, { token: admin.access_token });
      expect(r.status).toBe(200);
      expect({ local: [...r.json.local].sort(), remote: r.json.remote }).toEqual({ local: [img.mxc, thumb.mxc].sort(), remote: ["mxc://remote.example/RemoteMedia1"] });
    }
    const denied = await get(`/_synapse/admin/v1/room/${encodeURIComponent(roomId)}/media`);
    expect([denied.status, denied.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const unknown = await raw(t, "GET", `/_synapse/admin/v1/room/${encodeURIComponent("!nope:weft.test")}/media`, { token: admin.access_token });
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);

    // Quarantining the room's media hides both local items.
    const q = await raw(t, "POST", `/_synapse/admin/v1/room/${encodeURIComponent(roomId)}/media/quarantine`, { token: admin.access_token });
    expect([q.status, q.json]).toEqual([200, { num_quarantined: 2 }]);
    for (const m of [img, thumb]) expect((await get(`${V1}/download/weft.test/${m.mediaId}`)).status).toBe(404);
  });

  it("quarantines one item (admins may still look with admin_unsafely_bypass_quarantine), unquarantines, protects", async () => {
    const m = await upload(t, alice.access_token, Buffer.from("file"), "text/plain");
    const p = `${V1}/download/weft.test/${m.mediaId}`;
    const q = await raw(t, "POST", `/_synapse/admin/v1/media/quarantine/weft.test/${m.mediaId}`, { token: admin.access_token });
    expect([q.status, q.json]).toEqual([200, {}]);
    expect([(await get(p)).status, (await get(p)).json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect((await get(`${p}?admin_unsafely_bypass_quarantine=true`)).status).toBe(404);
    expect((await get(`${p}?admin_unsafely_bypass_quarantine=true`, admin.access_token)).status).toBe(200);
    const uq = await raw(t, "POST", `/_impl/admin/v1/media/unquarantine/weft.test/${m.mediaId}`, { token: admin.access_token });
    expect(uq.status).toBe(200);
    expect((await get(p)).status).toBe(200);
    const notAdmin = await raw(t, "POST", `/_synapse/admin/v1/media/quarantine/weft.test/${m.mediaId}`, { token: alice.access_token });
    expect([notAdmin.status, notAdmin.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const bad = await raw(t, "POST", `/_synapse/admin/v1/media/quarantine/weft.test/..%2Fx`, { token: admin.access_token });
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);

    // Protected media is safe from quarantine.
    expect((await raw(t, "POST", `/_synapse/admin/v1/media/protect/${m.mediaId}`, { token: admin.access_token })).status).toBe(200);
    const bob = await registerUser(t, "bob");
    const bobs = await upload(t, bob.access_token, Buffer.from("bob's"), "text/plain");
    await raw(t, "POST", `/_synapse/admin/v1/media/quarantine/weft.test/${m.mediaId}`, { token: admin.access_token });
    expect((await get(p)).status).toBe(200);
    const uq2 = await raw(t, "POST", `/_synapse/admin/v1/user/${encodeURIComponent("@bob:weft.test")}/media/quarantine`, { token: admin.access_token });
    expect([uq2.status, uq2.json]).toEqual([200, { num_quarantined: 1 }]);
    expect((await get(`${V1}/download/weft.test/${bobs.mediaId}`)).status).toBe(404);
    expect((await raw(t, "POST", `/_synapse/admin/v1/media/unprotect/${m.mediaId}`, { token: admin.access_token })).status).toBe(200);
  });

  it("lists and deletes a user's uploads page by page, and deletes one item", async () => {
    const carol = await registerUser(t, "carol");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(t, carol.access_token, Buffer.from(`c${i}`), "text/plain", `c${i}.txt`)).mediaId);
    const user = encodeURIComponent("@carol:weft.test");
    const list = await raw(t, "GET", `/_synapse/admin/v1/users/${user}/media?limit=2`, { token: admin.access_token });
    expect(list.status).toBe(200);
    expect([list.json.total, list.json.next_token, list.json.media.length]).toEqual([3, 2, 2]);
    expect(list.json.media[0]).toMatchObject({ media_type: "text/plain", media_length: 2, quarantined_by: null, safe_from_quarantine: false });
    expect(Object.keys(list.json.media[0]).sort()).toEqual(["created_ts", "last_access_ts", "media_id", "media_length", "media_type", "quarantined_by", "safe_from_quarantine", "upload_name"]);
    const rest = await raw(t, "GET", `/_impl/admin/v1/users/${user}/media?from=2`, { token: admin.access_token });
    expect([rest.json.media.length, rest.json.next_token]).toEqual([1, undefined]);
    for (const q of ["from=-1", "limit=-1", "dir=x"]) {
      const r = await raw(t, "GET", `/_synapse/admin/v1/users/${user}/media?${q}`, { token: admin.access_token });
      expect([r.status, r.json.errcode], q).toEqual([400, "M_INVALID_PARAM"]);
    }
    const gone = await raw(t, "GET", `/_synapse/admin/v1/users/${encodeURIComponent("@nobody:weft.test")}/media`, { token: admin.access_token });
    expect([gone.status, gone.json.errcode]).toEqual([404, "M_NOT_FOUND"]);

    const paths = ids.map((id) => t.hs.services.media.files.contentPath({ origin: "weft.test", mediaId: id }));
    expect(paths.every((p) => existsSync(p))).toBe(true);
    const del = await raw(t, "DELETE", `/_synapse/admin/v1/users/${user}/media?limit=2`, { token: admin.access_token });
    expect(del.status).toBe(200);
    expect(del.json.total).toBe(2);
    expect([...del.json.deleted_media].sort()).toEqual(ids.slice(0, 2).sort());
    expect(paths.map((p) => existsSync(p))).toEqual([false, false, true]);

    const one = await raw(t, "DELETE", `/_synapse/admin/v1/media/weft.test/${ids[2]}`, { token: admin.access_token });
    expect([one.status, one.json]).toEqual([200, { deleted_media: [ids[2]], total: 1 }]);
    expect(existsSync(paths[2]!)).toBe(false);
    expect((await get(`${V1}/download/weft.test/${ids[2]}`)).status).toBe(404);
    const again = await raw(t, "DELETE", `/_synapse/admin/v1/media/weft.test/${ids[2]}`, { token: admin.access_token });
    expect([again.status, again.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const remote = await raw(t, "DELETE", `/_synapse/admin/v1/media/remote.example/abc`, { token: admin.access_token });
    expect([remote.status, remote.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
  });

  it("purges the remote media cache (purge_media_cache?before_ts=)", async () => {
    t.hs.services.media.remoteFetcher = remoteOrigin;
    const d = await get(`${V1}/download/remote.example/Cached1`);
    expect([d.status, d.body.toString()]).toEqual([200, "remote bytes"]);
    const missing = await raw(t, "POST", "/_synapse/admin/v1/purge_media_cache", { token: admin.access_token });
    expect([missing.status, missing.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const r = await raw(t, "POST", `/_synapse/admin/v1/purge_media_cache?before_ts=${Date.now() + 1000}`, { token: admin.access_token });
    expect([r.status, r.json]).toEqual([200, { deleted: 1 }]);
    expect(await t.hs.services.db.media.count({ where: { origin: "remote.example" } })).toBe(0);
  });
});

describe.each(backends())("media_retention on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestServer({ backend, clock, config: { media_retention: { local_media_lifetime: "2d", remote_media_lifetime: "1h" } } });
    alice = await registerUser(t, "alice");
    t.hs.services.media.remoteFetcher = remoteOrigin;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("drops remote caches and local media not accessed within their lifetimes; keeps avatars and quarantined media", async () => {
    const kept = await upload(t, alice.access_token, await png(8, 8), "image/png");
    const avatar = await upload(t, alice.access_token, await png(8, 8), "image/png");
    const old = await upload(t, alice.access_token, Buffer.from("old"), "text/plain");
    const held = await upload(t, alice.access_token, Buffer.from("evidence"), "text/plain");
    await t.hs.services.media.store.setQuarantine([{ origin: "weft.test", mediaId: held.mediaId }], "@root:weft.test");
    const pending = await raw(t, "POST", "/_matrix/media/v1/create", { token: alice.access_token });
    expect((await t.call("PUT", "/_matrix/client/v3/profile/@alice:weft.test/avatar_url", { token: alice.access_token, body: { avatar_url: avatar.mxc } })).status).toBe(200);
    expect((await raw(t, "GET", `${V1}/download/remote.example/Cached2`, { token: alice.access_token })).status).toBe(200);

    clock.advance(2 * 3_600_000);
    expect(await runMediaRetention(t.hs.services)).toMatchObject({ remote: 1, local: 0 });
    expect(await t.hs.services.db.media.count({ where: { origin: "remote.example" } })).toBe(0);

    // Reading `kept` now keeps it alive; two days later the others are idle.
    clock.advance(25 * 3_600_000);
    expect((await raw(t, "GET", `${V1}/download/weft.test/${kept.mediaId}`, { token: alice.access_token })).status).toBe(200);
    clock.advance(25 * 3_600_000);
    const result = await runMediaRetention(t.hs.services);
    expect(result).toMatchObject({ local: 1, pending: 1 });
    const left = (await t.hs.services.db.media.findMany({ where: { origin: "weft.test" }, select: { mediaId: true } })).map((r) => r.mediaId).sort();
    expect(left).toEqual([kept.mediaId, avatar.mediaId, held.mediaId].sort());
    expect(existsSync(t.hs.services.media.files.contentPath({ origin: "weft.test", mediaId: old.mediaId }))).toBe(false);
    expect((await raw(t, "GET", `${V1}/download/weft.test/${pending.json.content_uri.split("/").pop()}?timeout_ms=0`, { token: alice.access_token })).status).toBe(404);
  });
});
