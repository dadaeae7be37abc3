// POST /createRoom over HTTP on SQLite and PostgreSQL: presets (join rules, history visibility, guest
// access, power levels), visibility, name/topic/initial_state/power_level_content_override/creation_content,
// every room version 1–12, invites with is_direct; and bad input, after which no room and no event exist.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const VERSIONS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"];

describe.each(backends())("createRoom on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let carol: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    carol = await registerUser(t, "carol");
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = (body: Record<string, unknown>, who: Session = alice) => createRoom(t, who, body);

  /** The content of one state event (undefined when there is none). */
  async function stateContent(roomId: string, type: string, stateKey = "", who: Session = alice): Promise<any> {
    const p = `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(stateKey)}`;
    const res = await t.call("GET", p, { token: who.access_token });
    if (res.status === 404) {
      expect(res.json.errcode).toBe("M_NOT_FOUND");
      return undefined;
    }
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", p);
    return res.json;
  }

  async function counts(): Promise<{ rooms: number; events: number }> {
    const db = t.hs.services.db;
    return { rooms: await db.room.count(), events: await db.event.count() };
  }

  it("private_chat (the default for private rooms): invite only, shared history, guests can join", async () => {
    for (const body of [{ preset: "private_chat" }, {}, { visibility: "private" }]) {
      const roomId = await create(body);
      expect(await stateContent(roomId, "m.room.join_rules")).toEqual({ join_rule: "invite" });
      expect(await stateContent(roomId, "m.room.history_visibility")).toEqual({ history_visibility: "shared" });
      expect(await stateContent(roomId, "m.room.guest_access")).toEqual({ guest_access: "can_join" });
      const pl = await stateContent(roomId, "m.room.power_levels");
      expect(pl.users).toEqual({ [alice.user_id]: 100 });
      expect(pl).toMatchObject({ users_default: 0, events_default: 0, state_default: 50, ban: 50, kick: 50, redact: 50, invite: 0 });
      expect(pl.events).toMatchObject({ "m.room.name": 50, "m.room.power_levels": 100, "m.room.history_visibility": 100, "m.room.canonical_alias": 50, "m.room.avatar": 50, "m.room.tombstone": 100, "m.room.server_acl": 100, "m.room.encryption": 100 });
      expect(await stateContent(roomId, "m.room.member", alice.user_id)).toMatchObject({ membership: "join" });
      expect((await t.hs.services.rooms.store.getRoom(roomId))?.isPublic).toBe(false);
    }
  });

  it("public_chat (the default for public rooms): public join rule, shared history, no guest access", async () => {
    for (const body of [{ preset: "public_chat" }, { visibility: "public" }]) {
      const roomId = await create(body);
      expect(await stateContent(roomId, "m.room.join_rules")).toEqual({ join_rule: "public" });
      expect(await stateContent(roomId, "m.room.history_visibility")).toEqual({ history_visibility: "shared" });
      const ga = await stateContent(roomId, "m.room.guest_access");
      expect(ga === undefined || ga.guest_access === "forbidden").toBe(true);
      const pl = await stateContent(roomId, "m.room.power_levels");
      expect(pl.users).toEqual({ [alice.user_id]: 100 });
      // As in Synapse, only moderators may invite to a public room.
      expect(pl.invite).toBe(50);
    }
  });

  it("trusted_private_chat gives every invitee the creator's power level", async () => {
    const roomId = await create({ preset: "trusted_private_chat", invite: [bob.user_id, carol.user_id] });
    expect(await stateContent(roomId, "m.room.join_rules")).toEqual({ join_rule: "invite" });
    expect(await stateContent(roomId, "m.room.history_visibility")).toEqual({ history_visibility: "shared" });
    expect(await stateContent(roomId, "m.room.guest_access")).toEqual({ guest_access: "can_join" });
    expect((await stateContent(roomId, "m.room.power_levels")).users).toEqual({ [alice.user_id]: 100, [bob.user_id]: 100, [carol.user_id]: 100 });
    expect(await stateContent(roomId, "m.room.member", bob.user_id)).toMatchObject({ membership: "invite" });
    expect(await stateContent(roomId, "m.room.member", carol.user_id)).toMatchObject({ membership: "invite" });
  });

  it("v12 trusted_private_chat makes the invitees additional creators instead of listing them at 100", async () => {
    const roomId = await create({ room_version: "12", preset: "trusted_private_chat", invite: [bob.user_id, carol.user_id], creation_content: { additional_creators: [carol.user_id] } });
    const createContent = await stateContent(roomId, "m.room.create");
    expect([...createContent.additional_creators].sort()).toEqual([bob.user_id, carol.user_id].sort());
    expect((await stateContent(roomId, "m.room.power_levels")).users).toEqual({});
    // As a creator bob may change the power levels once he has joined.
    const j = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    expect(j.status, JSON.stringify(j.json)).toBe(200);
    const put = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: bob.access_token, body: { users: {}, users_default: 0, state_default: 50, events: { "m.room.tombstone": 150 } } });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
  });

  it("v12: a creator in the power levels' users, malformed additional_creators or a second create event is a 400 (as Synapse)", async () => {
    const before = await counts();
    for (const additional_creators of ["not-an-array", ["@foo:example.com", 42], ["@foo:example.com", "not-a-user-id"], ["@invalid:dom$ain$.com"]]) {
      const res = await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { room_version: "12", creation_content: { additional_creators } } });
      expect(res.status, JSON.stringify(additional_creators)).toBe(400);
    }
    const override = await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { room_version: "12", power_level_content_override: { users: { [alice.user_id]: 100 } } } });
    expect(override.status, JSON.stringify(override.json)).toBe(400);
    expect(await counts()).toEqual(before);

    const roomId = await create({ room_version: "12", preset: "public_chat", creation_content: { additional_creators: [bob.user_id] } });
    for (const who of [alice, bob]) {
      const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: alice.access_token, body: { users: { [who.user_id]: 100 } } });
      expect(res.status, JSON.stringify(res.json)).toBe(400);
    }
    for (const version of ["11", "12"]) {
      const room = await create({ room_version: version });
      const res = await t.call("PUT", `${V3}/rooms/${enc(room)}/state/m.room.create/`, { token: alice.access_token, body: { room_version: version, entropy: 100 } });
      expect([res.status, res.json.errcode], version).toEqual([400, "M_INVALID_PARAM"]);
    }
  });

  it("visibility public marks the room public; a preset may differ from the visibility", async () => {
    const pub = await create({ visibility: "public", preset: "private_chat" });
    expect((await t.hs.services.rooms.store.getRoom(pub))?.isPublic).toBe(true);
    expect(await stateContent(pub, "m.room.join_rules")).toEqual({ join_rule: "invite" });
    const priv = await create({ visibility: "private", preset: "public_chat" });
    expect((await t.hs.services.rooms.store.getRoom(priv))?.isPublic).toBe(false);
    expect(await stateContent(priv, "m.room.join_rules")).toEqual({ join_rule: "public" });
  });

  it("sets name, topic, initial_state, the power level override and creation content", async () => {
    const roomId = await create({
      name: "The Room",
      topic: "All about it",
      preset: "public_chat",
      initial_state: [
        { type: "m.room.history_visibility", content: { history_visibility: "world_readable" } },
        { type: "m.room.guest_access", state_key: "", content: { guest_access: "can_join" } },
        { type: "com.example.state", state_key: "k", content: { a: 1 } },
      ],
      power_level_content_override: { events_default: 10, users: { [alice.user_id]: 100, [bob.user_id]: 50 } },
      creation_content: { type: "m.space", "m.federate": false },
    });
    expect(await stateContent(roomId, "m.room.name")).toEqual({ name: "The Room" });
    // m.topic is a TopicContentBlock (spec v1.15): { "m.text": [TextualRepresentation] }.
    expect(await stateContent(roomId, "m.room.topic")).toEqual({ topic: "All about it", "m.topic": { "m.text": [{ body: "All about it", mimetype: "text/plain" }] } });
    expect(await stateContent(roomId, "m.room.history_visibility")).toEqual({ history_visibility: "world_readable" });
    expect(await stateContent(roomId, "m.room.guest_access")).toEqual({ guest_access: "can_join" });
    expect(await stateContent(roomId, "com.example.state", "k")).toEqual({ a: 1 });
    const pl = await stateContent(roomId, "m.room.power_levels");
    expect(pl.events_default).toBe(10);
    expect(pl.users).toEqual({ [alice.user_id]: 100, [bob.user_id]: 50 });
    expect(pl.state_default).toBe(50); // the override replaces keys, not the whole content
    const createContent = await stateContent(roomId, "m.room.create");
    expect(createContent).toMatchObject({ type: "m.space", "m.federate": false, room_version: "11" });

    // The whole state, as the creator sees it, in the spec's shape.
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: alice.access_token });
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/rooms/${enc(roomId)}/state`);
    const types = (res.json as any[]).map((e) => `${e.type}|${e.state_key}`).sort();
    expect(types).toEqual(
      [
        "com.example.state|k", "m.room.create|", "m.room.guest_access|", "m.room.history_visibility|", "m.room.join_rules|",
        `m.room.member|${alice.user_id}`, "m.room.name|", "m.room.power_levels|", "m.room.topic|",
      ].sort(),
    );
  });

  it("initial_state replaces the preset's events instead of following them", async () => {
    const roomId = await create({
      preset: "private_chat",
      initial_state: [
        { type: "m.room.join_rules", content: { join_rule: "public" } },
        { type: "m.room.history_visibility", content: { history_visibility: "joined" } },
        { type: "m.room.guest_access", content: { guest_access: "forbidden" } },
      ],
    });
    const rows = await t.hs.services.db.event.findMany({ where: { roomId }, orderBy: { streamOrdering: "asc" }, select: { type: true } });
    expect(rows.map((r: { type: string }) => r.type)).toEqual([
      "m.room.create", "m.room.member", "m.room.power_levels", "m.room.join_rules", "m.room.history_visibility", "m.room.guest_access",
    ]);
    expect(await stateContent(roomId, "m.room.join_rules")).toEqual({ join_rule: "public" });
    expect(await stateContent(roomId, "m.room.history_visibility")).toEqual({ history_visibility: "joined" });
    expect(await stateContent(roomId, "m.room.guest_access")).toEqual({ guest_access: "forbidden" });
  });

  it("power levels in initial_state replace the generated ones", async () => {
    const custom = { users: { [alice.user_id]: 100 }, users_default: 10, events_default: 0, state_default: 60, ban: 70, kick: 70, redact: 70, invite: 10, events: {} };
    const roomId = await create({ initial_state: [{ type: "m.room.power_levels", content: custom }], name: "still allowed" });
    expect(await stateContent(roomId, "m.room.power_levels")).toEqual(custom);
    const rows = await t.hs.services.db.event.findMany({ where: { roomId, type: "m.room.power_levels" }, select: { eventId: true } });
    expect(rows).toHaveLength(1);
    expect(await stateContent(roomId, "m.room.name")).toEqual({ name: "still allowed" });
  });

  it("the request's name and topic win over initial_state", async () => {
    const roomId = await create({
      name: "Explicit",
      topic: "Explicit topic",
      initial_state: [
        { type: "m.room.name", content: { name: "From initial_state" } },
        { type: "m.room.topic", content: { topic: "From initial_state" } },
      ],
    });
    expect(await stateContent(roomId, "m.room.name")).toEqual({ name: "Explicit" });
    expect((await stateContent(roomId, "m.room.topic")).topic).toBe("Explicit topic");
  });

  it.each(VERSIONS)("creates a v%s room; the create event names its creator only before v11", async (v) => {
    const roomId = await create({ room_version: v, name: `v${v}` });
    expect((await t.hs.services.rooms.store.getRoom(roomId))?.roomVersion).toBe(v);
    const createContent = await stateContent(roomId, "m.room.create");
    expect(createContent.room_version).toBe(v);
    if (Number(v) <= 10) expect(createContent.creator).toBe(alice.user_id);
    else expect(createContent).not.toHaveProperty("creator");
    expect(await stateContent(roomId, "m.room.name")).toEqual({ name: `v${v}` });
    const pl = await stateContent(roomId, "m.room.power_levels");
    // v12 creators have unlimited power and are never listed in the power levels; tombstones then need
    // more than 100 (spec createRoom: above state_default, e.g. 150).
    if (v === "12") expect([pl.users, pl.events["m.room.tombstone"]]).toEqual([{}, 150]);
    else expect([pl.users, pl.events["m.room.tombstone"]]).toEqual([{ [alice.user_id]: 100 }, 100]);

    // The create event as a client sees it.
    const ev = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.create/?format=event`, { token: alice.access_token });
    expect(ev.status, JSON.stringify(ev.json)).toBe(200);
    expect(ev.json).toMatchObject({ type: "m.room.create", state_key: "", sender: alice.user_id, room_id: roomId });
    expect(ev.json.event_id).toMatch(/^\$/);
    if (v === "12") expect(roomId).toBe(`!${ev.json.event_id.slice(1)}`);
  });

  it("invites the invite list, with is_direct when asked", async () => {
    const direct = await create({ invite: [bob.user_id], is_direct: true, preset: "trusted_private_chat" });
    expect(await stateContent(direct, "m.room.member", bob.user_id)).toMatchObject({ membership: "invite", is_direct: true });
    const plain = await create({ invite: [bob.user_id, carol.user_id] });
    const m = await stateContent(plain, "m.room.member", carol.user_id);
    expect(m.membership).toBe("invite");
    expect(m).not.toHaveProperty("is_direct");
    // The invitee can join.
    const j = await t.call("POST", `${V3}/join/${enc(plain)}`, { token: bob.access_token, body: {} });
    expect(j.status, JSON.stringify(j.json)).toBe(200);
    expect(await stateContent(plain, "m.room.member", bob.user_id)).toMatchObject({ membership: "join" });
  });

  it("the same request under r0 and the _proto brand works too", async () => {
    for (const p of ["/_matrix/client/r0/createRoom", "/_proto/client/v3/createRoom"]) {
      const res = await t.call("POST", p, { token: alice.access_token, body: { name: "alias path" } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", p);
    }
  });

  describe("bad input stores nothing", () => {
    const cases: [string, Record<string, unknown> | string, number, string][] = [
      ["an unknown room version", { room_version: "99" }, 400, "M_UNSUPPORTED_ROOM_VERSION"],
      ["an empty room version", { room_version: "" }, 400, "M_UNSUPPORTED_ROOM_VERSION"],
      ["a numeric room version", { room_version: 11 }, 400, "M_BAD_JSON"],
      ["a numeric name", { name: 5 }, 400, "M_BAD_JSON"],
      ["an object topic", { topic: {} }, 400, "M_BAD_JSON"],
      ["a string invite list", { invite: "@bob:weft.test" }, 400, "M_BAD_JSON"],
      ["a non-string invitee", { invite: [5] }, 400, "M_BAD_JSON"],
      ["an object initial_state", { initial_state: {} }, 400, "M_BAD_JSON"],
      ["an initial_state entry without content", { initial_state: [{ type: "m.room.name" }] }, 400, "M_BAD_JSON"],
      ["an initial_state entry with a numeric type", { initial_state: [{ type: 1, content: {} }] }, 400, "M_BAD_JSON"],
      ["a list creation_content", { creation_content: [] }, 400, "M_BAD_JSON"],
      ["a string power_level_content_override", { power_level_content_override: "x" }, 400, "M_BAD_JSON"],
      ["a string is_direct", { is_direct: "yes" }, 400, "M_BAD_JSON"],
      ["a numeric preset", { preset: 7 }, 400, "M_BAD_JSON"],
      ["a numeric visibility", { visibility: 1 }, 400, "M_BAD_JSON"],
      ["a power level override with a string level", { power_level_content_override: { users_default: "10" } }, 400, "M_BAD_JSON"],
      ["a power level override with a non-integer user level", { power_level_content_override: { users: { "@alice:weft.test": 100, "@bob:weft.test": "x" } } }, 400, "M_BAD_JSON"],
      ["power levels in initial_state that are not integers", { initial_state: [{ type: "m.room.power_levels", content: { users: { "@alice:weft.test": "100" } } }] }, 400, "M_BAD_JSON"],
      ["a float in creation_content", '{"creation_content": {"x": 1.5}}', 400, "M_BAD_JSON"],
      ["an unknown invitee", { invite: ["@nobody:weft.test"] }, 404, "M_NOT_FOUND"],
      ["an unknown invitee after a known one", { invite: ["@bob:weft.test", "@nobody:weft.test"] }, 404, "M_NOT_FOUND"],
      ["an initial_state event the auth rules refuse", { initial_state: [{ type: "m.room.member", state_key: "@bob:weft.test", content: { membership: "join" } }] }, 403, "M_FORBIDDEN"],
      ["a body that is not JSON", "{not json", 400, "M_NOT_JSON"],
      ["a body that is a JSON list", "[1, 2]", 400, "M_BAD_JSON"],
    ];
    it.each(cases)("%s", async (_name, body, status, errcode) => {
      const before = await counts();
      const res =
        typeof body === "string"
          ? await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, raw: body, headers: { "content-type": "application/json" } })
          : await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body });
      expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
      expect(typeof res.json.error).toBe("string");
      expect(await counts()).toEqual(before);
    });

    it("guests may not create rooms", async () => {
      const g = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
      expect(g.status).toBe(200);
      const before = await counts();
      const res = await t.call("POST", `${V3}/createRoom`, { token: g.json.access_token, body: {} });
      expect([res.status, res.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
      expect(await counts()).toEqual(before);
    });

    it("no token: 401 M_MISSING_TOKEN", async () => {
      const res = await t.call("POST", `${V3}/createRoom`, { body: {} });
      expect([res.status, res.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    });
  });
});
