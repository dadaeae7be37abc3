// Rules that a face used to decide on its own, now decided by the domain operation, answered alike by REST
// and GraphQL: who may list a room's aliases, who may list the room directory without an access token, and
// which user ids presence accepts. (Guests: test/graphql/guest-access.test.ts; redactions:
// test/http/redaction-rule.test.ts.)
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { errcode, gql } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

/** "ok" or the errcode, for a REST answer and a GraphQL one. */
const rest = (r: { status: number; json: any }) => (r.status < 300 ? "ok" : r.json.errcode);
const graphql = (r: { body: { errors?: { message: string; extensions?: Record<string, any> }[] } }) =>
  r.body.errors?.length ? (errcode(r.body) ?? r.body.errors[0]!.message) : "ok";

describe.each(backends())("rules the faces share (%s)", (backend) => {
  const { t, users: { alice, bob, carol } } = withServer({ backend, users: ["alice", "bob", "carol"] });
  const ALIASES = `query ($r: String!) { room(roomId: $r) { aliases } }`;

  it("a room's aliases: members and, while world_readable, anyone; not a former member", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat", room_alias_name: "parity" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    const both = async (who: { access_token: string }) => ({
      rest: rest(await t.call("GET", `${V3}/rooms/${enc(roomId)}/aliases`, { token: who.access_token })),
      graphql: graphql(await gql(t, ALIASES, { r: roomId }, who.access_token)),
    });
    expect(await both(bob)).toEqual({ rest: "ok", graphql: "ok" });
    expect(await both(carol)).toEqual({ rest: "M_FORBIDDEN", graphql: "M_FORBIDDEN" });
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: bob.access_token, body: {} });
    expect(await both(bob)).toEqual({ rest: "M_FORBIDDEN", graphql: "M_FORBIDDEN" });
    await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.history_visibility`, { token: alice.access_token, body: { history_visibility: "world_readable" } });
    expect(await both(carol)).toEqual({ rest: "ok", graphql: "ok" });
    expect((await gql(t, ALIASES, { r: roomId }, carol.access_token)).body.data.room.aliases).toEqual(["#parity:weft.test"]);
  });

  it("presence refuses a malformed user id with M_INVALID_PARAM on both faces", async () => {
    const r = await t.call("GET", `${V3}/presence/${enc("not-a-user")}/status`, { token: alice.access_token });
    const g = await gql(t, `query { presence(userId: "not-a-user") { presence } }`, undefined, alice.access_token);
    expect({ rest: rest(r), graphql: graphql(g) }).toEqual({ rest: "M_INVALID_PARAM", graphql: "M_INVALID_PARAM" });
  });

  it("the room directory needs an access token by default, on both faces", async () => {
    const r = await t.call("GET", `${V3}/publicRooms`);
    const g = await gql(t, `{ publicRooms { edges { cursor } } }`);
    expect({ rest: rest(r), graphql: graphql(g) }).toEqual({ rest: "M_MISSING_TOKEN", graphql: "M_MISSING_TOKEN" });
  });
});

describe.each(backends())("with allow_public_rooms_without_auth (%s)", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"], config: { allow_public_rooms_without_auth: true } });

  it("both faces list the directory without a token; a bad token is still refused", async () => {
    const roomId = await createRoom(t, alice, { visibility: "public" });
    const r = await t.call("GET", `${V3}/publicRooms`);
    const g = await gql(t, `{ publicRooms { edges { node { roomId } } } }`);
    expect({ rest: rest(r), graphql: graphql(g) }).toEqual({ rest: "ok", graphql: "ok" });
    expect(r.json.chunk.map((c: any) => c.room_id)).toEqual([roomId]);
    expect(g.body.data.publicRooms.edges.map((e: any) => e.node.roomId)).toEqual([roomId]);
    const badR = await t.call("GET", `${V3}/publicRooms`, { token: "nope" });
    const badG = await gql(t, `{ publicRooms { edges { cursor } } }`, undefined, "nope");
    expect({ rest: rest(badR), graphql: graphql(badG) }).toEqual({ rest: "M_UNKNOWN_TOKEN", graphql: "M_UNKNOWN_TOKEN" });
  });
});
