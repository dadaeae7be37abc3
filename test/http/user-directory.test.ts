// POST /user_directory/search over HTTP on SQLite and PostgreSQL: who is visible by default (users sharing
// a room with the requester, users joined to public rooms: join rule public, world_readable history, or
// published in the room directory), user_directory.search_all_users and user_directory.enabled, word-
// prefix matching on localpart and display name, ranking, display name changes, joins and leaves,
// deactivation, limit/limited, and bad requests.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const PATH = `${V3}/user_directory/search`;
const enc = encodeURIComponent;

async function find(t: TestServer, who: Session, search_term: string, limit?: number): Promise<{ results: any[]; limited: boolean }> {
  const res = await t.call("POST", PATH, { token: who.access_token, body: { search_term, ...(limit === undefined ? {} : { limit }) } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expectMatchesSpec(res, "POST", PATH);
  return res.json;
}

const userIds = (r: { results: any[] }) => r.results.map((x) => x.user_id);

async function join(t: TestServer, who: Session, roomId: string) {
  const res = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
}

async function leave(t: TestServer, who: Session, roomId: string) {
  const res = await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: who.access_token, body: {} });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
}

async function setName(t: TestServer, who: Session, displayname: string) {
  const res = await t.call("PUT", `${V3}/profile/${enc(who.user_id)}/displayname`, { token: who.access_token, body: { displayname } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
}

/** A private room `owner` creates and `others` join by invitation. */
async function privateRoom(t: TestServer, owner: Session, ...others: Session[]): Promise<string> {
  const roomId = await createRoom(t, owner, { preset: "private_chat", invite: others.map((o) => o.user_id) });
  for (const o of others) await join(t, o, roomId);
  return roomId;
}

describe.each(backends())("user directory on %s", (backend) => {
  let t: TestServer;
  let me: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    me = await registerUser(t, "searcher");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("shows users who share a room with the requester, and no one else (by default)", async () => {
    const friend = await registerUser(t, "shrew_friend");
    await registerUser(t, "shrew_stranger");
    const other = await registerUser(t, "shrew_other");
    await privateRoom(t, other); // alone in a private room: not visible to me
    expect(userIds(await find(t, me, "shrew"))).toEqual([]);
    const roomId = await privateRoom(t, me, friend);
    expect(userIds(await find(t, me, "shrew"))).toEqual([friend.user_id]);
    // ... as long as the room is shared.
    await leave(t, friend, roomId);
    expect(userIds(await find(t, me, "shrew"))).toEqual([]);
  });

  it("shows users joined to public rooms: join rule public, world_readable history, or in the room directory", async () => {
    const pub = await registerUser(t, "mole_public");
    const wr = await registerUser(t, "mole_readable");
    const dir = await registerUser(t, "mole_listed");
    const publicRoom = await createRoom(t, pub, { preset: "public_chat" });
    await createRoom(t, wr, { preset: "private_chat", initial_state: [{ type: "m.room.history_visibility", content: { history_visibility: "world_readable" } }] });
    await createRoom(t, dir, { preset: "private_chat", visibility: "public" });
    expect(userIds(await find(t, me, "mole")).sort()).toEqual([dir.user_id, pub.user_id, wr.user_id].sort());
    // A room that stops being public stops showing its members.
    const res = await t.call("PUT", `${V3}/rooms/${enc(publicRoom)}/state/m.room.join_rules`, { token: pub.access_token, body: { join_rule: "invite" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(userIds(await find(t, me, "mole")).sort()).toEqual([dir.user_id, wr.user_id].sort());
  });

  it("matches localparts and display names case-insensitively by word prefix", async () => {
    const q = await registerUser(t, "vole_quentin");
    const roomId = await privateRoom(t, me, q);
    void roomId;
    await setName(t, q, "Quentin Tarantino-Smith");
    expect(await find(t, me, "TARAN")).toEqual({ results: [{ user_id: q.user_id, display_name: "Quentin Tarantino-Smith" }], limited: false });
    expect(userIds(await find(t, me, "quen smi"))).toEqual([q.user_id]);
    expect(userIds(await find(t, me, "vole_q"))).toEqual([q.user_id]);
    expect(userIds(await find(t, me, `@vole_quentin:${t.config.server_name}`))).toEqual([q.user_id]);
    // Not in the middle of a word, and every word must match.
    expect(userIds(await find(t, me, "antino"))).toEqual([]);
    expect(userIds(await find(t, me, "quentin jones"))).toEqual([]);
    // The server name is not a word of anyone's name.
    expect(userIds(await find(t, me, t.config.server_name.split(".")[0]!))).toEqual([]);
  });

  it("ranks exact matches first, then users sharing a room with the requester", async () => {
    const exact = await registerUser(t, "lynx");
    const longer = await registerUser(t, "lynxa");
    const shared = await registerUser(t, "lynxb");
    for (const u of [exact, longer]) await createRoom(t, u, { preset: "public_chat" });
    await privateRoom(t, me, shared);
    expect(userIds(await find(t, me, "lynx"))).toEqual([exact.user_id, shared.user_id, longer.user_id]);
  });

  it("reflects display name changes and avatars at once", async () => {
    const u = await registerUser(t, "gecko_one");
    await privateRoom(t, me, u);
    await setName(t, u, "Zanzibar Zed");
    const avatar = await t.call("PUT", `${V3}/profile/${enc(u.user_id)}/avatar_url`, { token: u.access_token, body: { avatar_url: "mxc://weft.test/zed" } });
    expect(avatar.status).toBe(200);
    expect((await find(t, me, "zanzibar")).results).toEqual([{ user_id: u.user_id, display_name: "Zanzibar Zed", avatar_url: "mxc://weft.test/zed" }]);
    await setName(t, u, "Yonder Yak");
    expect(userIds(await find(t, me, "zanzibar"))).toEqual([]);
    expect(userIds(await find(t, me, "yonder"))).toEqual([u.user_id]);
  });

  it("never shows deactivated users", async () => {
    const u = await registerUser(t, "ferret_gone", "pw");
    await privateRoom(t, me, u);
    expect(userIds(await find(t, me, "ferret"))).toEqual([u.user_id]);
    const first = await t.call("POST", `${V3}/account/deactivate`, { token: u.access_token, body: {} });
    const done = await t.call("POST", `${V3}/account/deactivate`, {
      token: u.access_token,
      body: { auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "ferret_gone" }, password: "pw", session: first.json.session } },
    });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect(userIds(await find(t, me, "ferret"))).toEqual([]);
  });

  it("applies limit and says when the list was limited", async () => {
    const users = [await registerUser(t, "otter_a"), await registerUser(t, "otter_b"), await registerUser(t, "otter_c")];
    await privateRoom(t, me, ...users);
    const two = await find(t, me, "otter", 2);
    expect(two.results).toHaveLength(2);
    expect(two.limited).toBe(true);
    const all = await find(t, me, "otter");
    expect(userIds(all).sort()).toEqual(users.map((u) => u.user_id).sort());
    expect(all.limited).toBe(false);
  });

  it("refuses bad requests with the spec's errors", async () => {
    const post = (body: unknown, opts: { raw?: string; token?: string | null } = {}) =>
      t.call("POST", PATH, {
        token: opts.token === null ? undefined : (opts.token ?? me.access_token),
        ...(opts.raw !== undefined ? { raw: opts.raw, headers: { "content-type": "application/json" } } : { body }),
      });
    const expectError = (res: { status: number; json: any }, status: number, errcode: string) =>
      expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
    expectError(await post({}), 400, "M_MISSING_PARAM");
    expectError(await post({ search_term: 7 }), 400, "M_BAD_JSON");
    expectError(await post({ search_term: "x", limit: "ten" }), 400, "M_BAD_JSON");
    expectError(await post({ search_term: "x", limit: -1 }), 400, "M_BAD_JSON");
    expectError(await post(undefined, { raw: "{oops" }), 400, "M_NOT_JSON");
    expectError(await post({ search_term: "x" }, { token: null }), 401, "M_MISSING_TOKEN");
  });
});

describe.each(backends())("user directory options on %s", (backend) => {
  it("search_all_users shows every local user; enabled: false answers nothing", async () => {
    const t = await startTestServer({ backend, config: { user_directory: { search_all_users: true } } });
    try {
      const me = await registerUser(t, "seeker");
      const loner = await registerUser(t, "hermit_crab");
      expect(userIds(await find(t, me, "hermit"))).toEqual([loner.user_id]);
    } finally {
      await t.close();
    }
    const off = await startTestServer({ backend, config: { user_directory: { enabled: false } } });
    try {
      const me = await registerUser(off, "seeker");
      const other = await registerUser(off, "hermit_crab");
      await privateRoom(off, me, other);
      expect(await find(off, me, "hermit")).toEqual({ results: [], limited: false });
    } finally {
      await off.close();
    }
  });
});
