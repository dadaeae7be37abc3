// Ignoring users (m.ignored_user_list, spec "Ignoring Users") over HTTP on SQLite and PostgreSQL: an
// ignored user's messages leave /sync (initial and incremental), /messages, /context and /events, their
// state events stay, their invites are not shown, and un-ignoring brings everything back.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { Session } from "../helpers/users.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("ignoring users on %s", (backend) => {
  const { t, users: { alice, bob, carol } } = withServer({ backend, users: ["alice", "bob", "carol"] });
  let txn = 0;

  async function send(who: Session, roomId: string, body: string): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/i${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id;
  }

  const ignore = (who: Session, users: Session[]) =>
    t.call("PUT", `${V3}/user/${enc(who.user_id)}/account_data/m.ignored_user_list`, {
      token: who.access_token,
      body: { ignored_users: Object.fromEntries(users.map((u) => [u.user_id, {}])) },
    });

  const filter = enc(JSON.stringify({ room: { timeline: { types: ["m.room.message"], limit: 20 }, state: { types: ["m.room.member"] } } }));
  const sync = async (who: Session, since?: string) =>
    (await t.call("GET", `${V3}/sync?filter=${filter}${since ? `&since=${enc(since)}` : ""}`, { token: who.access_token })).json;
  const bodies = (events: any[]) => events.filter((e) => e.type === "m.room.message").map((e) => e.content.body);

  it("hides an ignored user's messages everywhere events are served, keeps their state, and shows them again when un-ignored", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    for (const u of [bob, carol]) await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: u.access_token, body: {} });
    await send(alice, roomId, "from alice");
    const bobs = await send(bob, roomId, "from bob");
    await send(carol, roomId, "from carol");

    const before = await sync(alice);
    expect(bodies(before.rooms.join[roomId].timeline.events)).toEqual(["from alice", "from bob", "from carol"]);

    expect((await ignore(alice, [bob])).status).toBe(200);
    const after = await sync(alice);
    expect(bodies(after.rooms.join[roomId].timeline.events)).toEqual(["from alice", "from carol"]);
    // Bob's member event (state) is still there.
    expect(after.rooms.join[roomId].state.events.map((e: any) => e.state_key)).toContain(bob.user_id);

    // New messages from bob alone: nothing for alice in an incremental sync.
    await send(bob, roomId, "bob again");
    const quiet = await t.call("GET", `${V3}/sync?filter=${filter}&since=${enc(after.next_batch)}&timeout=0`, { token: alice.access_token });
    expect(quiet.json.rooms?.join?.[roomId]).toBeUndefined();
    await send(carol, roomId, "carol again");
    const next = await sync(alice, after.next_batch);
    expect(bodies(next.rooms.join[roomId].timeline.events)).toEqual(["carol again"]);

    // /messages, /context, /event and /events.
    const msgs = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: alice.access_token });
    expect(bodies(msgs.json.chunk)).toEqual(["carol again", "from carol", "from alice"]);
    expect((await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(bobs)}`, { token: alice.access_token })).status).toBe(404);
    expect((await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(bobs)}`, { token: alice.access_token })).status).toBe(404);
    const carols = await send(carol, roomId, "context");
    const ctx = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(carols)}?limit=20`, { token: alice.access_token });
    expect(bodies(ctx.json.events_before)).not.toContain("from bob");
    expect(bodies(ctx.json.events_before)).toContain("from carol");
    const start = (await t.call("GET", `${V3}/events?timeout=0`, { token: alice.access_token })).json.end;
    await send(bob, roomId, "bob in the stream");
    const last = await send(carol, roomId, "carol in the stream");
    let seen: any[] = [];
    let token = start;
    while (!seen.some((e) => e.event_id === last)) {
      const ev = await t.call("GET", `${V3}/events?from=${enc(token)}&timeout=5000`, { token: alice.access_token });
      seen = [...seen, ...ev.json.chunk];
      token = ev.json.end;
    }
    expect(bodies(seen)).toEqual(["carol in the stream"]);
    // Bob still sees his own messages; carol sees everything.
    expect(bodies((await sync(carol)).rooms.join[roomId].timeline.events)).toContain("from bob");

    // Un-ignoring brings bob back.
    await ignore(alice, []);
    expect(bodies((await sync(alice)).rooms.join[roomId].timeline.events)).toContain("from bob");
  });

  it("does not show invites from an ignored user, in initial or incremental syncs", async () => {
    const dave = (await t.call("POST", `${V3}/register`, { body: { username: "dave", password: "password", auth: { type: "m.login.dummy" } } })).json as Session;
    const first = await sync(dave);
    expect(Object.keys(first.rooms?.invite ?? {})).toEqual([]);
    await ignore(dave, [bob]);
    const fromBob = await createRoom(t, bob);
    await t.call("POST", `${V3}/rooms/${enc(fromBob)}/invite`, { token: bob.access_token, body: { user_id: dave.user_id } });
    const fromCarol = await createRoom(t, carol);
    await t.call("POST", `${V3}/rooms/${enc(fromCarol)}/invite`, { token: carol.access_token, body: { user_id: dave.user_id } });
    const incremental = await sync(dave, first.next_batch);
    expect(Object.keys(incremental.rooms.invite)).toEqual([fromCarol]);
    const full = await sync(dave);
    expect(Object.keys(full.rooms.invite)).toEqual([fromCarol]);
    // The invite is still real: dave may accept it.
    expect((await t.call("POST", `${V3}/join/${enc(fromBob)}`, { token: dave.access_token, body: {} })).status).toBe(200);
  });
});
