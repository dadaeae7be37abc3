// /timestamp_to_event across two Weft servers over TLS (SQLite and PostgreSQL): B, which joined A's room
// after its messages were sent, finds them by time — asking A (GET /_matrix/federation/v1/timestamp_to_event)
// when it has nothing that way or what it has lies next to a gap — and places them as backfilled history,
// so /context and a /messages walk back from there work; A answers only servers in the room.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, TestClock } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V1 = "/_matrix/client/v1";
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("timestamp_to_event over federation on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  // One clock for both servers: B's join (stamped by B) then comes after the history, never amid it.
  const clockA = new TestClock(Date.now());
  let txn = 0;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend, clock: clockA }), startFederatedServer({ backend, clock: clockA })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** A room of A with two messages a second apart, which bob then joins from B. */
  async function roomWithHistory(): Promise<{ roomId: string; first: { id: string; ts: number }; second: { id: string; ts: number } }> {
    const roomId = await createRoom(a, alice, { preset: "public_chat" });
    const sent: { id: string; ts: number }[] = [];
    for (const body of ["first", "second"]) {
      clockA.advance(1000);
      const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
      expect(res.status).toBe(200);
      sent.push({ id: res.json.event_id, ts: clockA.now() });
    }
    clockA.advance(1000);
    const join = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    await eventually(async () => (await a.hs.services.rooms.store.membership(roomId, bob.user_id))?.membership === "join", "bob joined on A");
    return { roomId, first: sent[0]!, second: sent[1]! };
  }
  const lookup = (roomId: string, ts: number, dir: "b" | "f") => b.call("GET", `${V1}/rooms/${enc(roomId)}/timestamp_to_event?ts=${ts}&dir=${dir}`, { token: bob.access_token });

  it("finds events sent before B joined, in both directions, and keeps them as history", async () => {
    const { roomId, first, second } = await roomWithHistory();
    expect(await b.hs.services.rooms.events.get(first.id)).toBeUndefined();
    const f = await lookup(roomId, first.ts - 500, "f");
    expect([f.status, f.json], JSON.stringify(f.json)).toEqual([200, { event_id: first.id, origin_server_ts: first.ts }]);
    const stored = await b.hs.services.rooms.events.get(first.id);
    expect(stored && !stored.outlier && stored.streamOrdering < 0).toBe(true); // backfilled history
    // Looking back from after the second: B holds the first now, but next to a gap: A is asked again.
    const back = await lookup(roomId, second.ts + 500, "b");
    expect([back.status, back.json], JSON.stringify(back.json)).toEqual([200, { event_id: second.id, origin_server_ts: second.ts }]);
    // Nothing before the room was made, anywhere.
    const none = await lookup(roomId, first.ts - 100_000, "b");
    expect([none.status, none.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("from an event found that way, /context and /messages walk back through the history before it", async () => {
    const { roomId, first, second } = await roomWithHistory();
    const back = await lookup(roomId, second.ts + 500, "b");
    expect(back.json.event_id, JSON.stringify(back.json)).toBe(second.id);
    const ctx = await b.call("GET", `/_matrix/client/r0/rooms/${enc(roomId)}/context/${enc(second.id)}?limit=0`, { token: bob.access_token });
    expect(ctx.status, JSON.stringify(ctx.json)).toBe(200);
    expect(ctx.json.event.event_id).toBe(second.id);
    for (const from of [ctx.json.start, ctx.json.end]) {
      const msgs = await b.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100&from=${enc(from)}`, { token: bob.access_token });
      expect(msgs.status, JSON.stringify(msgs.json)).toBe(200);
      const ids = (msgs.json.chunk as { event_id: string }[]).map((e) => e.event_id);
      expect(ids).toContain(first.id);
      if (from === ctx.json.end) expect(ids).toContain(second.id);
    }
  });

  it("serves the lookup to servers in the room only", async () => {
    const { roomId, first } = await roomWithHistory();
    const ask = (from: FederatedServer, query: string) => {
      const path = `/_matrix/federation/v1/timestamp_to_event/${enc(roomId)}${query}`;
      return federationCall(a.baseUrl, { method: "GET", path, authorization: signedBy(from.serverName, from.hs.services.signingKeys[0]!, a.serverName, { method: "GET", path }) });
    };
    const ok = await ask(b, `?ts=${first.ts - 1}&dir=f`);
    expect([ok.status, ok.json], JSON.stringify(ok.json)).toEqual([200, { event_id: first.id, origin_server_ts: first.ts }]);
    const nothing = await ask(b, `?ts=${first.ts - 100_000}&dir=b`);
    expect([nothing.status, nothing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const badDir = await ask(b, `?ts=1&dir=sideways`);
    expect([badDir.status, badDir.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const other = await createRoom(a, alice, { preset: "public_chat" });
    const path = `/_matrix/federation/v1/timestamp_to_event/${enc(other)}?ts=1&dir=f`;
    const outsider = await federationCall(a.baseUrl, { method: "GET", path, authorization: signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, { method: "GET", path }) });
    expect([outsider.status, outsider.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
  });
});
