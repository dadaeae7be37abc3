// Reporting over HTTP on SQLite and PostgreSQL: POST /rooms/{roomId}/report/{eventId} (joined reporters,
// visible events, reason and score checked) and POST /rooms/{roomId}/report, stored for the admins and
// listed by GET /_synapse/admin/v1/event_reports (and /_impl/admin/v1): paging, order, filters, admins only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("reports on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let carol: Session;
  let admin: Session;
  let roomId: string;
  let eventId: string;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
    carol = await registerUser(t, "carol");
    await registerUser(t, "root");
    await t.hs.services.db.user.update({ where: { userId: "@root:weft.test" }, data: { isAdmin: true } });
    admin = await loginUser(t, "root");
    roomId = await createRoom(t, alice, { preset: "public_chat", name: "Reported room" });
    expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    eventId = (await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: "bad" } })).json.event_id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const reportPath = (room: string, event?: string) => `${V3}/rooms/${enc(room)}/report${event ? `/${enc(event)}` : ""}`;
  const count = () => t.hs.services.db.contentReport.count();
  function expectError(res: { status: number; json: any }, status: number, errcode: string) {
    expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
  }

  it("reports an event and a room; admins list event reports", async () => {
    const p = reportPath(roomId, eventId);
    const res = await t.call("POST", p, { token: bob.access_token, body: { reason: "spam", score: -100 } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", p);
    expect(res.json).toEqual({});
    expect((await t.call("POST", p, { token: alice.access_token, body: {} })).status).toBe(200);
    const rp = reportPath(roomId);
    const room = await t.call("POST", rp, { token: carol.access_token, body: { reason: "" } });
    expect(room.status, JSON.stringify(room.json)).toBe(200);
    expectMatchesSpec(room, "POST", rp);

    for (const prefix of ["/_synapse/admin/v1", "/_impl/admin/v1"]) {
      const list = await t.call("GET", `${prefix}/event_reports`, { token: admin.access_token });
      expect(list.status, JSON.stringify(list.json)).toBe(200);
      expect(list.json.total).toBe(2);
      expect(list.json.next_token).toBeUndefined();
      expect(list.json.event_reports[1]).toMatchObject({
        room_id: roomId, event_id: eventId, user_id: bob.user_id, sender: alice.user_id, reason: "spam", score: -100, name: "Reported room", canonical_alias: null,
      });
      expect(typeof list.json.event_reports[1].id).toBe("number");
      expect(typeof list.json.event_reports[1].received_ts).toBe("number");
      expect(list.json.event_reports[0]).toMatchObject({ user_id: alice.user_id, reason: null, score: null });
    }
    const first = await t.call("GET", `/_synapse/admin/v1/event_reports?limit=1&dir=f`, { token: admin.access_token });
    expect(first.json.event_reports.map((r: any) => r.user_id)).toEqual([bob.user_id]);
    expect(first.json.next_token).toBe(1);
    const second = await t.call("GET", `/_synapse/admin/v1/event_reports?limit=1&dir=f&from=1`, { token: admin.access_token });
    expect(second.json.event_reports.map((r: any) => r.user_id)).toEqual([alice.user_id]);
    expect(second.json.next_token).toBeUndefined();
    const byUser = await t.call("GET", `/_synapse/admin/v1/event_reports?user_id=${enc(bob.user_id)}`, { token: admin.access_token });
    expect(byUser.json.total).toBe(1);
    const byRoom = await t.call("GET", `/_synapse/admin/v1/event_reports?room_id=${enc("!other:weft.test")}`, { token: admin.access_token });
    expect(byRoom.json).toMatchObject({ event_reports: [], total: 0 });
    const rows = await t.hs.services.db.contentReport.findMany({ where: { eventId: null } });
    expect(rows.map((r) => [r.roomId, r.userId, r.reason])).toEqual([[roomId, carol.user_id, ""]]);
  });

  it("refuses reports that are not allowed or malformed, storing nothing", async () => {
    const before = await count();
    const p = reportPath(roomId, eventId);
    expectError(await t.call("POST", p, { token: carol.access_token, body: { reason: "x" } }), 404, "M_NOT_FOUND"); // not joined
    expectError(await t.call("POST", reportPath(roomId, "$unknown"), { token: bob.access_token, body: {} }), 404, "M_NOT_FOUND");
    expectError(await t.call("POST", reportPath("!nope:weft.test", eventId), { token: bob.access_token, body: {} }), 404, "M_NOT_FOUND");
    const other = await createRoom(t, alice);
    expectError(await t.call("POST", reportPath(other, eventId), { token: alice.access_token, body: {} }), 404, "M_NOT_FOUND"); // event of another room
    expectError(await t.call("POST", p, { token: bob.access_token, body: { score: 5 } }), 400, "M_INVALID_PARAM");
    expectError(await t.call("POST", p, { token: bob.access_token, body: { score: "-5" } }), 400, "M_INVALID_PARAM");
    expectError(await t.call("POST", p, { token: bob.access_token, body: { reason: 7 } }), 400, "M_BAD_JSON");
    expectError(await t.call("POST", p, { token: bob.access_token, raw: "{not json" }), 400, "M_NOT_JSON");
    expectError(await t.call("POST", p, { body: {} }), 401, "M_MISSING_TOKEN");
    expectError(await t.call("POST", reportPath("!nope:weft.test"), { token: bob.access_token, body: { reason: "x" } }), 404, "M_NOT_FOUND");
    expectError(await t.call("POST", reportPath(roomId), { token: bob.access_token, body: {} }), 400, "M_MISSING_PARAM");
    expect(await count()).toBe(before);
  });

  it("the admin list is for admins only and checks its parameters", async () => {
    expectError(await t.call("GET", "/_synapse/admin/v1/event_reports", { token: bob.access_token }), 403, "M_FORBIDDEN");
    expectError(await t.call("GET", "/_synapse/admin/v1/event_reports"), 401, "M_MISSING_TOKEN");
    expectError(await t.call("GET", "/_synapse/admin/v1/event_reports?from=-1", { token: admin.access_token }), 400, "M_INVALID_PARAM");
    expectError(await t.call("GET", "/_synapse/admin/v1/event_reports?limit=-1", { token: admin.access_token }), 400, "M_INVALID_PARAM");
    expectError(await t.call("GET", "/_synapse/admin/v1/event_reports?dir=x", { token: admin.access_token }), 400, "M_INVALID_PARAM");
  });
});
