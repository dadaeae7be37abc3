// Spaces over HTTP on SQLite and PostgreSQL: GET /v1/rooms/{roomId}/hierarchy over a space three levels
// deep with more rooms than a page (paged with `from`), suggested_only, max_depth, children without a
// valid `via` ignored, a room that is no space without children, rooms the requester may not see left
// out, bad parameters and foreign tokens; and a restricted room joined through membership of the space.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V1 = "/_matrix/client/v1";
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("space hierarchy on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  const ids: Record<string, string> = {};

  const space = (name: string) => createRoom(t, alice, { preset: "public_chat", name, creation_content: { type: "m.space" } });
  const room = (name: string, extra: Record<string, unknown> = {}) => createRoom(t, alice, { preset: "public_chat", name, ...extra });

  async function addChild(parent: string, child: string, content: Record<string, unknown>) {
    const res = await t.call("PUT", `${V3}/rooms/${enc(parent)}/state/m.space.child/${enc(child)}`, { token: alice.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    ids.S = await space("S");
    ids.A = await room("A", { topic: "room A" });
    ids.S2 = await space("S2");
    ids.S3 = await space("S3");
    for (const n of ["B", "C", "D", "E", "F", "G", "X", "Y"]) ids[n] = await room(n);
    ids.P = await createRoom(t, alice, { preset: "private_chat", name: "P" });
    ids.R = await createRoom(t, alice, {
      name: "R",
      room_version: "10",
      initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: ids.S }] } }],
    });
    const via = ["weft.test"];
    await addChild(ids.S, ids.A!, { via, order: "a" });
    await addChild(ids.S, ids.S2!, { via, order: "b", suggested: true });
    await addChild(ids.S, ids.B!, { via, order: "c", suggested: true });
    await addChild(ids.S, ids.P!, { via, order: "d" });
    await addChild(ids.S, ids.R!, { via, order: "e" });
    await addChild(ids.S, ids.X!, { via: [] }); // no valid via: ignored
    await addChild(ids.S, "!unknown:elsewhere.test", { via: ["elsewhere.test"] }); // unknown here: skipped
    await addChild(ids.A!, ids.Y!, { via }); // A is no space: its children are none (as Synapse)
    await addChild(ids.S2, ids.S3!, { via, order: "a" });
    await addChild(ids.S2, ids.C!, { via, order: "b", suggested: true });
    await addChild(ids.S2, ids.D!, { via, order: "c" });
    for (const [i, n] of ["E", "F", "G"].entries()) await addChild(ids.S3, ids[n]!, { via, order: String(i) });
    await addChild(ids.S3, ids.S!, { via }); // a loop back to the top: each room is shown once
  });
  afterAll(async () => {
    await t?.close();
  });

  const path = (roomId: string, query = "") => `${V1}/rooms/${enc(roomId)}/hierarchy${query}`;
  async function hierarchy(who: Session, roomId: string, query = "") {
    const res = await t.call("GET", path(roomId, query), { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", path(roomId));
    return res.json;
  }
  const names = (rooms: any[]) => rooms.map((r) => Object.entries(ids).find(([, id]) => id === r.room_id)?.[0] ?? r.room_id);

  async function walkAll(who: Session, query: string) {
    const seen: string[] = [];
    let from: string | undefined;
    let pages = 0;
    do {
      const res = await hierarchy(who, ids.S!, `${query}${from ? `&from=${enc(from)}` : ""}`);
      seen.push(...names(res.rooms));
      from = res.next_batch;
      pages++;
    } while (from && pages < 20);
    return { seen, pages };
  }

  it("walks depth-first in child order, paging with from", async () => {
    const full = await hierarchy(bob, ids.S!);
    expect(names(full.rooms)).toEqual(["S", "A", "S2", "S3", "E", "F", "G", "C", "D", "B"]);
    expect(full.next_batch).toBeUndefined();
    const { seen, pages } = await walkAll(bob, "?limit=3");
    expect(seen).toEqual(names(full.rooms));
    expect(pages).toBe(4);
    // alice is in the private room P, and may see R (she is in the space).
    expect(names((await hierarchy(alice, ids.S!)).rooms)).toEqual(["S", "A", "S2", "S3", "E", "F", "G", "C", "D", "B", "P", "R"]);
  });

  it("describes each room and its children", async () => {
    const res = await hierarchy(bob, ids.S!, "?max_depth=1");
    const s = res.rooms[0];
    expect(s).toMatchObject({ room_id: ids.S, name: "S", room_type: "m.space", join_rule: "public", world_readable: false, guest_can_join: false, num_joined_members: 1 });
    const children = s.children_state.map((c: any) => c.state_key);
    expect(children).toEqual(expect.arrayContaining([ids.A, ids.S2, ids.B, ids.P, ids.R]));
    expect(children).not.toContain(ids.X);
    for (const c of s.children_state) {
      expect(c.type).toBe("m.space.child");
      expect(typeof c.origin_server_ts).toBe("number");
      expect(c.sender).toBe(alice.user_id);
    }
    const a = res.rooms.find((r: any) => r.room_id === ids.A);
    expect(a).toMatchObject({ name: "A", topic: "room A", children_state: [] });
    expect(a.room_type).toBeUndefined();
  });

  it("suggested_only and max_depth", async () => {
    expect(names((await hierarchy(bob, ids.S!, "?suggested_only=true")).rooms)).toEqual(["S", "S2", "C", "B"]);
    expect(names((await hierarchy(bob, ids.S!, "?max_depth=1")).rooms)).toEqual(["S", "A", "S2", "B"]);
    expect(names((await hierarchy(bob, ids.S!, "?max_depth=0")).rooms)).toEqual(["S"]);
    const { seen } = await walkAll(bob, "?limit=2&max_depth=2");
    expect(seen).toEqual(["S", "A", "S2", "S3", "C", "D", "B"]);
  });

  it("refuses foreign tokens and bad parameters", async () => {
    const page = await hierarchy(bob, ids.S!, "?limit=2");
    const expectInvalid = async (query: string, who = bob, roomId = ids.S!) => {
      const res = await t.call("GET", path(roomId, query), { token: who.access_token });
      expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([400, "M_INVALID_PARAM"]);
    };
    await expectInvalid(`?limit=2&suggested_only=true&from=${enc(page.next_batch)}`);
    await expectInvalid(`?limit=2&max_depth=3&from=${enc(page.next_batch)}`);
    await expectInvalid(`?limit=2&from=${enc(page.next_batch)}`, alice);
    await expectInvalid(`?limit=2&from=${enc(page.next_batch)}`, bob, ids.S2);
    await expectInvalid("?from=not-a-token");
    await expectInvalid("?limit=0");
    await expectInvalid("?max_depth=-1");
    await expectInvalid("?suggested_only=perhaps");
    const priv = await t.call("GET", path(ids.P!), { token: bob.access_token });
    expect([priv.status, priv.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const unknown = await t.call("GET", path("!nowhere:weft.test"), { token: bob.access_token });
    expect([unknown.status, unknown.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
  });

  it("a restricted room is shown to, and joinable by, members of the space", async () => {
    const before = await t.call("POST", `${V3}/join/${enc(ids.R!)}`, { token: bob.access_token, body: {} });
    expect([before.status, before.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect(names((await hierarchy(bob, ids.S!)).rooms)).not.toContain("R");

    const joinS = await t.call("POST", `${V3}/join/${enc(ids.S!)}`, { token: bob.access_token, body: {} });
    expect(joinS.status).toBe(200);
    const rooms = (await hierarchy(bob, ids.S!)).rooms;
    const r = rooms.find((x: any) => x.room_id === ids.R);
    expect(r).toMatchObject({ join_rule: "restricted", allowed_room_ids: [ids.S] });

    const join = await t.call("POST", `${V3}/join/${enc(ids.R!)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    const member = await t.call("GET", `${V3}/rooms/${enc(ids.R!)}/state/m.room.member/${enc(bob.user_id)}`, { token: bob.access_token });
    expect(member.json).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });
  });

  it("knock_restricted through the space as well", async () => {
    const kr = await createRoom(t, alice, {
      room_version: "10",
      initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "knock_restricted", allow: [{ type: "m.room_membership", room_id: ids.S2 }] } }],
    });
    const refused = await t.call("POST", `${V3}/join/${enc(kr)}`, { token: bob.access_token, body: {} });
    expect([refused.status, refused.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect((await t.call("POST", `${V3}/join/${enc(ids.S2!)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    const join = await t.call("POST", `${V3}/join/${enc(kr)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
  });
  it("a room's malformed avatar, alias, encryption algorithm or allowed room is left out of its summary", async () => {
    // Room state may hold anything; the spec's RoomSummary gives these fields a format (an mxc URI, a room
    // alias, the one megolm algorithm, room ids): a value that breaks it is not shown, the room still is.
    const odd = await createRoom(t, alice, {
      preset: "public_chat",
      name: "Odd",
      room_version: "10",
      initial_state: [
        { type: "m.room.avatar", state_key: "", content: { url: "javascript:alert(1)" } },
        { type: "m.room.encryption", state_key: "", content: { algorithm: "x.unknown" } },
        { type: "m.room.join_rules", state_key: "", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: "not-a-room" }, { type: "m.room_membership", room_id: ids.S }] } },
      ],
    });
    const s = await t.call("GET", `${V1}/rooms/${enc(odd)}/hierarchy`, { token: alice.access_token });
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    expectMatchesSpec(s, "GET", `${V1}/rooms/{roomId}/hierarchy`);
    const entry = (s.json as { rooms: Record<string, unknown>[] }).rooms[0]!;
    expect(entry).toMatchObject({ room_id: odd, name: "Odd", join_rule: "restricted", allowed_room_ids: [ids.S] });
    expect(entry).not.toHaveProperty("avatar_url");
    expect(entry).not.toHaveProperty("encryption");
  });
});
