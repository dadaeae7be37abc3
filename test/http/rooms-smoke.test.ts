import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

describe("rooms smoke", () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });
  it.each(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"])("v%s: create, invite, join, send, paginate, redact", async (v) => {
    const a = await registerUser(t, `alice${v}`);
    const b = await registerUser(t, `bob${v}`);
    const c = await t.call("POST", "/_matrix/client/v3/createRoom", { token: a.access_token, body: { room_version: v, name: "Test", topic: "T", invite: [b.user_id] } });
    expect(c.status, JSON.stringify(c.json)).toBe(200);
    const roomId = c.json.room_id;
    const j = await t.call("POST", `/_matrix/client/v3/join/${encodeURIComponent(roomId)}`, { token: b.access_token, body: {} });
    expect(j.status, JSON.stringify(j.json)).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const sres = await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/t${i}`, { token: a.access_token, body: { msgtype: "m.text", body: `hi ${i}` } });
      expect(sres.status, JSON.stringify(sres.json)).toBe(200);
      ids.push(sres.json.event_id);
    }
    const again = await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/t0`, { token: a.access_token, body: { msgtype: "m.text", body: `hi 0` } });
    expect(again.json.event_id).toBe(ids[0]);
    const m = await t.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=3`, { token: b.access_token });
    expect(m.status, JSON.stringify(m.json)).toBe(200);
    expect(m.json.chunk.map((e: any) => e.event_id)).toEqual([ids[4], ids[3], ids[2]]);
    const m2 = await t.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=100&from=${m.json.end}`, { token: b.access_token });
    expect(m2.json.end).toBeUndefined();
    const r = await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/redact/${encodeURIComponent(ids[1]!)}/r1`, { token: a.access_token, body: { reason: "x" } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const ev = await t.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(ids[1]!)}`, { token: b.access_token });
    expect(ev.json.content).toEqual({});
    expect(ev.json.unsigned.redacted_because.event_id).toBe(r.json.event_id);
    const st = await t.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/state/m.room.name`, { token: b.access_token });
    expect(st.json).toEqual({ name: "Test" });
  });
});
