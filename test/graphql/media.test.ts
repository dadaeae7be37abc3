// Avatars through media, on SQLite and PostgreSQL: an avatar uploaded over REST and set by mxc URI shows in
// /profile and in the m.room.member events of the user's rooms, a room avatar in m.room.avatar; the GraphQL
// `avatarHttpUrl` fields give URLs a browser loads with no Authorization header (signed for the viewer,
// short-lived), whose signature, size and expiry are checked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { png, upload } from "../helpers/media.ts";
import { gql } from "./client.ts";

const VIEWER = `{ viewer { avatarUrl full: avatarHttpUrl thumb: avatarHttpUrl(size: 64) } }`;
const ROOM = `query ($roomId: String!) { room(roomId: $roomId) {
  avatarUrl avatarHttpUrl(size: 32)
  members(first: 10) { edges { node { userId avatarUrl avatarHttpUrl(size: 16) } } }
} }`;

describe.each(backends())("avatars and browser media URLs on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let image: Buffer;
  let avatar: { mxc: string; mediaId: string };
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestServer({ backend, clock });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    image = await png(200, 200);
    avatar = await upload(t, alice.access_token, image, "image/png", "me.png");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("shows an avatar set by mxc URI in /profile and in the member events of the user's rooms", async () => {
    const roomId = await createRoom(t, alice);
    const set = await t.call("PUT", "/_matrix/client/v3/profile/@alice:weft.test/avatar_url", { token: alice.access_token, body: { avatar_url: avatar.mxc } });
    expect(set.status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/profile/@alice:weft.test")).json.avatar_url).toBe(avatar.mxc);
    const member = await t.call("GET", `/_matrix/client/v3/rooms/${roomId}/state/m.room.member/@alice:weft.test`, { token: alice.access_token });
    expect(member.json.avatar_url).toBe(avatar.mxc);
    const joined = await t.call("GET", `/_matrix/client/v3/rooms/${roomId}/joined_members`, { token: alice.access_token });
    expect(joined.json.joined["@alice:weft.test"].avatar_url).toBe(avatar.mxc);
  });

  it("gives the viewer browser URLs of their avatar: the file, and a thumbnail of the size asked", async () => {
    const r = await gql(t, VIEWER, undefined, alice.access_token);
    expect(r.body.errors).toBeUndefined();
    const v = r.body.data.viewer;
    expect(v.avatarUrl).toBe(avatar.mxc);
    expect(v.full).toMatch(new RegExp(`^${t.baseUrl}/_impl/media/v1/download/weft\\.test/${avatar.mediaId}\\?`));
    expect(v.full).not.toContain(alice.access_token);
    const full = await fetch(v.full);
    expect(full.status).toBe(200);
    expect(Buffer.from(await full.arrayBuffer()).equals(image)).toBe(true);
    expect(full.headers.get("referrer-policy")).toBe("no-referrer");
    expect(full.headers.get("content-disposition")).toBe("inline; filename=me.png");
    const thumb = await fetch(v.thumb);
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    // The closest pre-generated crop size at least as big (thumbnail_sizes: 32, 96, ...).
    expect([thumb.status, meta.width, meta.height]).toEqual([200, 96, 96]);
  });

  it("refuses tampered, re-sized and expired URLs", async () => {
    const v = (await gql(t, VIEWER, undefined, alice.access_token)).body.data.viewer;
    const tampered = v.full.replace(/sig=([^&])/, (_m: string, c: string) => `sig=${c === "A" ? "B" : "A"}`);
    const resized = v.thumb.replace("width=64", "width=65");
    const otherUser = v.full.replace(encodeURIComponent("@alice:weft.test"), encodeURIComponent("@bob:weft.test"));
    for (const url of [tampered, resized, otherUser, v.full.replace(/&sig=[^&]*/, "")]) {
      const r = await fetch(url);
      expect([r.status, ((await r.json()) as { errcode: string }).errcode], url).toEqual([403, "M_FORBIDDEN"]);
    }
    clock.advance(2 * 3_600_000);
    const expired = await fetch(v.full);
    expect(expired.status).toBe(403);
    // A fresh query gives a fresh URL.
    const again = (await gql(t, VIEWER, undefined, alice.access_token)).body.data.viewer;
    expect((await fetch(again.full)).status).toBe(200);
  });

  it("gives browser URLs for room and member avatars; null without an avatar; rejects a bad size", async () => {
    const room = await upload(t, bob.access_token, await png(100, 50), "image/png");
    const roomId = await createRoom(t, bob, { initial_state: [{ type: "m.room.avatar", state_key: "", content: { url: room.mxc } }], invite: ["@alice:weft.test"] });
    expect((await t.call("POST", `/_matrix/client/v3/join/${roomId}`, { token: alice.access_token, body: {} })).status).toBe(200);
    const r = await gql(t, ROOM, { roomId }, bob.access_token);
    expect(r.body.errors).toBeUndefined();
    const data = r.body.data.room;
    expect(data.avatarUrl).toBe(room.mxc);
    const roomThumb = await fetch(data.avatarHttpUrl);
    const meta = await sharp(Buffer.from(await roomThumb.arrayBuffer())).metadata();
    expect([roomThumb.status, meta.width, meta.height]).toEqual([200, 32, 32]);
    const members = Object.fromEntries(data.members.edges.map((e: any) => [e.node.userId, e.node]));
    expect(members["@alice:weft.test"].avatarUrl).toBe(avatar.mxc);
    expect((await fetch(members["@alice:weft.test"].avatarHttpUrl)).status).toBe(200);
    expect([members["@bob:weft.test"].avatarUrl, members["@bob:weft.test"].avatarHttpUrl]).toEqual([null, null]);
    const bad = await gql(t, `{ viewer { avatarHttpUrl(size: 0) } }`, undefined, alice.access_token);
    expect(bad.body.errors?.[0]?.extensions?.errcode).toBe("M_INVALID_PARAM");
  });
});
