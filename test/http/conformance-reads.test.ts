// Reads as a mature client-server test suite checks them (issue 16), on SQLite and PostgreSQL: the legacy
// /events stream (receipts, tags, account data, limit validation, guests), /initialSync and the room
// initialSync (start, limit=0, presence), /messages' `end`, /joined_members' avatar_url, and sync
// filters asking for the federation event format.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { expectError } from "../helpers/e2ee.ts";
import type { Session } from "../helpers/users.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("client-server conformance: reads on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });
  let txn = 0;

  async function send(who: Session, roomId: string, body = "hello"): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id;
  }

  async function events(who: Session, query: string) {
    const res = await t.call("GET", `/_matrix/client/r0/events?${query}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json as { start: string; end: string; chunk: any[] };
  }

  /** Reads /events from `from` until an event matching `pred` arrives (long polls: no sleeping). */
  async function awaitEvent(who: Session, from: string, pred: (e: any) => boolean): Promise<any> {
    let token = from;
    for (let i = 0; i < 20; i++) {
      const res = await events(who, `from=${enc(token)}&timeout=5000`);
      const found = res.chunk.find(pred);
      if (found) return found;
      token = res.end;
    }
    throw new Error("event never came");
  }

  it("/events delivers room events, receipts, tags, global and room account data, with room_id where it applies", async () => {
    const roomId = await createRoom(t, alice);
    const start = (await events(alice, "timeout=0")).end;
    const eventId = await send(alice, roomId, "in the stream");
    const msg = await awaitEvent(alice, start, (e) => e.event_id === eventId);
    expect(msg).toMatchObject({ room_id: roomId, type: "m.room.message", content: { body: "in the stream" } });

    await t.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(eventId)}`, { token: alice.access_token, body: {} });
    const receipt = await awaitEvent(alice, start, (e) => e.type === "m.receipt");
    expect(receipt.room_id).toBe(roomId);
    expect(receipt.content[eventId]["m.read"][alice.user_id]).toBeDefined();

    await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/tags/u.work`, { token: alice.access_token, body: { order: 0.5 } });
    const tag = await awaitEvent(alice, start, (e) => e.type === "m.tag");
    expect(tag).toEqual({ type: "m.tag", room_id: roomId, content: { tags: { "u.work": { order: 0.5 } } } });

    await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/account_data/my.test.type`, { token: alice.access_token, body: { cats_or_rats: "cats" } });
    const global = await awaitEvent(alice, start, (e) => e.type === "my.test.type" && e.room_id === undefined);
    expect(global.content).toEqual({ cats_or_rats: "cats" });
    await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/account_data/my.test.type`, { token: alice.access_token, body: { cats_or_rats: "rats" } });
    const perRoom = await awaitEvent(alice, start, (e) => e.type === "my.test.type" && e.room_id === roomId);
    expect(perRoom.content).toEqual({ cats_or_rats: "rats" });
  });

  it("/events validates limit and timeout, honours limit, and makes guests name a room", async () => {
    for (const q of ["limit=hello", "limit=-2", "timeout=hello"]) {
      const res = await t.call("GET", `${V3}/events?${q}`, { token: alice.access_token });
      expect(res.status, q).toBe(400);
    }
    const roomId = await createRoom(t, alice);
    const start = (await events(alice, "timeout=0")).end;
    for (let i = 0; i < 4; i++) await send(alice, roomId, `m${i}`);
    // The oldest first, and the next call goes on where this one stopped.
    const limited = await events(alice, `from=${enc(start)}&timeout=0&limit=2`);
    expect(limited.chunk.filter((e) => e.type === "m.room.message").map((e) => e.content.body)).toEqual(["m0", "m1"]);
    const rest = await events(alice, `from=${enc(limited.end)}&timeout=0&limit=2`);
    expect(rest.chunk.filter((e) => e.type === "m.room.message").map((e) => e.content.body)).toEqual(["m2", "m3"]);

    const guest = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
    expect((await t.call("GET", `${V3}/events?timeout=0`, { token: guest.access_token })).status).toBe(400);
    // A room the guest is not in: refused unless world_readable (then peeked into, as Synapse).
    expect((await t.call("GET", `${V3}/events?timeout=0&room_id=${enc(roomId)}`, { token: guest.access_token })).status).toBe(403);
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.history_visibility`, { token: alice.access_token, body: { history_visibility: "world_readable" } });
    expect((await t.call("GET", `${V3}/events?timeout=0&room_id=${enc(roomId)}`, { token: guest.access_token })).status).toBe(200);
  });

  it("/initialSync gives each room messages with start and end, no messages with limit=0, and presence", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await send(alice, roomId, "one");
    await t.call("PUT", `${V3}/presence/${enc(alice.user_id)}/status`, { token: alice.access_token, body: { presence: "online", status_msg: "Online" } });
    const all = await t.call("GET", `${V3}/initialSync`, { token: alice.access_token });
    expect(all.status).toBe(200);
    const room = all.json.rooms.find((x: any) => x.room_id === roomId);
    expect(Object.keys(room.messages).sort()).toEqual(["chunk", "end", "start"]);
    expect(room.messages.chunk.length).toBeGreaterThan(0);
    const me = all.json.presence.find((p: any) => p.content.user_id === alice.user_id);
    expect(me).toMatchObject({ type: "m.presence", content: { presence: "online", status_msg: "Online" } });

    const none = await t.call("GET", `${V3}/initialSync?limit=0`, { token: alice.access_token });
    expect(none.json.rooms.find((x: any) => x.room_id === roomId).messages.chunk).toEqual([]);
    expect((await t.call("GET", `${V3}/initialSync?limit=hello`, { token: alice.access_token })).status).toBe(400);

    const one = await t.call("GET", `${V3}/rooms/${enc(roomId)}/initialSync`, { token: alice.access_token });
    expect(Object.keys(one.json.messages).sort()).toEqual(["chunk", "end", "start"]);
    expect(one.json.messages.chunk.length).toBeGreaterThan(0);
    const mine = one.json.presence.find((p: any) => p.content.user_id === alice.user_id);
    expect(mine.content).toMatchObject({ presence: "online", status_msg: "Online" });
    expect(typeof mine.content.last_active_ago).toBe("number");
    const zero = await t.call("GET", `${V3}/rooms/${enc(roomId)}/initialSync?limit=0`, { token: alice.access_token });
    expect(zero.json.messages.chunk).toEqual([]);
    expect(typeof zero.json.messages.start).toBe("string");
  });

  it("/messages says where a non-empty chunk ended, and omits end once nothing is left", async () => {
    const roomId = await createRoom(t, alice);
    await send(alice, roomId, "only");
    const sync = await t.call("GET", `${V3}/sync?filter=${enc(JSON.stringify({ room: { timeline: { limit: 1 } } }))}`, { token: alice.access_token });
    const prev = sync.json.rooms.join[roomId].timeline.prev_batch;
    const p = `${V3}/rooms/${enc(roomId)}/messages`;
    const page = await t.call("GET", `${p}?dir=b&from=${enc(prev)}`, { token: alice.access_token });
    expectMatchesSpec(page, "GET", p);
    expect(page.json.chunk.length).toBeGreaterThan(0);
    expect(typeof page.json.end).toBe("string");
    const next = await t.call("GET", `${p}?dir=b&from=${enc(page.json.end)}`, { token: alice.access_token });
    expect(next.json.chunk).toEqual([]);
    expect(next.json.end).toBeUndefined();
    expect(typeof next.json.start).toBe("string");
  });

  it("/joined_members gives each member's display name and avatar URL", async () => {
    await t.call("PUT", `${V3}/profile/${enc(bob.user_id)}/avatar_url`, { token: bob.access_token, body: { avatar_url: "mxc://weft.test/bob" } });
    await t.call("PUT", `${V3}/profile/${enc(bob.user_id)}/displayname`, { token: bob.access_token, body: { displayname: "Bob B" } });
    const roomId = await createRoom(t, bob, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: alice.access_token, body: {} });
    const p = `${V3}/rooms/${enc(roomId)}/joined_members`;
    const res = await t.call("GET", p, { token: alice.access_token });
    expectMatchesSpec(res, "GET", p);
    expect(res.json.joined[bob.user_id]).toEqual({ display_name: "Bob B", avatar_url: "mxc://weft.test/bob" });
    expect(res.json.joined[alice.user_id]).toEqual({ display_name: "alice", avatar_url: null });
    // A later profile change reaches it too.
    await t.call("PUT", `${V3}/profile/${enc(bob.user_id)}/avatar_url`, { token: bob.access_token, body: { avatar_url: "mxc://weft.test/bob2" } });
    expect((await t.call("GET", p, { token: alice.access_token })).json.joined[bob.user_id].avatar_url).toBe("mxc://weft.test/bob2");
  });

  it("serves sync events in the federation format when the filter asks for it", async () => {
    const roomId = await createRoom(t, alice);
    const eventId = await send(alice, roomId, "Test message");
    const filter = await t.call("POST", `${V3}/user/${enc(alice.user_id)}/filter`, { token: alice.access_token, body: { event_format: "federation", room: { timeline: { limit: 1 } } } });
    const sync = await t.call("GET", `${V3}/sync?filter=${filter.json.filter_id}`, { token: alice.access_token });
    const [ev] = sync.json.rooms.join[roomId].timeline.events;
    for (const key of ["event_id", "content", "room_id", "sender", "origin_server_ts", "type", "prev_events", "auth_events", "depth", "hashes", "signatures"]) expect(ev, key).toHaveProperty(key);
    expect(ev.event_id).toBe(eventId);
    expect(ev.content.body).toBe("Test message");
    // Redacted events are served redacted.
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(eventId)}/r${++txn}`, { token: alice.access_token, body: {} });
    const again = await t.call("GET", `${V3}/sync?filter=${enc(JSON.stringify({ event_format: "federation", room: { timeline: { limit: 5 } } }))}`, { token: alice.access_token });
    const redacted = again.json.rooms.join[roomId].timeline.events.find((e: any) => e.event_id === eventId);
    expect(redacted.content).toEqual({});
    expect(redacted.unsigned.redacted_because).toBeDefined();
  });

  it("refuses a bad limit on the room initialSync", async () => {
    const roomId = await createRoom(t, alice);
    expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/initialSync?limit=x`, { token: alice.access_token }), 400, "M_INVALID_PARAM");
  });
});
