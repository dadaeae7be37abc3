// MSC4277 (spec v1.18) behind Synapse's `experimental_features.msc4277_enabled`, on SQLite and PostgreSQL
// and beside the pinned live Synapse with the same flag and assertions: reports of an unknown event, of an
// event in a room the reporter is not in, and of an unknown room answer 200 `{}` like a kept report, and
// nothing is kept (the admins' GET /_synapse/admin/v1/event_reports counts only the real ones); `score`,
// removed from the spec, is no longer checked; a reason that is not a string is still 400 M_BAD_JSON.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

interface Home {
  call: TestServer["call"];
  register(localpart: string): Promise<Session>;
  admin: Session;
  serverName: string;
  close(): Promise<void>;
}

const homes: [string, () => Promise<Home>][] = [
  ...backends().map((backend): [string, () => Promise<Home>] => [`Weft on ${backend}`, async () => {
    const t = await startTestServer({ backend, config: { experimental_features: { msc4277_enabled: true } } });
    await registerUser(t, "root");
    await t.hs.services.db.user.update({ where: { userId: "@root:weft.test" }, data: { isAdmin: true } });
    return { call: t.call.bind(t), register: (l) => registerUser(t, l), admin: await loginUser(t, "root"), serverName: "weft.test", close: () => t.close() };
  }]),
  ["Synapse", async () => {
    const s = await startSynapse({ config: { experimental_features: { msc4277_enabled: true } } });
    return { call: (m, p, o) => s.call(m, p, o), register: (l) => s.register(l), admin: await s.register("root", "password", { admin: true }), serverName: s.serverName, close: () => s.close() };
  }],
];

describe.each(homes)("reports that tell nothing (MSC4277) on %s", (_name, start) => {
  let home: Home;
  let alice: Session, bob: Session, mallory: Session;
  let roomId: string, otherRoom: string, eventId: string, otherEvent: string;

  const report = (who: Session, room: string, body: unknown, event?: string) =>
    home.call("POST", `${V3}/rooms/${enc(room)}/report${event ? `/${enc(event)}` : ""}`, { token: who.access_token, body });
  const kept = async () => {
    const res = await home.call("GET", "/_synapse/admin/v1/event_reports", { token: home.admin.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.total as number;
  };
  const send = async (room: string, txn: string) => (await home.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/${txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: "x" } })).json.event_id as string;

  beforeAll(async () => {
    home = await start();
    [alice, bob, mallory] = [await home.register("alice"), await home.register("bob"), await home.register("mallory")];
    roomId = (await home.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "public_chat" } })).json.room_id;
    otherRoom = (await home.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "private_chat" } })).json.room_id;
    expect((await home.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    eventId = await send(roomId, "r1");
    otherEvent = await send(otherRoom, "r2");
  }, 120_000);
  afterAll(async () => { await home?.close(); });

  it("answers 200 {} for what does not exist or cannot be seen, and keeps nothing of it", async () => {
    const before = await kept();
    const cases = [
      report(bob, roomId, { reason: "spam" }, `$nothere${Date.now()}`),
      report(mallory, otherRoom, { reason: "spam" }, otherEvent), // a room mallory is not in
      report(bob, `!unknown${Date.now()}:${home.serverName}`, { reason: "spam" }, eventId),
      report(bob, `!unknown${Date.now()}:${home.serverName}`, { reason: "spam" }), // a whole unknown room
    ];
    for (const res of await Promise.all(cases)) {
      expect([res.status, res.json], JSON.stringify(res.json)).toEqual([200, {}]);
    }
    expectMatchesSpec(await report(bob, roomId, { reason: "spam" }, `$nothere2`), "POST", `${V3}/rooms/${enc(roomId)}/report/${enc("$nothere2")}`);
    expect(await kept()).toBe(before);
  });

  it("keeps a real report, score unchecked; a reason that is not a string is still refused", async () => {
    const before = await kept();
    const res = await report(bob, roomId, { reason: "spam", score: "very bad" }, eventId);
    expect([res.status, res.json], JSON.stringify(res.json)).toEqual([200, {}]);
    expect(await kept()).toBe(before + 1);
    const bad = await report(bob, roomId, { reason: 42 }, eventId);
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    expect(await kept()).toBe(before + 1);
  });
});
