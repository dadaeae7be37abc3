// GET /_matrix/client/v1/room_summary/{roomIdOrAlias} (and MSC3266's unstable paths) over HTTP on SQLite
// and PostgreSQL: a restricted room's allowed_room_ids, none for other rooms, the requester's membership,
// an alias resolved, public rooms summarised without an access token, rooms the requester may not see
// (or this server does not hold) a 404, bad identifiers a 400.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V1 = "/_matrix/client/v1";
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("room summaries on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });
  const summary = (idOrAlias: string, token?: string, prefix = `${V1}/room_summary`) => t.call("GET", `${prefix}/${enc(idOrAlias)}`, token ? { token } : {});

  it("a restricted room names its allowed rooms; an invite-only room has none; membership is the requester's", async () => {
    const space = await createRoom(t, alice, { preset: "public_chat", name: "Space", creation_content: { type: "m.space" } });
    const restricted = await createRoom(t, alice, {
      preset: "public_chat",
      room_version: "8",
      initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] } }],
    });
    const r = await summary(restricted, alice.access_token);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expectMatchesSpec(r, "GET", `${V1}/room_summary/{roomIdOrAlias}`);
    expect(r.json).toMatchObject({ room_id: restricted, join_rule: "restricted", allowed_room_ids: [space], room_version: "8", membership: "join", num_joined_members: 1 });
    expect(r.json).not.toHaveProperty("children_state");

    const invite = await createRoom(t, alice, { preset: "private_chat", name: "Private" });
    const i = await summary(invite, alice.access_token);
    expect(i.status, JSON.stringify(i.json)).toBe(200);
    expect(i.json).toMatchObject({ room_id: invite, name: "Private", join_rule: "invite", membership: "join" });
    expect(i.json).not.toHaveProperty("allowed_room_ids");
    // bob may not see it until he is invited.
    expect([(await summary(invite, bob.access_token)).status, (await summary(invite, bob.access_token)).json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect((await summary(invite)).status).toBe(404);
    const inv = await t.call("POST", `${V3}/rooms/${enc(invite)}/invite`, { token: alice.access_token, body: { user_id: bob.user_id } });
    expect(inv.status).toBe(200);
    expect((await summary(invite, bob.access_token)).json).toMatchObject({ room_id: invite, membership: "invite" });
  });

  it("a public room: by alias, on the unstable paths, and without an access token (no membership then)", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat", name: "Lobby", topic: "hello", room_alias_name: "lobby", creation_content: { type: "m.space" } });
    const byAlias = await summary("#lobby:weft.test", bob.access_token);
    expect(byAlias.status, JSON.stringify(byAlias.json)).toBe(200);
    expect(byAlias.json).toMatchObject({ room_id: roomId, name: "Lobby", topic: "hello", canonical_alias: "#lobby:weft.test", room_type: "m.space", join_rule: "public", world_readable: false, guest_can_join: false, membership: "leave" });
    const unstable = await summary(roomId, bob.access_token, "/_matrix/client/unstable/im.nheko.summary/summary");
    expect([unstable.status, unstable.json.room_id]).toEqual([200, roomId]);
    const legacy = await t.call("GET", `/_matrix/client/unstable/im.nheko.summary/rooms/${enc(roomId)}/summary`, { token: bob.access_token });
    expect([legacy.status, legacy.json.room_id]).toEqual([200, roomId]);
    const anon = await summary(roomId);
    expect(anon.status, JSON.stringify(anon.json)).toBe(200);
    expect(anon.json.room_id).toBe(roomId);
    expect(anon.json).not.toHaveProperty("membership");
  });

  it("refuses what is no room id or alias, an unknown room without via, an unknown alias", async () => {
    const bad = await summary("not-a-room", alice.access_token);
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const unknown = await summary("!nowhere:weft.test", alice.access_token);
    expect([unknown.status, unknown.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const alias = await summary("#nothing:weft.test", alice.access_token);
    expect([alias.status, alias.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const badToken = await summary("#nothing:weft.test", "wft_bogus");
    expect([badToken.status, badToken.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
  });
});
