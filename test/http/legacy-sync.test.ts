// The legacy initial syncs and event stream as mature client-server suites check them (issue 34), on
// SQLite and PostgreSQL: GET /initialSync lists each room's visibility, the user's own presence and the
// latest account data of each type; GET /rooms/{roomId}/initialSync names each member event's user
// (`user_id`) and gives the presence of every member.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

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
});
