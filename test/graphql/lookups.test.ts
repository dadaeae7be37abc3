// Alias resolution, directory visibility, timestamp_to_event, OpenID tokens and refresh tokens on the
// GraphQL face, on SQLite and PostgreSQL: each answers what its REST twin answers (the OpenID token is
// accepted by the federation userinfo endpoint; refreshed tokens work and the old access token's
// successor is the new one); bad input carries REST's errcode and extensions.code.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("GraphQL lookups and tokens on %s", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"] });

  const ok = async (query: string, variables: Record<string, unknown>, token?: string) => {
    const res = await gql(t, query, variables, token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data;
  };
  const server = () => alice.user_id.split(":")[1]!;

  it("resolveAlias and directoryVisibility agree with REST; an unknown alias is M_NOT_FOUND", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat", room_alias_name: "lookup", visibility: "public" });
    const alias = `#lookup:${server()}`;
    const resolved = (await ok(`query ($a: String!) { resolveAlias(alias: $a) { roomId servers } }`, { a: alias })).resolveAlias;
    const rest = (await t.call("GET", `${V3}/directory/room/${enc(alias)}`)).json;
    expect(resolved).toEqual({ roomId, servers: rest.servers });
    expect(rest.room_id).toBe(roomId);
    expect((await ok(`query ($r: String!) { directoryVisibility(roomId: $r) }`, { r: roomId })).directoryVisibility).toBe("public");
    const hidden = await createRoom(t, alice, {});
    expect((await ok(`query ($r: String!) { directoryVisibility(roomId: $r) }`, { r: hidden })).directoryVisibility).toBe("private");
    expect((await t.call("GET", `${V3}/directory/list/room/${enc(hidden)}`)).json).toEqual({ visibility: "private" });
    const missing = await gql(t, `query ($a: String!) { resolveAlias(alias: $a) { roomId } }`, { a: `#nosuch:${server()}` });
    expect(missing.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_NOT_FOUND", code: "NOT_FOUND" });
  });

  it("eventAtTimestamp finds the event REST finds; a bad direction is M_INVALID_PARAM", async () => {
    const roomId = await createRoom(t, alice, {});
    const sent = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/ts1`, { token: alice.access_token, body: { msgtype: "m.text", body: "when" } });
    const now = Date.now() + 60_000;
    const Q = `query ($r: String!, $ts: Float!, $d: String!) { eventAtTimestamp(roomId: $r, ts: $ts, direction: $d) { eventId originServerTs } }`;
    const found = (await ok(Q, { r: roomId, ts: now, d: "b" }, alice.access_token)).eventAtTimestamp;
    const rest = (await t.call("GET", `/_matrix/client/v1/rooms/${enc(roomId)}/timestamp_to_event?ts=${now}&dir=b`, { token: alice.access_token })).json;
    expect(found).toEqual({ eventId: rest.event_id, originServerTs: rest.origin_server_ts });
    expect(found.eventId).toBe(sent.json.event_id);
    const bad = await gql(t, Q, { r: roomId, ts: now, d: "sideways" }, alice.access_token);
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_INVALID_PARAM", code: "BAD_USER_INPUT" });
  });

  it("requestOpenIdToken gives a token the federation userinfo endpoint accepts", async () => {
    const token = (await ok(`mutation { requestOpenIdToken { accessToken tokenType matrixServerName expiresIn } }`, {}, alice.access_token)).requestOpenIdToken;
    expect(token).toMatchObject({ tokenType: "Bearer", matrixServerName: server(), expiresIn: 3600 });
    const info = await t.call("GET", `/_matrix/federation/v1/openid/userinfo?access_token=${enc(token.accessToken)}`);
    expect(info.json).toEqual({ sub: alice.user_id });
  });

  it("refreshTokens trades a refresh token for working tokens; an unknown one is M_UNKNOWN_TOKEN", async () => {
    const login = await t.call("POST", `${V3}/login`, { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "password", refresh_token: true } });
    expect(login.status).toBe(200);
    const next = (await ok(`mutation ($t: String!) { refreshTokens(refreshToken: $t) { accessToken refreshToken expiresInMs } }`, { t: login.json.refresh_token })).refreshTokens;
    expect(next.accessToken).not.toBe(login.json.access_token);
    expect(next.refreshToken).not.toBe(login.json.refresh_token);
    expect(typeof next.expiresInMs).toBe("number");
    const me = await t.call("GET", `${V3}/account/whoami`, { token: next.accessToken });
    expect(me.json).toMatchObject({ user_id: alice.user_id, device_id: login.json.device_id });
    const bad = await gql(t, `mutation { refreshTokens(refreshToken: "nosuch") { accessToken } }`, {});
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_UNKNOWN_TOKEN", code: "UNAUTHENTICATED" });
  });
});
