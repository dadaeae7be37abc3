// The legacy initial syncs and event stream as mature client-server suites check them (issue 34), on
// SQLite and PostgreSQL: GET /initialSync lists each room's visibility, the user's own presence and the
// latest account data of each type; GET /rooms/{roomId}/initialSync names each member event's user
// (`user_id`) and gives the presence of every member; GET /events catches up fully and in order in
// batches of `limit`, marks the caller online, and peeks into a world_readable room (`room_id`) for a
// real user in other rooms and for a guest: its messages, its members' presence, receipts and typing.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { parkedNow, untilParked } from "../helpers/parked.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("legacy initial sync and event stream on %s", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"] });
  let txn = 0;

  const call = async (method: string, path: string, who: Session, body?: unknown) => t.call(method, `${V3}${path}`, { token: who.access_token, body });
  async function send(who: Session, roomId: string, body: string): Promise<string> {
    const res = await call("PUT", `/rooms/${enc(roomId)}/send/m.room.message/l${++txn}`, who, { msgtype: "m.text", body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id;
  }
  async function events(who: Session, query: string): Promise<{ start: string; end: string; chunk: any[] }> {
    const res = await call("GET", `/events?${query}`, who);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }
  /** Long-polls /events from `from` (with `extra` query) until an event matching `pred` arrives; returns it and the token after it. */
  async function awaitEvent(who: Session, from: string, extra: string, pred: (e: any) => boolean): Promise<{ event: any; end: string }> {
    let token = from;
    for (let i = 0; i < 20; i++) {
      const res = await events(who, `from=${enc(token)}&timeout=5000${extra}`);
      token = res.end;
      const event = res.chunk.find(pred);
      if (event) return { event, end: token };
    }
    throw new Error("the event never came");
  }
  const guest = async (): Promise<Session> => (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;

  it("/initialSync: each room's visibility, the user's own presence, the latest account data of each type", async () => {
    const fresh = await registerUser(t, "fresh_initial");
    const pub = await createRoom(t, fresh, { preset: "public_chat", visibility: "public" });
    const priv = await createRoom(t, fresh, {});
    const set = (path: string, value: string) => call("PUT", path, fresh, { cats_or_rats: value });
    const globalPath = `/user/${enc(fresh.user_id)}/account_data/my.test.type`;
    const roomPath = `/user/${enc(fresh.user_id)}/rooms/${enc(pub)}/account_data/my.test.type`;
    await Promise.all([set(globalPath, "frogs"), set(roomPath, "dogs")]);
    await Promise.all([set(globalPath, "cats"), set(roomPath, "rats")]);

    const init = await call("GET", "/initialSync", fresh);
    expect(init.status).toBe(200);
    expectMatchesSpec(init, "GET", `${V3}/initialSync`);
    const room = (id: string) => init.json.rooms.find((r: any) => r.room_id === id);
    expect(room(pub)).toMatchObject({ membership: "join", visibility: "public" });
    expect(room(priv)).toMatchObject({ membership: "join", visibility: "private" });
    // A user who only registered: syncing this way marks them online, as /sync does.
    const me = init.json.presence.find((p: any) => p.content.user_id === fresh.user_id);
    expect(me).toMatchObject({ type: "m.presence", content: { user_id: fresh.user_id, presence: "online" } });
    expect(typeof me.content.last_active_ago).toBe("number");
    // The latest of each type only (m.push_rules is read through /pushrules/, as Synapse's).
    expect(init.json.account_data).toEqual([{ type: "my.test.type", content: { cats_or_rats: "cats" } }]);
    expect(room(pub).account_data).toEqual([{ type: "my.test.type", content: { cats_or_rats: "rats" } }]);
    // Events name their sender as user_id too (Synapse's v1 client format).
    const create = room(pub).state.find((e: any) => e.type === "m.room.create");
    expect(create.user_id).toBe(fresh.user_id);

    // A guest's own presence is there too, offline (a guest's presence is never set).
    const g = await guest();
    const gi = await call("GET", "/initialSync", g);
    expect(gi.status).toBe(200);
    expect(gi.json.presence).toContainEqual({ type: "m.presence", sender: g.user_id, content: { presence: "offline", user_id: g.user_id } });
  });

  it("/rooms/{roomId}/initialSync: each member event names its user, every member's presence, the latest account data", async () => {
    const carol = await registerUser(t, "carol_room_initial");
    const dave = await registerUser(t, "dave_room_initial");
    // Carol never sets her presence: she is shown offline.
    const roomId = await createRoom(t, carol, { preset: "public_chat" });
    expect((await call("POST", `/join/${enc(roomId)}`, dave, {})).status).toBe(200);
    const path = `/user/${enc(dave.user_id)}/rooms/${enc(roomId)}/account_data/my.test.type`;
    await call("PUT", path, dave, { cats_or_rats: "dogs" });
    await call("PUT", path, dave, { cats_or_rats: "rats" });
    const one = await call("GET", `/rooms/${enc(roomId)}/initialSync`, dave);
    expect(one.status).toBe(200);
    expectMatchesSpec(one, "GET", `${V3}/rooms/${enc(roomId)}/initialSync`);
    const members = new Map(one.json.state.filter((e: any) => e.type === "m.room.member").map((e: any) => [e.user_id, e]));
    expect((members.get(dave.user_id) as any)?.content.membership).toBe("join");
    expect((members.get(carol.user_id) as any)?.content.membership).toBe("join");
    const presence = new Map(one.json.presence.map((p: any) => [p.content.user_id, p]));
    expect(presence.get(carol.user_id)).toMatchObject({ type: "m.presence", content: { presence: "offline" } });
    expect(presence.get(dave.user_id)).toMatchObject({ type: "m.presence", content: { presence: "online" } });
    expect(one.json.account_data).toEqual([{ type: "my.test.type", content: { cats_or_rats: "rats" } }]);
    // Its end token carries on into /events with nothing missed.
    const later = await send(carol, roomId, "after the snapshot");
    const next = await awaitEvent(dave, one.json.messages.end, "", (e) => e.type === "m.room.message");
    expect(next.event.event_id).toBe(later);

    // A guest peeking into a world_readable room sees its members' presence too.
    expect((await call("PUT", `/rooms/${enc(roomId)}/state/m.room.history_visibility`, carol, { history_visibility: "world_readable" })).status).toBe(200);
    const g = await guest();
    const peek = await call("GET", `/rooms/${enc(roomId)}/initialSync`, g);
    expect(peek.status).toBe(200);
    expect(peek.json.membership).toBeUndefined();
    expect(peek.json.presence.map((p: any) => p.content.user_id).sort()).toEqual([carol.user_id, dave.user_id].sort());
  });

  it("/events catches up fully and in order after many messages, in batches of limit", async () => {
    const roomId = await createRoom(t, alice);
    const start = (await events(alice, "timeout=0")).end;
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push(await send(alice, roomId, `message ${i}`));
    const seen: string[] = [];
    let token = start;
    for (let i = 0; i < 10 && seen.length < sent.length; i++) {
      const res = await events(alice, `from=${enc(token)}&timeout=500&limit=5`);
      const messages = res.chunk.filter((e) => e.type === "m.room.message");
      expect(messages.length).toBeLessThanOrEqual(5);
      seen.push(...messages.map((e) => e.event_id));
      token = res.end;
    }
    expect(seen).toEqual(sent);
    expect((await events(alice, `from=${enc(token)}&timeout=0`)).chunk.filter((e) => e.type === "m.room.message")).toEqual([]);
  });

  it("/events delivers the user's own invite, join and leave of a room they have left, in order", async () => {
    const hank = await registerUser(t, "hank_members");
    const start = (await events(hank, "timeout=0")).end;
    const roomId = await createRoom(t, alice, {});
    expect((await call("POST", `/rooms/${enc(roomId)}/invite`, alice, { user_id: hank.user_id })).status).toBe(200);
    expect((await call("POST", `/join/${enc(roomId)}`, hank, {})).status).toBe(200);
    expect((await call("POST", `/rooms/${enc(roomId)}/leave`, hank, {})).status).toBe(200);
    const mine: string[] = [];
    let token = start;
    for (let i = 0; i < 10 && mine.length < 3; i++) {
      const res = await events(hank, `from=${enc(token)}&timeout=500&limit=1`);
      mine.push(...res.chunk.filter((e) => e.type === "m.room.member" && e.state_key === hank.user_id).map((e) => e.content.membership));
      token = res.end;
    }
    expect(mine).toEqual(["invite", "join", "leave"]);
  });

  it("/events marks the caller online", async () => {
    const erin = await registerUser(t, "erin_events");
    expect((await call("GET", `/presence/${enc(erin.user_id)}/status`, erin)).json.presence).toBe("offline");
    await events(erin, "timeout=0");
    expect((await call("GET", `/presence/${enc(erin.user_id)}/status`, erin)).json.presence).toBe("online");
  });

  it("/events?room_id= peeks into a world_readable room: for a real user in other rooms and for a guest not joined", async () => {
    const frank = await registerUser(t, "frank_peeked");
    const roomId = await createRoom(t, frank, { preset: "public_chat" });
    expect((await call("PUT", `/rooms/${enc(roomId)}/state/m.room.history_visibility`, frank, { history_visibility: "world_readable" })).status).toBe(200);
    const closed = await createRoom(t, frank, { preset: "public_chat" });
    const grace = await registerUser(t, "grace_peeking");
    await createRoom(t, grace, {});
    for (const peeker of [grace, await guest()]) {
      const q = `&room_id=${enc(roomId)}`;
      const token = (await events(peeker, `timeout=0${q}`)).end;
      const body = `hello ${peeker.user_id}`;
      const eventId = await send(frank, roomId, body);
      const msg = await awaitEvent(peeker, token, q, (e) => e.type === "m.room.message");
      expect(msg.event).toMatchObject({ event_id: eventId, room_id: roomId, sender: frank.user_id, user_id: frank.user_id, content: { body } });
      // The presence of a member of the room, which wakes a waiting peek.
      const status = `peeked by ${peeker.user_id}`;
      const parked = parkedNow(t);
      const waiting = events(peeker, `from=${enc(msg.end)}&timeout=20000${q}`);
      await untilParked(t, parked + 1);
      expect((await call("PUT", `/presence/${enc(frank.user_id)}/status`, frank, { presence: "online", status_msg: status })).status).toBe(200);
      const woken = await waiting;
      const seen = woken.chunk.find((e) => e.type === "m.presence" && e.content.user_id === frank.user_id);
      expect(seen?.content).toMatchObject({ presence: "online", status_msg: status });
      const presence = { end: woken.end };
      // Receipts and typing in the room.
      expect((await call("POST", `/rooms/${enc(roomId)}/receipt/m.read/${enc(eventId)}`, frank, {})).status).toBe(200);
      const receipt = await awaitEvent(peeker, presence.end, q, (e) => e.type === "m.receipt" && e.content[eventId]);
      expect(receipt.event.room_id).toBe(roomId);
      expect(receipt.event.content[eventId]["m.read"][frank.user_id]).toBeDefined();
      expect((await call("PUT", `/rooms/${enc(roomId)}/typing/${enc(frank.user_id)}`, frank, { typing: true, timeout: 30000 })).status).toBe(200);
      const typing = await awaitEvent(peeker, receipt.end, q, (e) => e.type === "m.typing");
      expect(typing.event).toMatchObject({ room_id: roomId, content: { user_ids: [frank.user_id] } });
      expect((await call("PUT", `/rooms/${enc(roomId)}/typing/${enc(frank.user_id)}`, frank, { typing: false })).status).toBe(200);
      // A room that is not world_readable is refused.
      const refused = await call("GET", `/events?timeout=0&room_id=${enc(closed)}`, peeker);
      expect({ status: refused.status, errcode: refused.json.errcode }).toEqual({ status: 403, errcode: "M_FORBIDDEN" });
    }
  });
});
