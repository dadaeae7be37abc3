// Room tags and account-data deletion (MSC3391) on the GraphQL face, on SQLite and PostgreSQL: tags set
// by one face are read by the other, deleted ones are gone from both; deleteAccountData empties what
// REST reads; bad input answers the REST face's errcode (with extensions.code) and changes nothing.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const TAGS = `query ($r: String!) { room(roomId: $r) { tags { name order content } } }`;

describe.each(backends())("GraphQL room tags and account-data deletion on %s", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"], config: { experimental_features: { msc3391_enabled: true } } });

  const ok = async (query: string, variables: Record<string, unknown>) => {
    const res = await gql(t, query, variables, alice.access_token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data;
  };
  const tagsPath = (roomId: string) => `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/tags`;

  it("setRoomTag / Room.tags / deleteRoomTag round-trip with REST", async () => {
    const roomId = await createRoom(t, alice, {});
    expect((await ok(`mutation ($r: String!) { setRoomTag(roomId: $r, tag: "m.favourite", order: 0.25) }`, { r: roomId })).setRoomTag).toBe(true);
    await ok(`mutation ($r: String!) { setRoomTag(roomId: $r, tag: "u.work") }`, { r: roomId });
    expect((await t.call("GET", tagsPath(roomId), { token: alice.access_token })).json).toEqual({ tags: { "m.favourite": { order: 0.25 }, "u.work": {} } });

    expect((await t.call("PUT", `${tagsPath(roomId)}/m.lowpriority`, { token: alice.access_token, body: { order: 1, "com.example": "x" } })).status).toBe(200);
    const tags = (await ok(TAGS, { r: roomId })).room.tags;
    expect(tags).toEqual(expect.arrayContaining([
      { name: "m.favourite", order: 0.25, content: { order: 0.25 } },
      { name: "u.work", order: null, content: {} },
      { name: "m.lowpriority", order: 1, content: { order: 1, "com.example": "x" } },
    ]));
    expect(tags).toHaveLength(3);

    expect((await ok(`mutation ($r: String!) { deleteRoomTag(roomId: $r, tag: "m.favourite") }`, { r: roomId })).deleteRoomTag).toBe(true);
    expect(Object.keys((await t.call("GET", tagsPath(roomId), { token: alice.access_token })).json.tags).sort()).toEqual(["m.lowpriority", "u.work"]);
    expect((await ok(TAGS, { r: roomId })).room.tags.map((x: { name: string }) => x.name).sort()).toEqual(["m.lowpriority", "u.work"]);
  });

  it("a bad tag or order answers the REST errcode and changes nothing", async () => {
    const roomId = await createRoom(t, alice, {});
    await ok(`mutation ($r: String!) { setRoomTag(roomId: $r, tag: "u.keep", order: 0.5) }`, { r: roomId });
    const cases: [string, Record<string, unknown>, string][] = [
      [`mutation ($r: String!) { setRoomTag(roomId: $r, tag: "u.x", order: 2) }`, { r: roomId }, "M_INVALID_PARAM"],
      [`mutation ($r: String!, $t: String!) { setRoomTag(roomId: $r, tag: $t) }`, { r: roomId, t: "x".repeat(256) }, "M_INVALID_PARAM"],
      [`mutation { setRoomTag(roomId: "not-a-room-id", tag: "u.x") }`, {}, "M_INVALID_PARAM"],
    ];
    for (const [q, v, code] of cases) {
      const res = await gql(t, q, v, alice.access_token);
      expect(res.body.errors?.[0]?.extensions, q).toMatchObject({ errcode: code, code: "BAD_USER_INPUT" });
    }
    expect((await t.call("GET", tagsPath(roomId), { token: alice.access_token })).json).toEqual({ tags: { "u.keep": { order: 0.5 } } });
  });

  it("deleteAccountData empties global and room account data as REST reads it", async () => {
    const roomId = await createRoom(t, alice, {});
    const put = (path: string) => t.call("PUT", path, { token: alice.access_token, body: { a: 1 } });
    const global = `${V3}/user/${enc(alice.user_id)}/account_data/com.example.gone`;
    const inRoom = `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId)}/account_data/com.example.gone`;
    expect((await put(global)).status).toBe(200);
    expect((await put(inRoom)).status).toBe(200);
    expect((await ok(`mutation { deleteAccountData(type: "com.example.gone") }`, {})).deleteAccountData).toBe(true);
    expect((await t.call("GET", global, { token: alice.access_token })).status).toBe(404);
    expect((await t.call("GET", inRoom, { token: alice.access_token })).json).toEqual({ a: 1 });
    await ok(`mutation ($r: String!) { deleteAccountData(type: "com.example.gone", roomId: $r) }`, { r: roomId });
    expect((await t.call("GET", inRoom, { token: alice.access_token })).status).toBe(404);
    const viewer = await ok(`{ viewer { accountData(type: "com.example.gone") } }`, {});
    expect(viewer.viewer.accountData).toBeNull();

    const bad = await gql(t, `mutation { deleteAccountData(type: "m.push_rules") }`, {}, alice.access_token);
    // m.push_rules is the push ruleset, not account data to delete (REST answers 405 M_BAD_JSON).
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_BAD_JSON", code: "BAD_USER_INPUT" });
    expect((await t.call("GET", `${V3}/pushrules/`, { token: alice.access_token })).status).toBe(200);
  });
});
