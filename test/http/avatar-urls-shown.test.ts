// Avatar URLs shown to clients from room state, on SQLite and PostgreSQL: an m.room.avatar url or a member
// event's avatar_url may be any string (a user's own state event, or another server's), but the spec's
// responses allow only an mxc:// URI — /publicRooms, /joined_members (null there, as an unset one) and
// /search's profile_info leave a malformed one out (the room, member and profile still shown) and keep a
// well-formed one; /publicRooms
// likewise leaves out a canonical_alias that is not a room alias.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { appendEvent } from "../../src/domain/rooms/append.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const BAD = "javascript:alert(1)";

describe.each(backends())("avatar URLs shown from room state on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let good: string;

  const put = async (who: Session, roomId: string, type: string, stateKey: string, content: unknown) => {
    const r = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}/${enc(stateKey)}`, { token: who.access_token, body: content });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  };

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    good = `mxc://${alice.user_id.split(":")[1]}/goodAvatar1`;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("/publicRooms leaves out a room avatar that is not an mxc URI, keeps one that is", async () => {
    const bad = await createRoom(t, alice, { preset: "public_chat", visibility: "public", name: "badavatar" });
    await put(alice, bad, "m.room.avatar", "", { url: BAD });
    // A canonical alias that is no alias, as another server's event may carry (past the local send check).
    await appendEvent(t.hs.services, bad, { type: "m.room.canonical_alias", stateKey: "", sender: alice.user_id, content: { alias: "no-alias" } });
    const fine = await createRoom(t, alice, { preset: "public_chat", visibility: "public", name: "goodavatar" });
    await put(alice, fine, "m.room.avatar", "", { url: good });
    let chunk: Record<string, unknown>[] = [];
    // The directory's view of a room follows its state after the commit: wait for both avatars to land.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await t.call("GET", `${V3}/publicRooms?limit=50`, { token: alice.access_token });
      expect(r.status).toBe(200);
      expectMatchesSpec(r, "GET", `${V3}/publicRooms`);
      chunk = r.json.chunk;
      if (chunk.find((c) => c.room_id === fine)?.avatar_url === good || Date.now() > deadline) break;
      await new Promise((res) => setImmediate(res));
    }
    expect(chunk.find((c) => c.room_id === fine)).toMatchObject({ name: "goodavatar", avatar_url: good });
    const listed = chunk.find((c) => c.room_id === bad);
    expect(listed).toMatchObject({ name: "badavatar" });
    expect(listed).not.toHaveProperty("avatar_url");
    expect(listed).not.toHaveProperty("canonical_alias");
  });

  it("/joined_members and /search's profile_info leave out a member avatar_url that is not an mxc URI", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    const j = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    expect(j.status).toBe(200);
    await put(alice, roomId, "m.room.member", alice.user_id, { membership: "join", displayname: "Alice", avatar_url: BAD });
    await put(bob, roomId, "m.room.member", bob.user_id, { membership: "join", displayname: "Bob", avatar_url: good });
    const m = await t.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: alice.access_token });
    expect(m.status).toBe(200);
    expectMatchesSpec(m, "GET", `${V3}/rooms/{roomId}/joined_members`);
    expect(m.json.joined).toEqual({ [alice.user_id]: { display_name: "Alice", avatar_url: null }, [bob.user_id]: { display_name: "Bob", avatar_url: good } });

    for (const who of [alice, bob]) {
      const s = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${who.user_id.slice(1, 4)}aardvark`, { token: who.access_token, body: { msgtype: "m.text", body: "the aardvark sleeps" } });
      expect(s.status).toBe(200);
    }
    const body = { search_categories: { room_events: { search_term: "aardvark", filter: { rooms: [roomId] }, event_context: { before_limit: 0, after_limit: 0, include_profile: true } } } };
    let results: any[] = [];
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await t.call("POST", `${V3}/search`, { token: alice.access_token, body });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expectMatchesSpec(r, "POST", `${V3}/search`);
      results = r.json.search_categories.room_events.results;
      if (results.length === 2 || Date.now() > deadline) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(results).toHaveLength(2);
    for (const res of results) expect(res.context.profile_info).toEqual({ [res.result.sender]: res.result.sender === alice.user_id ? { displayname: "Alice" } : { displayname: "Bob", avatar_url: good } });
  });
});
