// Thread subscriptions (MSC4306) on the GraphQL face, on SQLite and PostgreSQL, with msc4306_enabled:
// subscribeToThread / Room.threadSubscription / unsubscribeFromThread as REST reads them, automatic
// ones with their cause, the conflicting-unsubscription refusal and bad ids with REST's errcodes.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const MSC = "/_matrix/client/unstable/io.element.msc4306";
const enc = encodeURIComponent;
const READ = `query ($r: String!, $e: String!) { room(roomId: $r) { threadSubscription(threadRootId: $e) { threadRootId automatic } } }`;
const SUB = `mutation ($r: String!, $e: String!, $c: String) { subscribeToThread(roomId: $r, threadRootId: $e, automaticCause: $c) }`;
const UNSUB = `mutation ($r: String!, $e: String!) { unsubscribeFromThread(roomId: $r, threadRootId: $e) }`;

describe.each(backends())("GraphQL thread subscriptions on %s", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"], config: { experimental_features: { msc4306_enabled: true } } });

  const ok = async (query: string, variables: Record<string, unknown>) => {
    const res = await gql(t, query, variables, alice.access_token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data;
  };
  let txn = 0;
  const send = async (roomId: string, content: Record<string, unknown>) =>
    (await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: "x", ...content } })).json.event_id as string;
  const restSub = (roomId: string, root: string) => t.call("GET", `${MSC}/rooms/${enc(roomId)}/thread/${enc(root)}/subscription`, { token: alice.access_token });

  it("subscribe, read, unsubscribe: both faces agree", async () => {
    const roomId = await createRoom(t, alice, {});
    const root = await send(roomId, {});
    expect((await ok(READ, { r: roomId, e: root })).room.threadSubscription).toBeNull();
    expect((await ok(SUB, { r: roomId, e: root })).subscribeToThread).toBe(true);
    expect((await restSub(roomId, root)).json).toEqual({ automatic: false });
    expect((await ok(READ, { r: roomId, e: root })).room.threadSubscription).toEqual({ threadRootId: root, automatic: false });
    expect((await ok(UNSUB, { r: roomId, e: root })).unsubscribeFromThread).toBe(true);
    expect((await restSub(roomId, root)).status).toBe(404);

    // A subscription made over REST, ended over GraphQL; then automatic ones, caused by events of the thread.
    const inThread = await send(roomId, { "m.relates_to": { rel_type: "m.thread", event_id: root } });
    expect((await t.call("PUT", `${MSC}/rooms/${enc(roomId)}/thread/${enc(root)}/subscription`, { token: alice.access_token, body: {} })).status).toBe(200);
    await ok(UNSUB, { r: roomId, e: root });
    // The cause was seen before the unsubscription: refused, nothing changes.
    const conflict = await gql(t, SUB, { r: roomId, e: root, c: inThread }, alice.access_token);
    expect(conflict.body.errors?.[0]?.extensions?.errcode).toBe("IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION");
    expect((await ok(READ, { r: roomId, e: root })).room.threadSubscription).toBeNull();
    const later = await send(roomId, { "m.relates_to": { rel_type: "m.thread", event_id: root } });
    await ok(SUB, { r: roomId, e: root, c: later });
    expect((await restSub(roomId, root)).json).toEqual({ automatic: true });
  });

  it("bad ids and a cause outside the thread answer REST's errcodes", async () => {
    const roomId = await createRoom(t, alice, {});
    const root = await send(roomId, {});
    const other = await send(roomId, {});
    const cases: [Record<string, unknown>, string][] = [
      [{ r: roomId, e: "not-an-event" }, "M_INVALID_PARAM"],
      [{ r: "not-a-room", e: root }, "M_INVALID_PARAM"],
      [{ r: roomId, e: "$nosuch" }, "M_NOT_FOUND"],
      [{ r: roomId, e: root, c: other }, "IO.ELEMENT.MSC4306.M_NOT_IN_THREAD"],
    ];
    for (const [v, code] of cases) {
      const res = await gql(t, SUB, v, alice.access_token);
      expect(res.body.errors?.[0]?.extensions?.errcode, JSON.stringify(v)).toBe(code);
      expect(res.body.errors?.[0]?.extensions?.code).not.toBe("INTERNAL_SERVER_ERROR");
    }
    expect((await restSub(roomId, root)).status).toBe(404);
  });
});
