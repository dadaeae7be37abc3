// unsigned.membership (spec v1.11, MSC4115) over HTTP on SQLite and PostgreSQL: the reader's membership
// at each event of a timeline — `leave` before they joined, `join` from their join on, their own leave
// for their leave — in /sync, /messages, /event, /context, /search and /relations; never on state lists.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import type { Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("unsigned.membership on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });
  let txn = 0;

  async function call(who: Session, method: string, path: string, body?: unknown): Promise<any> {
    const res = await t.call(method, path, { token: who.access_token, body });
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.json)}`).toBe(200);
    expectMatchesSpec(res, method, path.split("?")[0]!);
    return res.json;
  }
  const send = async (roomId: string, content: Record<string, unknown>) =>
    (await call(alice, "PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/m${++txn}`, content)).event_id as string;
  const membershipOf = (events: any[]) => Object.fromEntries(events.map((e) => [e.event_id, e.unsigned?.membership]));

  it("is the reader's membership at each event, in every timeline read", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    const before = await send(roomId, { msgtype: "m.text", body: "narwhal before" });
    await call(bob, "POST", `${V3}/join/${enc(roomId)}`, {});
    const join = (await t.hs.services.rooms.store.membership(roomId, bob.user_id))!.eventId;
    const after = await send(roomId, { msgtype: "m.text", body: "narwhal after" });
    const reply = await send(roomId, { msgtype: "m.text", body: "in thread", "m.relates_to": { rel_type: "m.thread", event_id: after } });

    const synced = await call(bob, "GET", `${V3}/sync?filter=${enc(JSON.stringify({ room: { timeline: { limit: 50 } } }))}`);
    const room = synced.rooms.join[roomId];
    const tl = membershipOf(room.timeline.events);
    expect([tl[before], tl[join], tl[after], tl[reply]]).toEqual(["leave", "join", "join", "join"]);
    // Every timeline event has one (the create event's too: no member event of bob then is `leave`).
    expect(room.timeline.events.every((e: any) => typeof e.unsigned?.membership === "string")).toBe(true);
    expect(room.state.events.some((e: any) => e.unsigned?.membership !== undefined)).toBe(false);

    const messages = membershipOf((await call(bob, "GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`)).chunk);
    expect([messages[before], messages[join], messages[after]]).toEqual(["leave", "join", "join"]);
    expect((await call(bob, "GET", `${V3}/rooms/${enc(roomId)}/event/${enc(before)}`)).unsigned.membership).toBe("leave");
    const context = await call(bob, "GET", `${V3}/rooms/${enc(roomId)}/context/${enc(join)}?limit=2`);
    expect(context.event.unsigned.membership).toBe("join");
    expect(membershipOf(context.events_after)[after]).toBe("join");
    expect(membershipOf(context.events_before)[before]).toBe("leave");
    expect(context.state.some((e: any) => e.unsigned?.membership !== undefined)).toBe(false);
    const found = await call(bob, "POST", `${V3}/search`, { search_categories: { room_events: { search_term: "narwhal", filter: { rooms: [roomId] }, order_by: "recent" } } });
    expect(membershipOf(found.search_categories.room_events.results.map((x: any) => x.result))).toEqual({ [after]: "join", [before]: "leave" });
    const relations = await call(bob, "GET", `/_matrix/client/v1/rooms/${enc(roomId)}/relations/${enc(after)}`);
    expect(membershipOf(relations.chunk)[reply]).toBe("join");

    // Bob's own leave is `leave`; the state list carries none.
    await call(bob, "POST", `${V3}/rooms/${enc(roomId)}/leave`, {});
    const left = await call(bob, "GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=5`);
    const own = left.chunk.find((e: any) => e.type === "m.room.member" && e.state_key === bob.user_id);
    expect([own.content.membership, own.unsigned.membership]).toEqual(["leave", "leave"]);
    const state = await call(alice, "GET", `${V3}/rooms/${enc(roomId)}/state`);
    expect(state.some((e: any) => e.unsigned?.membership !== undefined)).toBe(false);
  });
});
