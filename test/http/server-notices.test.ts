// Server notices over HTTP on SQLite and PostgreSQL (Synapse's server_notices section and admin API POST
// /send_server_notice, PUT /send_server_notice/{txnId}): admins only; the system user makes the user's
// notice room (named, tagged m.server_notice, users_default -10) and invites them; the invite cannot be
// rejected (REST or GraphQL) but the room can be left once joined; a later notice re-invites to the same
// room; a retried PUT answers the same event; the system user can be neither invited nor registered;
// without the section, notices are refused.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { writeAppServiceFile } from "../helpers/appservice.ts";
import { errcode, gql } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const ADMIN = "/_synapse/admin/v1";
const enc = encodeURIComponent;
const SYSTEM = "@_server:weft.test";
const AS_TOKEN = "underscore-as";

const bridge = writeAppServiceFile({ id: "underscores", asToken: AS_TOKEN, hsToken: "underscore-hs", senderLocalpart: "underbot", userRegex: "@_.*:weft\\.test" });
const NOTICES = { system_mxid_localpart: "_server", system_mxid_display_name: "Server Alert", system_mxid_avatar_url: "", room_name: "Server Alert" };

describe.each(backends())("server notices on %s", (backend) => {
  const { t, users: { root, alice, bob } } = withServer({ backend, users: ["root", "alice", "bob"], config: { server_notices: NOTICES, app_service_config_files: [bridge] } });
  const notice = (token: string, body: Record<string, unknown>, txnId?: string) =>
    t.call(txnId ? "PUT" : "POST", `${ADMIN}/send_server_notice${txnId ? `/${enc(txnId)}` : ""}`, { token, body });
  const text = (user: string, body: string) => ({ user_id: user, content: { msgtype: "m.text", body } });
  const invitedRooms = async (token: string) => (await t.call("GET", `${V3}/sync`, { token })).json.rooms?.invite ?? {};

  it("refuses non-admins and bad requests, changing nothing", async () => {
    await t.hs.services.users.setAdmin(root.user_id, true);
    const plain = await notice(alice.access_token, text(bob.user_id, "hi"));
    expect([plain.status, plain.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const noBody = await t.call("POST", `${ADMIN}/send_server_notice`, { token: alice.access_token });
    expect([noBody.status, noBody.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const adminNoBody = await t.call("POST", `${ADMIN}/send_server_notice`, { token: root.access_token });
    expect([adminNoBody.status, adminNoBody.json.errcode]).toEqual([400, "M_NOT_JSON"]);
    for (const [body, status, code] of [
      [{ content: { body: "x" } }, 400, "M_MISSING_PARAM"],
      [{ user_id: bob.user_id }, 400, "M_MISSING_PARAM"],
      [{ user_id: bob.user_id, content: "text" }, 400, "M_BAD_JSON"],
      [text("@someone:elsewhere.test", "x"), 400, "M_INVALID_PARAM"],
      [text("@nobody:weft.test", "x"), 404, "M_NOT_FOUND"],
    ] as const) {
      const r = await notice(root.access_token, body);
      expect([r.status, r.json.errcode], JSON.stringify(body)).toEqual([status, code]);
    }
    expect(await invitedRooms(bob.access_token)).toEqual({});
    expect(await t.hs.services.rooms.store.roomsOfUser(SYSTEM, "join")).toEqual([]);
  });

  it("invites the user to their notice room, which they cannot reject, may join and leave, and are invited back to", async () => {
    await t.hs.services.users.setAdmin(root.user_id, true);
    const sent = await notice(root.access_token, text(alice.user_id, "hello from server notices!"));
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    const eventId = sent.json.event_id as string;
    const invites = await invitedRooms(alice.access_token);
    const [roomId] = Object.keys(invites);
    expect(roomId).toBeDefined();
    const stripped = invites[roomId!].invite_state.events as { type: string; sender: string; content: Record<string, unknown> }[];
    expect(stripped[0]!.sender).toBe(SYSTEM);
    expect(stripped.every((e) => e.sender === SYSTEM)).toBe(true);
    expect(stripped.find((e) => e.type === "m.room.name")?.content).toEqual({ name: "Server Alert" });
    const tags = await t.call("GET", `${V3}/user/${enc(alice.user_id)}/rooms/${enc(roomId!)}/tags`, { token: alice.access_token });
    expect(tags.json.tags).toEqual({ "m.server_notice": {} });

    // The invite stays.
    const reject = await t.call("POST", `${V3}/rooms/${enc(roomId!)}/leave`, { token: alice.access_token, body: {} });
    expect([reject.status, reject.json.errcode]).toEqual([403, "M_CANNOT_LEAVE_SERVER_NOTICE_ROOM"]);
    const viaGraphql = await gql(t, `mutation ($r: String!) { leaveRoom(roomId: $r) }`, { r: roomId }, alice.access_token);
    expect(errcode(viaGraphql.body)).toBe("M_CANNOT_LEAVE_SERVER_NOTICE_ROOM");
    expect((await t.hs.services.rooms.store.membership(roomId!, alice.user_id))?.membership).toBe("invite");

    const join = await t.call("POST", `${V3}/join/${enc(roomId!)}`, { token: alice.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    const msgs = await t.call("GET", `${V3}/rooms/${enc(roomId!)}/messages?dir=b&limit=50`, { token: alice.access_token });
    expect(msgs.json.chunk.map((e: { event_id: string }) => e.event_id)).toContain(eventId);
    const system = await t.call("GET", `${V3}/rooms/${enc(roomId!)}/state/m.room.member/${enc(SYSTEM)}`, { token: alice.access_token });
    expect(system.json).toEqual({ membership: "join", displayname: "Server Alert" });
    const pl = await t.call("GET", `${V3}/rooms/${enc(roomId!)}/state/m.room.power_levels`, { token: alice.access_token });
    expect(pl.json.users_default).toBe(-10);
    const talk = await t.call("PUT", `${V3}/rooms/${enc(roomId!)}/send/m.room.message/t1`, { token: alice.access_token, body: { msgtype: "m.text", body: "reply" } });
    expect([talk.status, talk.json.errcode]).toEqual([403, "M_FORBIDDEN"]);

    const leave = await t.call("POST", `${V3}/rooms/${enc(roomId!)}/leave`, { token: alice.access_token, body: {} });
    expect(leave.status).toBe(200);
    const again = await notice(root.access_token, text(alice.user_id, "second"));
    expect(again.status).toBe(200);
    expect(Object.keys(await invitedRooms(alice.access_token))).toEqual([roomId]);
    expect(await t.hs.services.rooms.store.roomsOfUser(SYSTEM, "join")).toEqual([roomId]);
  });

  it("a PUT with a transaction id answers the same event when retried; a state notice", async () => {
    await t.hs.services.users.setAdmin(root.user_id, true);
    const first = await notice(root.access_token, text(bob.user_id, "once"), "txn-1");
    const retry = await notice(root.access_token, text(bob.user_id, "once"), "txn-1");
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.json.event_id).toBe(first.json.event_id);
    const other = await notice(root.access_token, text(bob.user_id, "once"), "txn-2");
    expect(other.json.event_id).not.toBe(first.json.event_id);
    const state = await notice(root.access_token, { user_id: bob.user_id, type: "m.room.topic", state_key: "", content: { topic: "maintenance tonight" } });
    expect(state.status, JSON.stringify(state.json)).toBe(200);
    const stored = await t.hs.services.rooms.events.get(state.json.event_id);
    expect([stored?.pdu.type, stored?.pdu.state_key, stored?.pdu.sender]).toEqual(["m.room.topic", "", SYSTEM]);
  });

  it("the system user can be neither invited nor registered", async () => {
    const roomId = await createRoom(t, bob, { preset: "private_chat" });
    const invite = await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: bob.access_token, body: { user_id: SYSTEM } });
    expect([invite.status, invite.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const reg = await t.call("POST", `${V3}/register`, { token: AS_TOKEN, body: { type: "m.login.application_service", username: "_server" } });
    expect([reg.status, reg.json.errcode]).toEqual([400, "M_EXCLUSIVE"]);
    const other = await t.call("POST", `${V3}/register`, { token: AS_TOKEN, body: { type: "m.login.application_service", username: "_service" } });
    expect(other.status, JSON.stringify(other.json)).toBe(200);
  });
});

describe.each(backends())("server notices switched off on %s", (backend) => {
  const { t, users: { root, alice } } = withServer({ backend, users: ["root", "alice"] });

  it("refuses to send one", async () => {
    await t.hs.services.users.setAdmin(root.user_id, true);
    const r = await t.call("POST", `${ADMIN}/send_server_notice`, { token: root.access_token, body: { user_id: alice.user_id, content: { msgtype: "m.text", body: "x" } } });
    expect([r.status, r.json.errcode, r.json.error]).toEqual([400, "M_UNKNOWN", "Server notices are not enabled on this server"]);
  });
});
