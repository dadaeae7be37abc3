// Owned state (MSC3757) over HTTP on SQLite and PostgreSQL, in Synapse 1.163's unstable room versions
// `org.matrix.msc3757.10` / `.11` (always known, as Synapse knows them, and listed as unstable in
// /capabilities): a user may set state keyed by their user id with a `_suffix`, the room creator (more
// power) may set other users' keys, a user may not set another user's or a key whose user id is not theirs
// (403 M_FORBIDDEN), and a key starting with `@` that names no valid user is 400 M_BAD_JSON. In room
// version 10 every such key but the sender's own is 403.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const TYPE = "com.example.test";
const SUFFIX = "_state_key_suffix:!@#$123";

describe.each(backends())("owned state (MSC3757) on %s", (backend) => {
  let t: TestServer;
  let creator: Session;
  let user1: Session;
  let user2: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    creator = await registerUser(t, "creator");
    user1 = await registerUser(t, "user1");
    user2 = await registerUser(t, "user2");
  });
  afterAll(async () => {
    await t?.close();
  });

  const room = async (version: string) => {
    const roomId = await createRoom(t, creator, { room_version: version, preset: "public_chat", power_level_content_override: { events: { [TYPE]: 0 } } });
    for (const u of [user1, user2]) expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: u.access_token, body: {} })).status).toBe(200);
    return roomId;
  };
  const put = (roomId: string, who: Session, stateKey: string) => t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${TYPE}/${enc(stateKey)}`, { token: who.access_token, body: { by: who.user_id } });
  const expectOk = async (res: Promise<{ status: number; json: any }>) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.event_id).toMatch(/^\$/);
  };
  const expectError = async (res: Promise<{ status: number; json: any }>, status: number, errcode: string) => {
    const r = await res;
    expect([r.status, r.json.errcode]).toEqual([status, errcode]);
  };

  it("lists the MSC3757 versions as unstable in /capabilities", async () => {
    const caps = (await t.call("GET", `${V3}/capabilities`, { token: creator.access_token })).json.capabilities["m.room_versions"].available;
    expect(caps).toMatchObject({ "org.matrix.msc3757.10": "unstable", "org.matrix.msc3757.11": "unstable", "10": "stable" });
  });

  for (const version of ["org.matrix.msc3757.10", "org.matrix.msc3757.11"]) {
    it(`${version}: owners, the more powerful, and no one else set @-keyed state`, async () => {
      const roomId = await room(version);
      expect((await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.create/`, { token: creator.access_token })).json.room_version).toBe(version);
      await expectOk(put(roomId, user1, user1.user_id + SUFFIX));
      await expectOk(put(roomId, creator, user1.user_id));
      await expectOk(put(roomId, creator, user1.user_id + SUFFIX));
      await expectOk(put(roomId, creator, "@notinroom:hs2"));
      await expectError(put(roomId, user1, user2.user_id), 403, "M_FORBIDDEN");
      await expectError(put(roomId, user1, user2.user_id + SUFFIX), 403, "M_FORBIDDEN");
      await expectError(put(roomId, user1, user1.user_id + SUFFIX.slice(1)), 403, "M_FORBIDDEN");
      await expectError(put(roomId, user1, `@prefix_${user1.user_id}${SUFFIX}`), 403, "M_FORBIDDEN");
      await expectError(put(roomId, user1, creator.user_id), 403, "M_FORBIDDEN");
      await expectError(put(roomId, creator, "@oops"), 400, "M_BAD_JSON");
      await expectError(put(roomId, creator, `${creator.user_id}@${SUFFIX.slice(1)}`), 400, "M_BAD_JSON");
      // What was set is the room's state: user1's suffixed key holds the creator's write.
      const got = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/${TYPE}/${enc(user1.user_id + SUFFIX)}`, { token: user2.access_token });
      expect(got.json).toEqual({ by: creator.user_id });
    });
  }

  it("room version 10: only the sender's own user id", async () => {
    const roomId = await room("10");
    await expectOk(put(roomId, user1, user1.user_id));
    await expectError(put(roomId, user1, user1.user_id + SUFFIX), 403, "M_FORBIDDEN");
    await expectError(put(roomId, creator, user1.user_id), 403, "M_FORBIDDEN");
    await expectError(put(roomId, creator, "@oops"), 403, "M_FORBIDDEN");
  });
});
