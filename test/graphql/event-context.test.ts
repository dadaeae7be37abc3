// Room.eventContext on the GraphQL face, on SQLite and PostgreSQL: the event, the events before and
// after and the state REST's /context answers, `start` paging on through Room.timeline; an event of
// another room, or a bad limit, answers REST's errcode with extensions.code.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const Q = `query ($r: String!, $e: String!, $l: Int) { room(roomId: $r) { eventContext(eventId: $e, limit: $l) {
  event { eventId body } eventsBefore { eventId } eventsAfter { eventId } state { type stateKey } start end } } }`;

describe.each(backends())("GraphQL event context on %s", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"] });

  it("answers what /context answers, and start pages on through Room.timeline", async () => {
    const roomId = await createRoom(t, alice, {});
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/c${i}`, { token: alice.access_token, body: { msgtype: "m.text", body: `m${i}` } });
      ids.push(res.json.event_id);
    }
    const res = await gql(t, Q, { r: roomId, e: ids[3], l: 4 }, alice.access_token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    const c = res.body.data.room.eventContext;
    const rest = (await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(ids[3]!)}?limit=4`, { token: alice.access_token })).json;
    expect(c.event).toEqual({ eventId: ids[3], body: "m3" });
    expect(c.eventsBefore.map((e: { eventId: string }) => e.eventId)).toEqual([ids[2], ids[1]]);
    expect(c.eventsAfter.map((e: { eventId: string }) => e.eventId)).toEqual([ids[4], ids[5]]);
    expect(c.eventsBefore.map((e: { eventId: string }) => e.eventId)).toEqual(rest.events_before.map((e: { event_id: string }) => e.event_id));
    expect(c.state.map((e: { type: string; stateKey: string }) => `${e.type}|${e.stateKey}`).sort()).toEqual(rest.state.map((e: { type: string; state_key: string }) => `${e.type}|${e.state_key}`).sort());
    expect([c.start, c.end]).toEqual([rest.start, rest.end]);

    const older = await gql(t, `query ($r: String!, $b: String!) { room(roomId: $r) { timeline(last: 1, before: $b) { edges { node { eventId } } } } }`, { r: roomId, b: c.start }, alice.access_token);
    expect(older.body.data.room.timeline.edges.map((e: { node: { eventId: string } }) => e.node.eventId)).toEqual([ids[0]]);
  });

  it("an event of another room is M_NOT_FOUND; a negative limit M_INVALID_PARAM", async () => {
    const a = await createRoom(t, alice, {});
    const b = await createRoom(t, alice, {});
    const sent = await t.call("PUT", `${V3}/rooms/${enc(b)}/send/m.room.message/x1`, { token: alice.access_token, body: { msgtype: "m.text", body: "elsewhere" } });
    const wrong = await gql(t, Q, { r: a, e: sent.json.event_id }, alice.access_token);
    expect(wrong.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_NOT_FOUND", code: "NOT_FOUND" });
    const neg = await gql(t, Q, { r: b, e: sent.json.event_id, l: -1 }, alice.access_token);
    expect(neg.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_INVALID_PARAM", code: "BAD_USER_INPUT" });
  });
});
