// Account changes seen in rooms: a display name change rewrites the member event in joined rooms, and a
// deactivated user leaves every room they were in or invited to.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

describe.each(backends())("account changes in rooms on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });
  const enc = encodeURIComponent;

  it("updates the member event of joined rooms when the display name changes", async () => {
    const a = await registerUser(t, "renamer");
    const { json: room } = await t.call("POST", "/_matrix/client/v3/createRoom", { token: a.access_token, body: {} });
    const put = await t.call("PUT", `/_matrix/client/v3/profile/${enc(a.user_id)}/displayname`, { token: a.access_token, body: { displayname: "New Name" } });
    expect(put.status).toBe(200);
    const member = await t.call("GET", `/_matrix/client/v3/rooms/${enc(room.room_id)}/state/m.room.member/${enc(a.user_id)}`, { token: a.access_token });
    expect(member.json).toEqual({ membership: "join", displayname: "New Name" });
    const joined = await t.call("GET", `/_matrix/client/v3/rooms/${enc(room.room_id)}/joined_members`, { token: a.access_token });
    expect(joined.json.joined[a.user_id]).toEqual({ display_name: "New Name", avatar_url: null });
  });

  it("leaves every room and declines invites on deactivation", async () => {
    const a = await registerUser(t, "leaver", "pw");
    const b = await registerUser(t, "stayer");
    const { json: own } = await t.call("POST", "/_matrix/client/v3/createRoom", { token: b.access_token, body: { preset: "public_chat" } });
    const { json: invited } = await t.call("POST", "/_matrix/client/v3/createRoom", { token: b.access_token, body: { invite: [a.user_id] } });
    expect((await t.call("POST", `/_matrix/client/v3/join/${enc(own.room_id)}`, { token: a.access_token, body: {} })).status).toBe(200);
    const first = await t.call("POST", "/_matrix/client/v3/account/deactivate", { token: a.access_token, body: {} });
    const done = await t.call("POST", "/_matrix/client/v3/account/deactivate", {
      token: a.access_token,
      body: { auth: { type: "m.login.password", user: "leaver", password: "pw", session: first.json.session } },
    });
    expect(done.status).toBe(200);
    for (const roomId of [own.room_id, invited.room_id]) {
      const m = await t.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/state/m.room.member/${enc(a.user_id)}`, { token: b.access_token });
      expect(m.json.membership, roomId).toBe("leave");
    }
  });
});
