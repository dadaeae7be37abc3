// synadm (PyPI), the admin command line tool operators use with Synapse, driven against a running Weft:
// `user list`, `user details`, `room list`, `room details` and `user deactivate` succeed and show what
// the server holds; the deactivated user can no longer use their token. SQLite (the admin API's storage
// is covered on both databases by test/http/admin-users.test.ts and admin-rooms.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { synadmFor, type Synadm } from "../helpers/synadm.ts";

/** The JSON documents synadm printed (it may print a notice and several answers). */
function jsonOutputs(stdout: string): any[] {
  const out: any[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < stdout.length; i++) {
    const c = stdout[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"' && depth > 0) inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if ((c === "}" || c === "]") && depth > 0 && --depth === 0) out.push(JSON.parse(stdout.slice(start, i + 1)));
  }
  return out;
}

describe("synadm against Weft", () => {
  let t: TestServer;
  let admin: Session;
  let alice: Session;
  let roomId: string;
  let synadm: Synadm;

  beforeAll(async () => {
    t = await startTestServer();
    admin = await registerUser(t, "operator");
    await t.hs.services.users.setAdmin(admin.user_id, true);
    alice = await registerUser(t, "alice");
    const room = await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { name: "Synadm Lounge", preset: "public_chat" } });
    expect(room.status).toBe(200);
    roomId = room.json.room_id;
    synadm = synadmFor({ baseUrl: t.baseUrl, serverName: "weft.test", userId: admin.user_id, token: admin.access_token });
  });
  afterAll(async () => {
    synadm?.close();
    await t?.close();
  });

  it("user list shows every account with its profile", async () => {
    const r = await synadm.run("user", "list");
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const [list] = jsonOutputs(r.stdout);
    expect(list.total).toBe(2);
    expect(list.users.map((u: any) => u.name).sort()).toEqual(["@alice:weft.test", "@operator:weft.test"]);
    expect(list.users.find((u: any) => u.name === "@operator:weft.test")).toMatchObject({ admin: true, displayname: "operator", deactivated: false });
  });

  it("user details shows one account", async () => {
    const r = await synadm.run("user", "details", "@alice:weft.test");
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(jsonOutputs(r.stdout)[0]).toMatchObject({ name: "@alice:weft.test", admin: false, deactivated: false, displayname: "alice" });
  });

  it("room list and room details show the room", async () => {
    const list = await synadm.run("room", "list");
    expect(list.code, list.stderr + list.stdout).toBe(0);
    const [rooms] = jsonOutputs(list.stdout);
    expect(rooms.total_rooms).toBe(1);
    expect(rooms.rooms[0]).toMatchObject({ room_id: roomId, name: "Synadm Lounge", joined_members: 1, join_rules: "public", creator: "@alice:weft.test" });

    const details = await synadm.run("room", "details", roomId);
    expect(details.code, details.stderr + details.stdout).toBe(0);
    expect(jsonOutputs(details.stdout)[0]).toMatchObject({ room_id: roomId, name: "Synadm Lounge", joined_local_members: 1, forgotten: false });
  });

  it("user deactivate deactivates the account", async () => {
    const r = await synadm.run("user", "deactivate", "@alice:weft.test");
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(jsonOutputs(r.stdout)).toContainEqual({ id_server_unbind_result: "success" });
    const who = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: alice.access_token });
    expect(who.status).toBe(401);
    const details = await t.call("GET", "/_synapse/admin/v2/users/@alice:weft.test", { token: admin.access_token });
    expect(details.json).toMatchObject({ deactivated: true, displayname: null });
  });
});
