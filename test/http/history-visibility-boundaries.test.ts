// History visibility at its boundaries (issue 16) over HTTP on SQLite and PostgreSQL: each change takes
// effect at its own event, both ways (shared → joined keeps what was shared; joined → shared opens what
// follows), the change event itself is visible to whoever the visibility before or after it admits, the
// same in /sync and /messages, for guests too; and guests leave a room that revokes guest access.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { Session } from "../helpers/users.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("history visibility at boundaries on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });
  let txn = 0;

  async function send(who: Session, roomId: string, body: string): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/h${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id;
  }
  const setVisibility = async (roomId: string, v: string) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.history_visibility`, { token: alice.access_token, body: { history_visibility: v } });
    expect(res.status).toBe(200);
  };
  const guest = async (): Promise<Session> => (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
  const describeEvent = (e: any) => (e.type === "m.room.message" ? `msg:${e.content.body}` : e.type === "m.room.history_visibility" ? `hv:${e.content.history_visibility}` : e.type === "m.room.member" ? `member:${e.content.membership}` : e.type);

  it("shows a change of visibility at its own event, both ways, in /sync and /messages", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" }); // shared
    await setVisibility(roomId, "joined");
    await send(alice, roomId, "1");
    await setVisibility(roomId, "invited");
    await send(alice, roomId, "2");
    await setVisibility(roomId, "shared");
    await send(alice, roomId, "3");
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });

    const expected = ["hv:joined", "hv:shared", "msg:3", "member:join"];
    const sync = await t.call("GET", `${V3}/sync?filter=${enc(JSON.stringify({ room: { timeline: { limit: 50 } } }))}`, { token: bob.access_token });
    expect(sync.json.rooms.join[roomId].timeline.events.map(describeEvent).slice(-4)).toEqual(expected);
    const msgs = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: bob.access_token });
    const seen = msgs.json.chunk.map(describeEvent).reverse();
    expect(seen.slice(-4)).toEqual(expected);
    expect(seen).not.toContain("msg:1");
    expect(seen).not.toContain("msg:2");
    expect(seen).not.toContain("hv:invited");
  });

  it("keeps what was sent under shared visible after the room changes to joined", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await send(alice, roomId, "shared before");
    await setVisibility(roomId, "joined");
    await send(alice, roomId, "joined only");
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    await send(alice, roomId, "after join");
    const msgs = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: bob.access_token });
    const bodies = msgs.json.chunk.filter((e: any) => e.type === "m.room.message").map((e: any) => e.content.body).reverse();
    expect(bodies).toEqual(["shared before", "after join"]);
    const sync = await t.call("GET", `${V3}/sync`, { token: bob.access_token });
    const inSync = sync.json.rooms.join[roomId].timeline.events.filter((e: any) => e.type === "m.room.message").map((e: any) => e.content.body);
    expect(inSync).toEqual(["shared before", "after join"]);
  });

  it("applies the same boundaries to guests", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat", initial_state: [{ type: "m.room.guest_access", content: { guest_access: "can_join" } }] });
    await send(alice, roomId, "shared before");
    await setVisibility(roomId, "joined");
    await send(alice, roomId, "joined only");
    const g = await guest();
    const join = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: g.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    await send(alice, roomId, "after join");
    const msgs = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: g.access_token });
    const bodies = msgs.json.chunk.filter((e: any) => e.type === "m.room.message").map((e: any) => e.content.body).reverse();
    expect(bodies).toEqual(["shared before", "after join"]);
    // The guest's join says what it is.
    const member = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(g.user_id)}`, { token: alice.access_token });
    expect(member.json).toMatchObject({ membership: "join", kind: "guest" });
  });

  it("makes guests leave when guest access is revoked (members stay), and only then", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat", initial_state: [{ type: "m.room.guest_access", content: { guest_access: "can_join" } }] });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    const g1 = await guest();
    const g2 = await guest();
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: g1.access_token, body: {} })).status).toBe(200);
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: g2.user_id } });
    const since = (await t.call("GET", `${V3}/sync`, { token: alice.access_token })).json.next_batch;

    // Another state change leaves guests alone.
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.topic`, { token: alice.access_token, body: { topic: "still open" } });
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.guest_access`, { token: alice.access_token, body: { guest_access: "forbidden" } });

    // Wait (long-polling alice's sync) until both guests have left.
    const left = new Map<string, any>();
    let token = since;
    while (left.size < 2) {
      const res = await t.call("GET", `${V3}/sync?since=${enc(token)}&timeout=10000`, { token: alice.access_token });
      for (const e of res.json.rooms?.join?.[roomId]?.timeline.events ?? [])
        if (e.type === "m.room.member" && e.content.membership === "leave") left.set(e.state_key, e);
      token = res.json.next_batch;
    }
    expect([...left.keys()].sort()).toEqual([g1.user_id, g2.user_id].sort());
    // Each guest left by itself (no power needed), and the topic change had not made them leave.
    for (const [userId, e] of left) expect(e.sender).toBe(userId);
    const members = await t.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: alice.access_token });
    expect(Object.keys(members.json.joined).sort()).toEqual([alice.user_id, bob.user_id].sort());
    // And the room now refuses guests.
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: g1.access_token, body: {} })).status).toBe(403);
  });
});
