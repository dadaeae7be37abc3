// The room directory over HTTP on SQLite and PostgreSQL: aliases (PUT/GET/DELETE /directory/room, GET
// /rooms/{roomId}/aliases) and who may change them, joining and knocking by alias, createRoom's
// room_alias_name, m.room.canonical_alias checks (M_BAD_ALIAS), directory visibility, and /publicRooms
// (ordering, filters, pagination both ways, auth) — each with its errors, which leave storage unchanged.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { writeAppServiceFile } from "../helpers/appservice.ts";
import { appendEvent } from "../../src/domain/rooms/append.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const aliasPath = (alias: string) => `${V3}/directory/room/${enc(alias)}`;
const listPath = (roomId: string) => `${V3}/directory/list/room/${enc(roomId)}`;

describe.each(backends())("room directory on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let carol: Session;
  let admin: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    carol = await registerUser(t, "carol");
    await registerUser(t, "root");
    await t.hs.services.db.user.update({ where: { userId: "@root:weft.test" }, data: { isAdmin: true } });
    admin = await loginUser(t, "root");
  });
  afterAll(async () => {
    await t?.close();
  });

  async function join(who: Session, roomIdOrAlias: string): Promise<string> {
    const res = await t.call("POST", `${V3}/join/${enc(roomIdOrAlias)}`, { token: who.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.room_id;
  }

  async function putAlias(who: Session | undefined, alias: string, body: unknown) {
    return t.call("PUT", aliasPath(alias), { token: who?.access_token, body });
  }

  async function stateContent(roomId: string, type: string, who: Session = alice): Promise<any> {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/`, { token: who.access_token });
    if (res.status === 404) return undefined;
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }

  async function counts() {
    const db = t.hs.services.db;
    return { rooms: await db.room.count(), events: await db.event.count(), aliases: await db.roomAlias.count() };
  }

  describe("aliases", () => {
    it("creates, resolves, lists and refuses a second mapping with 409 M_UNKNOWN", async () => {
      const roomId = await createRoom(t, alice, { preset: "public_chat" });
      const res = await putAlias(alice, "#garden:weft.test", { room_id: roomId });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "PUT", aliasPath("#garden:weft.test"));

      const get = await t.call("GET", aliasPath("#garden:weft.test"));
      expect(get.status).toBe(200);
      expectMatchesSpec(get, "GET", aliasPath("#garden:weft.test"));
      expect(get.json).toEqual({ room_id: roomId, servers: ["weft.test"] });

      const again = await putAlias(alice, "#garden:weft.test", { room_id: roomId });
      expect(again.status).toBe(409);
      expect(again.json.errcode).toBe("M_UNKNOWN");

      await putAlias(alice, "#garden2:weft.test", { room_id: roomId });
      const list = await t.call("GET", `${V3}/rooms/${enc(roomId)}/aliases`, { token: alice.access_token });
      expect(list.status).toBe(200);
      expectMatchesSpec(list, "GET", `${V3}/rooms/${enc(roomId)}/aliases`);
      expect(list.json.aliases.sort()).toEqual(["#garden2:weft.test", "#garden:weft.test"]);
    });

    it("refuses bad input to PUT with the spec's errors and stores nothing", async () => {
      const roomId = await createRoom(t, alice);
      const before = await counts();
      const cases: [unknown, string, Session | undefined, number, string][] = [
        [{ room_id: roomId }, "garden", alice, 400, "M_INVALID_PARAM"],
        [{ room_id: roomId }, "#nocolon", alice, 400, "M_INVALID_PARAM"],
        [{ room_id: roomId }, "#white space:weft.test", alice, 400, "M_INVALID_PARAM"],
        [{ room_id: roomId }, "#:weft.test", alice, 400, "M_INVALID_PARAM"],
        [{ room_id: roomId }, "#elsewhere:other.example", alice, 400, "M_INVALID_PARAM"],
        [{}, "#x1:weft.test", alice, 400, "M_MISSING_PARAM"],
        [{ room_id: 5 }, "#x2:weft.test", alice, 400, "M_BAD_JSON"],
        [{ room_id: "not-a-room" }, "#x3:weft.test", alice, 400, "M_INVALID_PARAM"],
        [{ room_id: "!unknown:weft.test" }, "#x4:weft.test", alice, 404, "M_NOT_FOUND"],
        [{ room_id: roomId }, "#x5:weft.test", bob, 403, "M_FORBIDDEN"],
        [{ room_id: roomId }, "#x6:weft.test", undefined, 401, "M_MISSING_TOKEN"],
      ];
      for (const [body, alias, who, status, errcode] of cases) {
        const res = await putAlias(who, alias, body);
        expect(res.status, `${alias} ${JSON.stringify(res.json)}`).toBe(status);
        expect(res.json.errcode).toBe(errcode);
      }
      const notJson = await t.call("PUT", aliasPath("#x7:weft.test"), { token: alice.access_token, raw: "{", headers: { "content-type": "application/json" } });
      expect(notJson.status).toBe(400);
      expect(await counts()).toEqual(before);
    });

    it("GET: 404 for unknown aliases, 502 for another server's that cannot be asked, 400 for malformed ones", async () => {
      for (const [alias, status, errcode] of [
        ["#nothing:weft.test", 404, "M_NOT_FOUND"],
        // Asked of other.example over federation (test/federation/directory-query.test.ts), which does not resolve here.
        ["#remote:other.example", 502, "M_UNKNOWN"],
        ["nothing", 400, "M_INVALID_PARAM"],
      ] as const) {
        const res = await t.call("GET", aliasPath(alias));
        expect(res.status).toBe(status);
        expect(res.json.errcode).toBe(errcode);
      }
    });

    it("GET /rooms/{roomId}/aliases: members and world_readable readers only", async () => {
      const roomId = await createRoom(t, alice, { preset: "public_chat" });
      await putAlias(alice, "#listed:weft.test", { room_id: roomId });
      const asBob = await t.call("GET", `${V3}/rooms/${enc(roomId)}/aliases`, { token: bob.access_token });
      expect(asBob.status).toBe(403);
      expect(asBob.json.errcode).toBe("M_FORBIDDEN");
      const unknown = await t.call("GET", `${V3}/rooms/${enc("!nope:weft.test")}/aliases`, { token: bob.access_token });
      expect(unknown.status).toBe(403);
      const bad = await t.call("GET", `${V3}/rooms/${enc("nope")}/aliases`, { token: bob.access_token });
      expect(bad.status).toBe(400);
      expect(bad.json.errcode).toBe("M_INVALID_PARAM");
      const noToken = await t.call("GET", `${V3}/rooms/${enc(roomId)}/aliases`);
      expect(noToken.status).toBe(401);

      const hv = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.history_visibility/`, { token: alice.access_token, body: { history_visibility: "world_readable" } });
      expect(hv.status).toBe(200);
      const readable = await t.call("GET", `${V3}/rooms/${enc(roomId)}/aliases`, { token: bob.access_token });
      expect(readable.status).toBe(200);
      expect(readable.json.aliases).toEqual(["#listed:weft.test"]);
    });

    it("DELETE: the alias's creator, a room admin or a server admin; others get 403", async () => {
      const roomId = await createRoom(t, alice, { preset: "public_chat" });
      await join(bob, roomId);
      expect((await putAlias(bob, "#bobs:weft.test", { room_id: roomId })).status).toBe(200);
      expect((await putAlias(alice, "#alices:weft.test", { room_id: roomId })).status).toBe(200);
      expect((await putAlias(alice, "#third:weft.test", { room_id: roomId })).status).toBe(200);
      await join(carol, roomId);

      // carol: a member without power, not the creator of the alias.
      const refused = await t.call("DELETE", aliasPath("#alices:weft.test"), { token: carol.access_token });
      expect(refused.status).toBe(403);
      expect(refused.json.errcode).toBe("M_FORBIDDEN");
      // bob (power 0) deletes his own alias; alice (room admin) deletes one she did not make.
      expect((await putAlias(bob, "#bobs2:weft.test", { room_id: roomId })).status).toBe(200);
      const own = await t.call("DELETE", aliasPath("#bobs:weft.test"), { token: bob.access_token });
      expect(own.status).toBe(200);
      expectMatchesSpec(own, "DELETE", aliasPath("#bobs:weft.test"));
      expect((await t.call("DELETE", aliasPath("#bobs2:weft.test"), { token: alice.access_token })).status).toBe(200);
      // A server admin, not in the room.
      expect((await t.call("DELETE", aliasPath("#third:weft.test"), { token: admin.access_token })).status).toBe(200);
      expect((await t.call("GET", aliasPath("#bobs:weft.test"))).status).toBe(404);
      expect((await t.call("GET", aliasPath("#alices:weft.test"))).status).toBe(200);

      for (const [alias, status, errcode] of [
        ["#bobs:weft.test", 404, "M_NOT_FOUND"],
        ["#x:other.example", 400, "M_INVALID_PARAM"],
        ["bad", 400, "M_INVALID_PARAM"],
      ] as const) {
        const res = await t.call("DELETE", aliasPath(alias), { token: alice.access_token });
        expect(res.status).toBe(status);
        expect(res.json.errcode).toBe(errcode);
      }
      expect((await t.call("DELETE", aliasPath("#alices:weft.test"))).status).toBe(401);
    });

    it("deleting an alias takes it out of m.room.canonical_alias", async () => {
      const roomId = await createRoom(t, alice);
      await putAlias(alice, "#main:weft.test", { room_id: roomId });
      await putAlias(alice, "#alt:weft.test", { room_id: roomId });
      // Another server's alias, as its server confirmed when the event was sent (other.example does not resolve here).
      await appendEvent(t.hs.services, roomId, { type: "m.room.canonical_alias", stateKey: "", sender: alice.user_id, content: { alias: "#main:weft.test", alt_aliases: ["#alt:weft.test", "#far:other.example"] } });
      expect((await t.call("DELETE", aliasPath("#alt:weft.test"), { token: alice.access_token })).status).toBe(200);
      expect(await stateContent(roomId, "m.room.canonical_alias")).toEqual({ alias: "#main:weft.test", alt_aliases: ["#far:other.example"] });
      expect((await t.call("DELETE", aliasPath("#main:weft.test"), { token: alice.access_token })).status).toBe(200);
      expect(await stateContent(roomId, "m.room.canonical_alias")).toEqual({ alt_aliases: ["#far:other.example"] });
    });

    it("joins and knocks by alias", async () => {
      const open = await createRoom(t, alice, { preset: "public_chat" });
      await putAlias(alice, "#open:weft.test", { room_id: open });
      expect(await join(bob, "#open:weft.test")).toBe(open);
      const members = await t.call("GET", `${V3}/rooms/${enc(open)}/joined_members`, { token: bob.access_token });
      expect(Object.keys(members.json.joined)).toContain(bob.user_id);

      const knocky = await createRoom(t, alice, { initial_state: [{ type: "m.room.join_rules", content: { join_rule: "knock" } }] });
      await putAlias(alice, "#knocky:weft.test", { room_id: knocky });
      const knock = await t.call("POST", `${V3}/knock/${enc("#knocky:weft.test")}`, { token: carol.access_token, body: {} });
      expect(knock.status, JSON.stringify(knock.json)).toBe(200);
      expect(knock.json.room_id).toBe(knocky);

      const missing = await t.call("POST", `${V3}/join/${enc("#missing:weft.test")}`, { token: bob.access_token, body: {} });
      expect(missing.status).toBe(404);
      expect(missing.json.errcode).toBe("M_NOT_FOUND");
    });
  });

  describe("application service alias namespaces", () => {
    let ta: TestServer;
    const asToken = "dir-as-token";
    beforeAll(async () => {
      const file = writeAppServiceFile({ id: "dirbridge", asToken, hsToken: "dir-hs-token", senderLocalpart: "dirbot", userRegex: "@dirb_.*:weft\\.test", aliasRegex: "#dirb_.*:weft\\.test" });
      ta = await startTestServer({ backend, config: { app_service_config_files: [file] } });
    });
    afterAll(async () => {
      await ta?.close();
    });

    it("an exclusive namespace is closed to users (M_EXCLUSIVE); the service makes aliases only in its own", async () => {
      const user = await registerUser(ta, "plain");
      const roomId = await createRoom(ta, user);
      const before = await ta.hs.services.db.roomAlias.count();
      const refused = await ta.call("PUT", aliasPath("#dirb_x:weft.test"), { token: user.access_token, body: { room_id: roomId } });
      expect(refused.status).toBe(400);
      expect(refused.json.errcode).toBe("M_EXCLUSIVE");
      const rooms = await ta.hs.services.db.room.count();
      const create = await ta.call("POST", `${V3}/createRoom`, { token: user.access_token, body: { room_alias_name: "dirb_y" } });
      expect(create.status).toBe(400);
      expect(create.json.errcode).toBe("M_EXCLUSIVE");
      expect(await ta.hs.services.db.room.count()).toBe(rooms);

      const asRoom = await createRoom(ta, { access_token: asToken } as Session);
      const own = await ta.call("PUT", aliasPath("#dirb_x:weft.test"), { token: asToken, body: { room_id: asRoom } });
      expect(own.status, JSON.stringify(own.json)).toBe(200);
      const outside = await ta.call("PUT", aliasPath("#elsewhere:weft.test"), { token: asToken, body: { room_id: asRoom } });
      expect(outside.status).toBe(400); // as Synapse: "This application service has not reserved this kind of alias"
      expect(outside.json.errcode).toBe("M_EXCLUSIVE");
      expect(await ta.hs.services.db.roomAlias.count()).toBe(before + 1);
    });
  });

  describe("m.room.canonical_alias", () => {
    it("accepts aliases of the room, refuses aliases elsewhere with M_BAD_ALIAS and non-aliases with M_INVALID_PARAM", async () => {
      const roomId = await createRoom(t, alice);
      const other = await createRoom(t, alice);
      await putAlias(alice, "#mine:weft.test", { room_id: roomId });
      await putAlias(alice, "#theirs:weft.test", { room_id: other });
      const put = (content: unknown) => t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.canonical_alias/`, { token: alice.access_token, body: content });

      const before = await counts();
      for (const [content, errcode] of [
        [{ alias: "#theirs:weft.test" }, "M_BAD_ALIAS"],
        [{ alias: "#nobody:weft.test" }, "M_BAD_ALIAS"],
        [{ alias: "not an alias" }, "M_INVALID_PARAM"],
        [{ alias: 7 }, "M_INVALID_PARAM"],
        [{ alt_aliases: ["#mine:weft.test", "#theirs:weft.test"] }, "M_BAD_ALIAS"],
        [{ alt_aliases: "#mine:weft.test" }, "M_INVALID_PARAM"],
      ] as const) {
        const res = await put(content);
        expect(res.status, JSON.stringify(content)).toBe(400);
        expect(res.json.errcode).toBe(errcode);
      }
      expect(await counts()).toEqual(before);

      // Another server's alias is asked of that server (test/federation/directory-weft.test.ts): one that
      // cannot answer fails the request as the alias query does, storing nothing.
      const unreachable = await put({ alias: "#mine:weft.test", alt_aliases: ["#remote:other.example"] });
      expect([unreachable.status, unreachable.json.errcode]).toEqual([502, "M_UNKNOWN"]);
      expect(await counts()).toEqual(before);
      const ok = await put({ alias: "#mine:weft.test", alt_aliases: ["#mine:weft.test"] });
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      expectMatchesSpec(ok, "PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.canonical_alias/`);
      expect((await put({})).status).toBe(200);
    });

    it("does not check again aliases already in the event", async () => {
      const roomId = await createRoom(t, alice);
      await putAlias(alice, "#kept:weft.test", { room_id: roomId });
      const path = `${V3}/rooms/${enc(roomId)}/state/m.room.canonical_alias/`;
      expect((await t.call("PUT", path, { token: alice.access_token, body: { alias: "#kept:weft.test" } })).status).toBe(200);
      // Another server's alias, as its server confirmed when the event was sent (other.example does not resolve here).
      await appendEvent(t.hs.services, roomId, { type: "m.room.canonical_alias", stateKey: "", sender: alice.user_id, content: { alias: "#kept:weft.test", alt_aliases: ["#x:other.example"] } });
      // The mapping goes away behind the event's back (an admin tool, a direct database edit...).
      await t.hs.services.directory.deleteAlias("#kept:weft.test");
      // Neither is checked again: not the local one, and other.example is not asked.
      const res = await t.call("PUT", path, { token: alice.access_token, body: { alias: "#kept:weft.test", alt_aliases: ["#x:other.example"] } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    });
  });

  describe("createRoom room_alias_name", () => {
    it("creates the alias and the canonical alias event", async () => {
      const roomId = await createRoom(t, alice, { room_alias_name: "lobby", preset: "public_chat" });
      const get = await t.call("GET", aliasPath("#lobby:weft.test"));
      expect(get.json.room_id).toBe(roomId);
      expect(await stateContent(roomId, "m.room.canonical_alias")).toEqual({ alias: "#lobby:weft.test" });
      expect(await join(bob, "#lobby:weft.test")).toBe(roomId);
    });

    it("a taken name is 400 M_ROOM_IN_USE, a malformed one M_INVALID_PARAM; nothing is stored", async () => {
      await createRoom(t, alice, { room_alias_name: "taken" });
      const before = await counts();
      for (const [name, errcode] of [
        ["taken", "M_ROOM_IN_USE"],
        ["a:b", "M_INVALID_PARAM"],
        ["with space", "M_INVALID_PARAM"],
        ["", "M_INVALID_PARAM"],
        ["x".repeat(300), "M_INVALID_PARAM"],
      ] as const) {
        const res = await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { room_alias_name: name, name: "dup" } });
        expect(res.status, name).toBe(400);
        expect(res.json.errcode).toBe(errcode);
      }
      expect(await counts()).toEqual(before);
    });

    it("two concurrent requests for one name: one room, the other M_ROOM_IN_USE", async () => {
      const before = await counts();
      const results = await Promise.all(
        [alice, bob].map((who) => t.call("POST", `${V3}/createRoom`, { token: who.access_token, body: { room_alias_name: "race" } })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(results.find((r) => r.status === 400)!.json.errcode).toBe("M_ROOM_IN_USE");
      const after = await counts();
      expect(after.rooms).toBe(before.rooms + 1);
      expect(after.aliases).toBe(before.aliases + 1);
    });
  });

  describe("directory visibility", () => {
    it("GET is unauthenticated; PUT needs the room's admin power or a server admin", async () => {
      const roomId = await createRoom(t, alice, { preset: "public_chat" });
      await join(bob, roomId);
      const get = await t.call("GET", listPath(roomId));
      expect(get.status).toBe(200);
      expectMatchesSpec(get, "GET", listPath(roomId));
      expect(get.json).toEqual({ visibility: "private" });

      const byBob = await t.call("PUT", listPath(roomId), { token: bob.access_token, body: { visibility: "public" } });
      expect(byBob.status).toBe(403);
      expect(byBob.json.errcode).toBe("M_FORBIDDEN");
      const byCarol = await t.call("PUT", listPath(roomId), { token: carol.access_token, body: { visibility: "public" } });
      expect(byCarol.status).toBe(403);
      expect((await t.call("PUT", listPath(roomId), { body: { visibility: "public" } })).status).toBe(401);

      const put = await t.call("PUT", listPath(roomId), { token: alice.access_token, body: { visibility: "public" } });
      expect(put.status).toBe(200);
      expectMatchesSpec(put, "PUT", listPath(roomId));
      expect((await t.call("GET", listPath(roomId))).json.visibility).toBe("public");
      expect((await t.call("PUT", listPath(roomId), { token: admin.access_token, body: { visibility: "private" } })).status).toBe(200);
      expect((await t.call("GET", listPath(roomId))).json.visibility).toBe("private");
      // visibility defaults to public.
      expect((await t.call("PUT", listPath(roomId), { token: alice.access_token, body: {} })).status).toBe(200);
      expect((await t.call("GET", listPath(roomId))).json.visibility).toBe("public");
    });

    it("errors: unknown room 404, bad visibility 400, malformed room id 400", async () => {
      const roomId = await createRoom(t, alice);
      expect((await t.call("GET", listPath("!unknown:weft.test"))).status).toBe(404);
      const put404 = await t.call("PUT", listPath("!unknown:weft.test"), { token: alice.access_token, body: { visibility: "public" } });
      expect(put404.status).toBe(404);
      expect(put404.json.errcode).toBe("M_NOT_FOUND");
      const bad = await t.call("PUT", listPath(roomId), { token: alice.access_token, body: { visibility: "secret" } });
      expect(bad.status).toBe(400);
      expect(bad.json.errcode).toBe("M_INVALID_PARAM");
      expect((await t.call("GET", listPath("nope"))).json.errcode).toBe("M_INVALID_PARAM");
      expect((await t.call("GET", listPath(roomId))).json.visibility).toBe("private");
    });

    it("createRoom with visibility public publishes the room", async () => {
      const roomId = await createRoom(t, alice, { visibility: "public" });
      expect((await t.call("GET", listPath(roomId))).json.visibility).toBe("public");
    });
  });

  describe("publicRooms", () => {
    let t2: TestServer;
    let ids: { big: string; mid: string; space: string };
    let users: Session[];

    beforeAll(async () => {
      // A server of its own, so the directory holds exactly the rooms this block publishes.
      t2 = await startTestServer({ backend, config: { allow_public_rooms_without_auth: false } });
      users = [];
      for (const name of ["u1", "u2", "u3", "u4"]) users.push(await registerUser(t2, name));
      const [u1, u2, u3, u4] = users as [Session, Session, Session, Session];
      const big = await createRoom(t2, u1, { visibility: "public", name: "Big Garden", topic: "Roses and TULIPS", room_alias_name: "biggarden" });
      const mid = await createRoom(t2, u1, { visibility: "public", name: "Middle", topic: "chat" });
      const space = await createRoom(t2, u1, { visibility: "public", name: "A space", creation_content: { type: "m.space" } });
      await createRoom(t2, u1, { visibility: "private", name: "Hidden garden" });
      for (const u of [u2, u3, u4]) await t2.call("POST", `${V3}/join/${enc(big)}`, { token: u.access_token, body: {} });
      for (const u of [u2, u3]) await t2.call("POST", `${V3}/join/${enc(mid)}`, { token: u.access_token, body: {} });
      await t2.call("PUT", `${V3}/rooms/${enc(big)}/state/m.room.avatar/`, { token: u1.access_token, body: { url: "mxc://weft.test/abc" } });
      await t2.call("PUT", `${V3}/rooms/${enc(mid)}/state/m.room.history_visibility/`, { token: u1.access_token, body: { history_visibility: "world_readable" } });
      ids = { big, mid, space };
    });
    afterAll(async () => {
      await t2?.close();
    });

    async function list(body?: Record<string, unknown>, query = ""): Promise<any> {
      const p = `${V3}/publicRooms${query}`;
      const res = body === undefined ? await t2.call("GET", p, { token: users[0]!.access_token }) : await t2.call("POST", p, { token: users[0]!.access_token, body });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, body === undefined ? "GET" : "POST", p);
      return res.json;
    }

    it("lists published rooms, most joined members first, with the chunk fields and no aliases", async () => {
      const res = await list();
      expect(res.chunk.map((c: any) => c.room_id)).toEqual([ids.big, ids.mid, ids.space]);
      expect(res.total_room_count_estimate).toBe(3);
      expect(res.next_batch).toBeUndefined();
      expect(res.prev_batch).toBeUndefined();
      expect(res.chunk[0]).toEqual({
        room_id: ids.big,
        name: "Big Garden",
        topic: "Roses and TULIPS",
        canonical_alias: "#biggarden:weft.test",
        num_joined_members: 4,
        world_readable: false,
        guest_can_join: false,
        avatar_url: "mxc://weft.test/abc",
        join_rule: "public",
      });
      expect(res.chunk[1]).toMatchObject({ num_joined_members: 3, world_readable: true });
      expect(res.chunk[2]).toMatchObject({ room_type: "m.space", num_joined_members: 1 });
      for (const c of res.chunk) expect(c).not.toHaveProperty("aliases");
    });

    it("pages forwards with next_batch and back with prev_batch", async () => {
      const p1 = await list(undefined, "?limit=1");
      expect(p1.chunk.map((c: any) => c.room_id)).toEqual([ids.big]);
      expect(p1.prev_batch).toBeUndefined();
      const p2 = await list(undefined, `?limit=1&since=${enc(p1.next_batch)}`);
      expect(p2.chunk.map((c: any) => c.room_id)).toEqual([ids.mid]);
      const p3 = await list({ limit: 1, since: p2.next_batch });
      expect(p3.chunk.map((c: any) => c.room_id)).toEqual([ids.space]);
      expect(p3.next_batch).toBeUndefined();
      const back = await list(undefined, `?limit=1&since=${enc(p3.prev_batch)}`);
      expect(back.chunk.map((c: any) => c.room_id)).toEqual([ids.mid]);
      const back2 = await list({ limit: 5, since: back.prev_batch });
      expect(back2.chunk.map((c: any) => c.room_id)).toEqual([ids.big]);
      expect(back2.prev_batch).toBeUndefined();
      expect(back2.next_batch).toBeDefined();
    });

    it("filters by search term (case-insensitive: name, topic, alias, room id) and room types", async () => {
      const ids_ = async (filter: unknown) => (await list({ filter })).chunk.map((c: any) => c.room_id);
      expect(await ids_({ generic_search_term: "garden" })).toEqual([ids.big]);
      expect(await ids_({ generic_search_term: "tulips" })).toEqual([ids.big]);
      expect(await ids_({ generic_search_term: "BIGGARDEN" })).toEqual([ids.big]);
      expect(await ids_({ generic_search_term: ids.mid.slice(1, 8) })).toEqual([ids.mid]);
      expect(await ids_({ generic_search_term: "100%" })).toEqual([]);
      expect(await ids_({ room_types: ["m.space"] })).toEqual([ids.space]);
      expect(await ids_({ room_types: [null] })).toEqual([ids.big, ids.mid]);
      expect(await ids_({ room_types: [null, "m.space"] })).toEqual([ids.big, ids.mid, ids.space]);
      expect(await ids_({ room_types: null })).toEqual([ids.big, ids.mid, ids.space]);
      expect(await ids_({ room_types: [] })).toEqual([]);
    });

    it("follows changes of state and unpublishing", async () => {
      const u1 = users[0]!;
      await t2.call("PUT", `${V3}/rooms/${enc(ids.space)}/state/m.room.name/`, { token: u1.access_token, body: { name: "Renamed space" } });
      expect((await list({ filter: { generic_search_term: "renamed" } })).chunk.map((c: any) => c.room_id)).toEqual([ids.space]);
      await t2.call("PUT", listPath(ids.space), { token: u1.access_token, body: { visibility: "private" } });
      expect((await list()).chunk.map((c: any) => c.room_id)).toEqual([ids.big, ids.mid]);
      await t2.call("PUT", listPath(ids.space), { token: u1.access_token, body: { visibility: "public" } });
    });

    it("server: our own name is the local list; an unreachable server is 502 as Synapse answers", async () => {
      expect((await list(undefined, "?server=weft.test")).chunk).toHaveLength(3);
      for (const method of ["GET", "POST"]) {
        const other = await t2.call(method, `${V3}/publicRooms?server=other.example`, { token: users[0]!.access_token, body: method === "POST" ? {} : undefined });
        expect([other.status, other.json.errcode], method).toEqual([502, "M_UNKNOWN"]);
        expect(other.json.error).toBe("Failed to fetch room list");
      }
      // Case-sensitive: another spelling is another server.
      expect((await t2.call("GET", `${V3}/publicRooms?server=WEFT.test`, { token: users[0]!.access_token })).status).toBe(502);
      const bad = await t2.call("GET", `${V3}/publicRooms?server=${enc("not a server")}`, { token: users[0]!.access_token });
      expect(bad.status).toBe(400);
      expect(bad.json.errcode).toBe("M_INVALID_PARAM");
    });

    it("errors: auth required by default, bad limit, since and filter", async () => {
      const anon = await t2.call("GET", `${V3}/publicRooms`);
      expect(anon.status).toBe(401);
      expect(anon.json.errcode).toBe("M_MISSING_TOKEN");
      expect((await t2.call("POST", `${V3}/publicRooms`, { body: {} })).status).toBe(401);
      const tok = users[0]!.access_token;
      for (const [method, p, body, errcode] of [
        ["GET", "?limit=-1", undefined, "M_INVALID_PARAM"],
        ["GET", "?limit=x", undefined, "M_INVALID_PARAM"],
        ["GET", "?since=garbage", undefined, "M_INVALID_PARAM"],
        ["POST", "", { since: "fnotbase64json" }, "M_INVALID_PARAM"],
        ["POST", "", { limit: "3" }, "M_BAD_JSON"],
        ["POST", "", { filter: "x" }, "M_BAD_JSON"],
        ["POST", "", { filter: { generic_search_term: 3 } }, "M_BAD_JSON"],
        ["POST", "", { filter: { room_types: [3] } }, "M_BAD_JSON"],
      ] as const) {
        const res = await t2.call(method, `${V3}/publicRooms${p}`, { token: tok, body });
        expect(res.status, `${method} ${p} ${JSON.stringify(body)}`).toBe(400);
        expect(res.json.errcode).toBe(errcode);
      }
    });

    it("with allow_public_rooms_without_auth, GET needs no token", async () => {
      const t3 = await startTestServer({ backend: "sqlite", config: { allow_public_rooms_without_auth: true } });
      try {
        const u = await registerUser(t3, "solo");
        const roomId = await createRoom(t3, u, { visibility: "public" });
        const res = await t3.call("GET", `${V3}/publicRooms`);
        expect(res.status).toBe(200);
        expect(res.json.chunk.map((c: any) => c.room_id)).toEqual([roomId]);
        expect((await t3.call("POST", `${V3}/publicRooms`, { body: {} })).status).toBe(401);
      } finally {
        await t3.close();
      }
    });
  });
});
