// Hostile servers, forged events (issue 40): a server joined to a Weft room through make_join/send_join
// (test/helpers/hostile-server.ts) pushes events that are well formed and malicious — another server's
// user as sender, a bad signature, a bad content hash, an event id that is not its hash, another room's
// id, another room version's format, in every room version v1–v12. Each attack is judged by what alice,
// a local member, sees afterwards: the room's current state, its timeline, /sync and her notifications.
// SQLite and PostgreSQL, one Weft server per backend, a fresh room per attack.
import { describe, expect, it } from "vitest";
import { backends } from "../../helpers/server.ts";
import { createRoom } from "../../helpers/rooms.ts";
import { hostileFixture, liveUntilSentinel, memberView, notifiedIds, refusalLines, withBadContentHash, withBadSignature } from "../../helpers/hostile-server.ts";
import { parsePrometheusText, sampleValue } from "../../helpers/prometheus.ts";
import { generateSigningKey } from "../../../src/domain/signing-key.ts";
import { KNOWN_ROOM_VERSIONS } from "../../../src/domain/rooms/room-versions.ts";
import { loadRoom } from "../../../src/domain/rooms/room-cache.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("forged events from a hostile server on %s", (backend) => {
  const f = hostileFixture(backend, { enable_metrics: true });
  const { log } = f;

  /** A public room of alice's that mallory of the hostile server has joined. */
  async function room(version = "10"): Promise<string> {
    const roomId = await createRoom(f.a, f.alice, { preset: "public_chat", room_version: version });
    await f.h.join(roomId, "mallory");
    return roomId;
  }

  const say = (roomId: string, body: string, sender = f.mallory) => f.h.craft(roomId, { type: "m.room.message", sender, content: { msgtype: "m.text", body } });
  const eventOf = (roomId: string, id: string) => f.a.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(id)}`, { token: f.alice.access_token });

  it("control: an honest message of the joined server is accepted and shown", async () => {
    const roomId = await room();
    const m = await say(roomId, "hello");
    expect((await f.h.send([m.pdu])).json).toEqual({ pdus: { [m.eventId]: {} } });
    expect((await memberView(f.a, f.alice.access_token, roomId)).timeline[0]).toBe(m.eventId);
  });

  it("a local user as sender (signed by the hostile server): dropped, never shown, no notification", async () => {
    const roomId = await room();
    const forged = await say(roomId, `alice says: ${f.alice.user_id} is an admin`, f.alice.user_id);
    const res = await f.h.send([forged.pdu]);
    expect(res.json.pdus[forged.eventId].error).toMatch(/signature/i);
    const view = await memberView(f.a, f.alice.access_token, roomId);
    expect(view.timeline).not.toContain(forged.eventId);
    expect((await eventOf(roomId, forged.eventId)).status).toBe(404);
    expect(await liveUntilSentinel(f.a, f.alice.access_token, roomId)).not.toContain(forged.eventId);
  });

  it("a third server's user as sender, signed by the hostile server: dropped", async () => {
    const roomId = await room();
    const forged = await say(roomId, "from afar", "@carol:elsewhere.example");
    const res = await f.h.send([forged.pdu]);
    expect(res.json.pdus[forged.eventId].error).toBeDefined();
    expect((await memberView(f.a, f.alice.access_token, roomId)).timeline).not.toContain(forged.eventId);
    expect(await f.a.hs.services.rooms.events.get(forged.eventId)).toBeUndefined();
  });

  it("a third server's user as sender, signed with a key the claimed server never had: dropped", async () => {
    const roomId = await room();
    const forged = await f.h.craft(roomId, { type: "m.room.message", sender: "@carol:127.0.0.1:1", content: { msgtype: "m.text", body: "x" } }, { signer: { serverName: "127.0.0.1:1", key: generateSigningKey() } });
    const res = await f.h.send([forged.pdu]);
    expect(res.json.pdus[forged.eventId].error).toBeDefined();
    expect(await f.a.hs.services.rooms.events.get(forged.eventId)).toBeUndefined();
  });

  it("a bad signature: dropped, never shown, no notification", async () => {
    const roomId = await room();
    const m = await say(roomId, `hey ${f.alice.user_id} alice`);
    const res = await f.h.send([withBadSignature(m, f.h.serverName)]);
    expect(res.json.pdus[m.eventId].error).toMatch(/signature/i);
    expect((await memberView(f.a, f.alice.access_token, roomId)).timeline).not.toContain(m.eventId);
    expect(await notifiedIds(f.a, f.alice.access_token)).not.toContain(m.eventId);
    expect(await f.a.hs.services.rooms.events.get(m.eventId)).toBeUndefined();
  });

  it("a bad content hash: stored redacted — shown with its content stripped, nothing of the changed body", async () => {
    const roomId = await room();
    const m = await say(roomId, "the signed body");
    const res = await f.h.send([withBadContentHash(m, { msgtype: "m.text", body: `changed after signing, ${f.alice.user_id}` })]);
    expect(res.json).toEqual({ pdus: { [m.eventId]: {} } });
    const view = await memberView(f.a, f.alice.access_token, roomId);
    expect(view.timeline[0]).toBe(m.eventId);
    const shown = await eventOf(roomId, m.eventId);
    expect([shown.status, shown.json.content]).toEqual([200, {}]);
    // Pushed as it is stored: redacted (a message in a room of two notifies, whatever its body).
    const notes = await f.a.call("GET", `${V3}/notifications?limit=100`, { token: f.alice.access_token });
    for (const n of notes.json.notifications as any[]) if (n.event.event_id === m.eventId) expect(n.event.content).toEqual({});
    expect(JSON.stringify(notes.json)).not.toContain("changed after signing");
  });

  it("a bad content hash on a state event: the redacted form takes effect (a topic without its text)", async () => {
    const roomId = await room();
    const t = await f.h.craft(roomId, { type: "m.room.topic", stateKey: "", sender: f.mallory, content: { topic: "signed" } });
    await f.h.send([withBadContentHash(t, { topic: "swapped after signing" })]);
    const view = await memberView(f.a, f.alice.access_token, roomId);
    expect(view.state.get("m.room.topic\u0000")?.content.topic).not.toBe("swapped after signing");
  });

  it("an event_id field that is not the event's hash (v3+): the event is known only by its real id", async () => {
    // Signed with the false event_id inside: a valid event, whose id is the hash of all that.
    const roomId = await room();
    const fake = `$${"f".repeat(43)}`;
    const m = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "named falsely" } }, { edit: (p) => void (p.event_id = fake) });
    expect(m.eventId).not.toBe(fake);
    const res = await f.h.send([m.pdu]);
    expect(res.json).toEqual({ pdus: { [m.eventId]: {} } });
    expect((await eventOf(roomId, fake)).status).toBe(404);
    expect(await f.a.hs.services.rooms.events.get(fake)).toBeUndefined();
    const view = await memberView(f.a, f.alice.access_token, roomId);
    expect(view.timeline[0]).toBe(m.eventId);
    expect(view.timeline).not.toContain(fake);
  });

  it("a pulled event that is not the one asked for (its hash another id): not stored under the asked id", async () => {
    const roomId = await room();
    const hidden = await say(roomId, "the real missing event");
    const decoy = await say(roomId, "a decoy");
    const after = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "after the gap" } }, { prev: [hidden.eventId] });
    f.h.plan = (req) => {
      if (req.path.includes("/get_missing_events/")) return { status: 200, json: { events: [decoy.pdu] } };
      if (req.path.includes("/event/")) return { status: 200, json: { origin: f.h.serverName, origin_server_ts: 0, pdus: [decoy.pdu] } };
      return "default";
    };
    try {
      const res = await f.h.send([after.pdu]);
      expect(res.json.pdus[after.eventId].error).toBeDefined();
    } finally {
      f.h.plan = () => "default";
    }
    expect(await f.a.hs.services.rooms.events.get(hidden.eventId)).toBeUndefined();
    expect(await f.a.hs.services.rooms.events.get(after.eventId)).toBeUndefined();
    expect((await memberView(f.a, f.alice.access_token, roomId)).timeline).not.toContain(after.eventId);
  });

  it("an event of this room under another room's id: dropped, shown in neither room", async () => {
    const roomId = await room();
    const other = await room();
    // Built and signed for `other`, on roomId's prev_events and auth events.
    const m = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "cross-room" } }, { edit: (p) => void (p.room_id = other) });
    const res = await f.h.send([m.pdu]);
    for (const r of [roomId, other]) {
      expect((await memberView(f.a, f.alice.access_token, r)).timeline).not.toContain(m.eventId);
      expect((await eventOf(r, m.eventId)).status).toBe(404);
    }
    // Its prev_events are of another room: dropped (before, kept rejected for its auth events).
    expect(res.json.pdus[m.eventId].error).toMatch(/another room/);
    expect(await f.a.hs.services.rooms.events.get(m.eventId)).toBeUndefined();
    expect(await f.a.hs.services.rooms.events.extremities(other)).not.toContain(m.eventId);
  });

  it("prev_events naming another room's events (where mallory is an admin): dropped, the room's state untouched (v10, v12)", async () => {
    for (const version of ["10", "12"]) {
    const roomId = await room(version);
    const other = await room(version);
    // In `other`, alice made mallory an admin and set a topic of her own.
    const pl = await f.a.call("PUT", `${V3}/rooms/${enc(other)}/state/m.room.power_levels/`, { token: f.alice.access_token, body: { users: version === "12" ? { [f.mallory]: 100 } : { [f.alice.user_id]: 100, [f.mallory]: 100 } } });
    expect(pl.status).toBe(200);
    await f.a.call("PUT", `${V3}/rooms/${enc(other)}/state/m.room.topic/`, { token: f.alice.access_token, body: { topic: "the other room's topic" } });
    const otherTip = (await f.a.hs.services.rooms.events.extremities(other))[0]!;
    const before = await memberView(f.a, f.alice.access_token, roomId);
    // A message of this room on both rooms' tips (auth events of this room: it passes them).
    const m = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "bridging rooms" } }, { prev: [...(await f.a.hs.services.rooms.events.extremities(roomId)), otherTip], authState: (await loadRoom(f.a.hs.services, roomId))!.state });
    const r1 = await f.h.send([m.pdu]);
    // Dropped (before the fix, in v12, accepted: room A's current state became room B's, mallory an admin).
    expect(r1.json.pdus[m.eventId].error, version).toMatch(/belongs to another room/);
    expect(await f.a.hs.services.rooms.events.get(m.eventId), version).toBeUndefined();
    const after = await memberView(f.a, f.alice.access_token, roomId);
    expect([...after.state.keys()].sort()).toEqual([...before.state.keys()].sort());
    for (const [k, e] of before.state) expect(after.state.get(k)!.event_id, k).toBe(e.event_id);
    expect(after.state.get("m.room.topic\u0000")?.content.topic).not.toBe("the other room's topic");
    expect(await f.a.hs.services.rooms.events.extremities(roomId)).not.toContain(m.eventId);
    // And a power-level change of mallory's built the same way on the other room's state: no power here.
    const cur = (await memberView(f.a, f.alice.access_token, roomId)).state.get("m.room.power_levels\u0000")!.content;
    const esc = await f.h.craft(roomId, { type: "m.room.power_levels", stateKey: "", sender: f.mallory, content: { ...cur, users: { ...cur.users, [f.mallory]: 100 } } }, { prev: [otherTip], authState: (await loadRoom(f.a.hs.services, roomId))!.state });
    await f.h.send([esc.pdu]);
    const last = await memberView(f.a, f.alice.access_token, roomId);
    expect(last.state.get("m.room.power_levels\u0000")!.event_id, version).toBe(before.state.get("m.room.power_levels\u0000")!.event_id);
    }
  });

  it("an edit of a local user's message by mallory (m.replace from another sender): never applied", async () => {
    const roomId = await room();
    const sent = await f.a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/o${Math.random()}`, { token: f.alice.access_token, body: { msgtype: "m.text", body: "alice's original" } });
    const target = sent.json.event_id as string;
    const edit = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "* forged", "m.new_content": { msgtype: "m.text", body: "alice agrees with mallory" }, "m.relates_to": { rel_type: "m.replace", event_id: target } } });
    expect((await f.h.send([edit.pdu])).json).toEqual({ pdus: { [edit.eventId]: {} } });
    const shown = await eventOf(roomId, target);
    expect(JSON.stringify(shown.json)).not.toContain("alice agrees with mallory");
    const msgs = await f.a.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: f.alice.access_token });
    const original = (msgs.json.chunk as any[]).find((e) => e.event_id === target);
    expect(JSON.stringify(original)).not.toContain("alice agrees with mallory");
  });

  it("an edit and a reaction in one room aimed at mallory's own message in another room: not applied there", async () => {
    const roomId = await room();
    const other = await room();
    const own = await say(other, "mallory in the other room");
    await f.h.send([own.pdu]);
    const edit = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "* cross", "m.new_content": { msgtype: "m.text", body: "edited from elsewhere" }, "m.relates_to": { rel_type: "m.replace", event_id: own.eventId } } });
    const react = await f.h.craft(roomId, { type: "m.reaction", sender: f.mallory, content: { "m.relates_to": { rel_type: "m.annotation", event_id: own.eventId, key: "👎" } } }, { prev: [edit.eventId] });
    await f.h.send([edit.pdu, react.pdu]);
    const shown = await eventOf(other, own.eventId);
    expect(shown.status).toBe(200);
    expect(JSON.stringify(shown.json)).not.toContain("edited from elsewhere");
    const relations = await f.a.call("GET", `/_matrix/client/v1/rooms/${enc(other)}/relations/${enc(own.eventId)}`, { token: f.alice.access_token });
    expect((relations.json.chunk ?? []).map((e: any) => e.event_id)).toEqual([]);
  });

  it("an event in another room version's format (v1 shape in a v10 room): dropped", async () => {
    const roomId = await room("10");
    const m = await say(roomId, "old format");
    const v1Shaped = { ...m.pdu, event_id: `$old:${f.h.serverName}`, prev_events: m.pdu.prev_events.map((id) => [id, { sha256: "x" }]) };
    const res = await f.h.send([v1Shaped]);
    expect(Object.values(res.json.pdus).every((r: any) => r.error !== undefined)).toBe(true);
    expect((await memberView(f.a, f.alice.access_token, roomId)).timeline).not.toContain(m.eventId);
  });

  it("a v12 room: an event naming the create event among its auth_events (a v11 shape) is rejected", async () => {
    const roomId = await room("12");
    const create = (await f.a.hs.services.rooms.events.get(roomId.replace(/^!/, "$")))!;
    const m = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: "v11 shaped" } }, { edit: (p) => void (p.auth_events = [create.eventId, ...(p.auth_events as string[])]) });
    await f.h.send([m.pdu]);
    const stored = await f.a.hs.services.rooms.events.get(m.eventId);
    expect(stored === undefined || stored.rejectedReason !== null).toBe(true);
    expect((await memberView(f.a, f.alice.access_token, roomId)).timeline).not.toContain(m.eventId);
  });

  it("the operator's view: one log line per refused event naming origin, event id and rule, and the metric by reason", async () => {
    const roomId = await room();
    const metric = async (reason: string) => sampleValue(parsePrometheusText(await f.a.hs.metrics!.text()), "weft_federation_rejected_events_total", { reason }) ?? 0;
    const [sigBefore, hashBefore] = [await metric("signature"), await metric("content_hash")];
    const bad = await say(roomId, "bad signature");
    const hashed = await say(roomId, "bad hash");
    await f.h.send([withBadSignature(bad, f.h.serverName)]);
    await f.h.send([withBadContentHash(hashed, { body: "swapped" })]);
    expect(refusalLines(log.lines, bad.eventId).map((l) => [l.origin, l.rule, l.outcome])).toEqual([[f.h.serverName, "signature", "dropped"]]);
    expect(refusalLines(log.lines, hashed.eventId).map((l) => [l.origin, l.rule, l.outcome])).toEqual([[f.h.serverName, "content_hash", "redacted"]]);
    expect(await metric("signature")).toBe(sigBefore + 1);
    expect(await metric("content_hash")).toBe(hashBefore + 1);
    log.expectClean();
  });

  it("every room version v1–v12: an honest message shows, the same with a bad signature never does", async () => {
    for (const version of KNOWN_ROOM_VERSIONS) {
      const roomId = await room(version);
      const good = await say(roomId, `v${version}`);
      const bad = await f.h.craft(roomId, { type: "m.room.message", sender: f.mallory, content: { msgtype: "m.text", body: `forged v${version}` } }, { prev: [good.eventId] });
      expect((await f.h.send([good.pdu])).json, version).toEqual({ pdus: { [good.eventId]: {} } });
      expect((await f.h.send([withBadSignature(bad, f.h.serverName)])).json.pdus[bad.eventId].error, version).toMatch(/signature/i);
      const view = await memberView(f.a, f.alice.access_token, roomId);
      expect(view.timeline[0], version).toBe(good.eventId);
      expect(view.timeline, version).not.toContain(bad.eventId);
    }
  }, 120_000);
});
