// Typing, receipts, read markers and presence over HTTP on SQLite and PostgreSQL: each endpoint's checks
// (only oneself, joined members, bad bodies), delivery through /sync (ephemeral m.typing / m.receipt
// without room_id, top-level m.presence to room-mates only) validated against the spec, a typing
// timeout that wakes a waiting sync, threaded and private receipts, read markers, use_presence off, and
// the legacy /initialSync fields.
import { afterAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { sweepIdlePresence } from "../../src/domain/presence/presence.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("typing, receipts, read markers and presence on %s", (backend) => {
  const { t, users: { alice, bob, carol } } = withServer({ backend, users: ["alice", "bob", "carol"] });
  let txn = 0;

  const call = (method: string, path: string, who: Session | undefined, body?: unknown) => t.call(method, `${V3}${path}`, { token: who?.access_token, body });
  const send = async (who: Session, roomId: string, content: Record<string, unknown> = { msgtype: "m.text", body: "hi" }) => {
    const res = await call("PUT", `/rooms/${enc(roomId)}/send/m.room.message/e${++txn}`, who, content);
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };
  const sharedRoom = async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await call("POST", `/join/${enc(roomId)}`, bob, {})).status).toBe(200);
    return roomId;
  };
  const sync = async (who: Session, since?: string, extra = "") => {
    const path = `/sync?timeout=0${since ? `&since=${enc(since)}` : ""}${extra}`;
    const res = await call("GET", path, who);
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/sync`);
    return res.json;
  };
  const ephemeral = (body: any, roomId: string, type: string) => (body.rooms?.join?.[roomId]?.ephemeral?.events ?? []).filter((e: any) => e.type === type);

  it("typing: start and stop reach room members' syncs as m.typing without room_id; checks", async () => {
    const roomId = await sharedRoom();
    const base = await sync(bob);
    const typing = (who: Session, body: unknown, user = who.user_id) => call("PUT", `/rooms/${enc(roomId)}/typing/${enc(user)}`, who, body);
    const started = await typing(alice, { typing: true, timeout: 30000 });
    expect(started.status).toBe(200);
    expectMatchesSpec(started, "PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`);
    const s1 = await sync(bob, base.next_batch);
    expect(ephemeral(s1, roomId, "m.typing")).toEqual([{ type: "m.typing", content: { user_ids: [alice.user_id] } }]);
    // Repeating "typing" while typing moves nothing: the next sync has no typing change.
    await typing(alice, { typing: true, timeout: 30000 });
    const s2 = await sync(bob, s1.next_batch);
    expect(ephemeral(s2, roomId, "m.typing")).toEqual([]);
    // The initial sync shows who is typing now.
    expect(ephemeral(await sync(bob), roomId, "m.typing")).toEqual([{ type: "m.typing", content: { user_ids: [alice.user_id] } }]);
    expect((await typing(alice, { typing: false })).status).toBe(200);
    const s3 = await sync(bob, s2.next_batch);
    expect(ephemeral(s3, roomId, "m.typing")).toEqual([{ type: "m.typing", content: { user_ids: [] } }]);

    // Errors: someone else's typing, a non-member, bad bodies.
    const other = await typing(alice, { typing: true }, bob.user_id);
    expect([other.status, other.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const outsider = await typing(carol, { typing: true, timeout: 1000 });
    expect([outsider.status, outsider.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    for (const body of [{}, { typing: "yes" }, { typing: true, timeout: "soon" }, { typing: true, timeout: -1 }]) {
      const res = await typing(alice, body);
      expect([JSON.stringify(body), res.status, res.json.errcode]).toEqual([JSON.stringify(body), 400, "M_BAD_JSON"]);
    }
    const notJson = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, raw: "{nope" });
    expect(notJson.json.errcode).toBe("M_NOT_JSON");
    expect((await typing(alice, { typing: true })).status).toBe(200);
    // None of the refused calls changed anything: alice (typing again) is the only one typing.
    const s4 = await sync(bob, s3.next_batch);
    expect(ephemeral(s4, roomId, "m.typing")).toEqual([{ type: "m.typing", content: { user_ids: [alice.user_id] } }]);
    await typing(alice, { typing: false });
  });

  it("typing: a timeout expiring wakes a waiting sync", async () => {
    const roomId = await sharedRoom();
    await call("PUT", `/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, alice, { typing: true, timeout: 300 });
    const s1 = await sync(bob);
    expect(ephemeral(s1, roomId, "m.typing")).toEqual([{ type: "m.typing", content: { user_ids: [alice.user_id] } }]);
    // A long poll that nothing else wakes: the expiry (300 ms) must end it, well before its 20 s timeout.
    const started = Date.now();
    const poll = await call("GET", `/sync?timeout=20000&since=${enc(s1.next_batch)}`, bob);
    expect(Date.now() - started).toBeLessThan(10000);
    expect(ephemeral(poll.json, roomId, "m.typing")).toEqual([{ type: "m.typing", content: { user_ids: [] } }]);
  });

  it("receipts: a user's unthreaded and threaded receipts on one event show as the unthreaded one (MSC4102), in either order", async () => {
    const roomId = await sharedRoom();
    const root = await send(alice, roomId, { msgtype: "m.text", body: "root" });
    const a = await send(alice, roomId, { msgtype: "m.text", body: "one", "m.relates_to": { rel_type: "m.thread", event_id: root } });
    const b = await send(alice, roomId, { msgtype: "m.text", body: "two", "m.relates_to": { rel_type: "m.thread", event_id: root } });
    const receipt = async (who: Session, eventId: string, body: unknown) => expect((await call("POST", `/rooms/${enc(roomId)}/receipt/m.read/${enc(eventId)}`, who, body)).status).toBe(200);
    const base = await sync(alice);
    // Bob: unthreaded, then threaded on the same event; alice the other way round.
    await receipt(bob, a, {});
    await receipt(bob, a, { thread_id: root });
    await receipt(alice, b, { thread_id: root });
    await receipt(alice, b, {});
    for (const since of [base.next_batch, undefined]) {
      const content = ephemeral(await sync(alice, since), roomId, "m.receipt")[0].content;
      expect(content[a]?.["m.read"]?.[bob.user_id]).toEqual({ ts: expect.any(Number) });
      expect(content[b]?.["m.read"]?.[alice.user_id]).toEqual({ ts: expect.any(Number) });
    }
  });

  it("receipts: m.read reaches the room, m.read.private only its owner; threads coexist; newer replaces older", async () => {
    const roomId = await sharedRoom();
    const root = await send(alice, roomId, { msgtype: "m.text", body: "root" });
    const reply = await send(alice, roomId, { msgtype: "m.text", body: "in thread", "m.relates_to": { rel_type: "m.thread", event_id: root } });
    const later = await send(alice, roomId);
    const base = await sync(alice);
    const receipt = (who: Session, type: string, eventId: string, body: unknown = {}) => call("POST", `/rooms/${enc(roomId)}/receipt/${type}/${enc(eventId)}`, who, body);

    const r1 = await receipt(bob, "m.read", root);
    expect(r1.status).toBe(200);
    expectMatchesSpec(r1, "POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(root)}`);
    expect((await receipt(bob, "m.read", reply, { thread_id: root })).status).toBe(200);
    expect((await receipt(bob, "m.read.private", later)).status).toBe(200);
    const s1 = await sync(alice, base.next_batch);
    const [ev] = ephemeral(s1, roomId, "m.receipt");
    expect(ev.room_id).toBeUndefined();
    const bobRead = (content: any, eventId: string, type = "m.read") => content[eventId]?.[type]?.[bob.user_id];
    expect(bobRead(ev.content, root)).toEqual({ ts: expect.any(Number) });
    expect(bobRead(ev.content, reply)).toEqual({ ts: expect.any(Number), thread_id: root });
    // The private receipt is invisible to alice, visible to bob.
    expect(JSON.stringify(ev.content)).not.toContain("m.read.private");
    const bobSync = await sync(bob);
    const [mine] = ephemeral(bobSync, roomId, "m.receipt");
    expect(bobRead(mine.content, later, "m.read.private")).toEqual({ ts: expect.any(Number) });
    expect(bobRead(mine.content, root)).toBeDefined();

    // A newer unthreaded m.read replaces the older one; the threaded one stays.
    expect((await receipt(bob, "m.read", later)).status).toBe(200);
    const s2 = await sync(alice, s1.next_batch);
    const [ev2] = ephemeral(s2, roomId, "m.receipt");
    expect(Object.keys(ev2.content)).toEqual([later]);
    const all = ephemeral(await sync(alice), roomId, "m.receipt")[0].content;
    expect(bobRead(all, root)).toBeUndefined();
    expect(bobRead(all, later)).toEqual({ ts: expect.any(Number) });
    expect(bobRead(all, reply)).toEqual({ ts: expect.any(Number), thread_id: root });
    // A receipt for an earlier event than the stored one is ignored ("main" is its own thread key).
    expect((await receipt(bob, "m.read", root)).status).toBe(200);
    expect(bobRead(ephemeral(await sync(alice), roomId, "m.receipt")[0].content, later)).toBeDefined();
    expect((await receipt(bob, "m.read", root, { thread_id: "main" })).status).toBe(200);
    const withMain = ephemeral(await sync(alice), roomId, "m.receipt")[0].content;
    expect(bobRead(withMain, root)).toEqual({ ts: expect.any(Number), thread_id: "main" });
    expect(bobRead(withMain, later)).toEqual({ ts: expect.any(Number) });

    // Errors.
    const bad: [string, string, unknown, Session, number, string][] = [
      ["m.unknown", later, {}, bob, 400, "M_INVALID_PARAM"],
      ["m.read", later, { thread_id: 5 }, bob, 400, "M_INVALID_PARAM"],
      ["m.read", later, { thread_id: "" }, bob, 400, "M_INVALID_PARAM"],
      ["m.fully_read", later, { thread_id: "main" }, bob, 400, "M_INVALID_PARAM"],
      ["m.read", reply, { thread_id: "main" }, bob, 400, "M_INVALID_PARAM"],
      ["m.read", "not-an-event", {}, bob, 400, "M_INVALID_PARAM"],
      ["m.read", later, {}, carol, 403, "M_FORBIDDEN"],
    ];
    for (const [type, eventId, body, who, status, errcode] of bad) {
      const res = await receipt(who, type, eventId, body);
      expect([type, JSON.stringify(body), res.status, res.json.errcode]).toEqual([type, JSON.stringify(body), status, errcode]);
    }
    // An unknown event is accepted and dropped (Synapse); nothing moved.
    const before = await sync(alice);
    expect((await receipt(bob, "m.read", "$unknown:example.org")).status).toBe(200);
    expect(ephemeral(await sync(alice, before.next_batch), roomId, "m.receipt")).toEqual([]);
  });

  it("read markers: m.fully_read goes to room account data (forward only), m.read/m.read.private to receipts", async () => {
    const roomId = await sharedRoom();
    const first = await send(alice, roomId);
    const second = await send(alice, roomId);
    const base = await sync(bob);
    const markers = (body: unknown, who = bob) => call("POST", `/rooms/${enc(roomId)}/read_markers`, who, body);
    const res = await markers({ "m.fully_read": second, "m.read": second, "m.read.private": first });
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "POST", `${V3}/rooms/${enc(roomId)}/read_markers`);
    const s1 = await sync(bob, base.next_batch);
    expect(s1.rooms.join[roomId].account_data.events).toEqual([{ type: "m.fully_read", content: { event_id: second } }]);
    const content = ephemeral(s1, roomId, "m.receipt")[0].content;
    expect(content[second]["m.read"][bob.user_id]).toEqual({ ts: expect.any(Number) });
    expect(content[first]["m.read.private"][bob.user_id]).toEqual({ ts: expect.any(Number) });
    const ad = await call("GET", `/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/account_data/m.fully_read`, bob);
    expect(ad.json).toEqual({ event_id: second });
    // The marker does not move backwards; m.fully_read through /receipt is the same operation.
    expect((await call("POST", `/rooms/${enc(roomId)}/receipt/m.fully_read/${enc(first)}`, bob, {})).status).toBe(200);
    expect((await call("GET", `/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/account_data/m.fully_read`, bob)).json).toEqual({ event_id: second });
    const third = await send(alice, roomId);
    expect((await call("POST", `/rooms/${enc(roomId)}/receipt/m.fully_read/${enc(third)}`, bob, {})).status).toBe(200);
    expect((await call("GET", `/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/account_data/m.fully_read`, bob)).json).toEqual({ event_id: third });
    // Errors: non-member, not JSON, wrong types, an event not in the room.
    expect((await markers({ "m.fully_read": third }, carol)).json.errcode).toBe("M_FORBIDDEN");
    expect((await t.call("POST", `${V3}/rooms/${enc(roomId)}/read_markers`, { token: bob.access_token, raw: "nope" })).json.errcode).toBe("M_NOT_JSON");
    expect((await markers({ "m.fully_read": 5 })).json.errcode).toBe("M_BAD_JSON");
    const elsewhere = await send(alice, await createRoom(t, alice));
    const missing = await markers({ "m.fully_read": elsewhere });
    expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect((await call("GET", `/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/account_data/m.fully_read`, bob)).json).toEqual({ event_id: third });
  });

  it("presence: PUT/GET own and room-mates', delivered to room-mates only, set_presence, idle sweep", async () => {
    const dave = await registerUser(t, "dave");
    const erin = await registerUser(t, "erin");
    const roomId = await createRoom(t, dave, { preset: "public_chat" });
    await call("POST", `/join/${enc(roomId)}`, erin, {});
    const erinBase = await sync(erin, undefined, "&set_presence=offline"); // "offline" leaves presence alone
    const carolBase = await sync(carol);
    const status = (user: string) => `/presence/${enc(user)}/status`;
    const put = await call("PUT", status(dave.user_id), dave, { presence: "online", status_msg: "here" });
    expect(put.status).toBe(200);
    expectMatchesSpec(put, "PUT", `${V3}${status(dave.user_id)}`);
    const got = await call("GET", status(dave.user_id), erin);
    expect(got.status).toBe(200);
    expectMatchesSpec(got, "GET", `${V3}${status(dave.user_id)}`);
    expect(got.json).toEqual({ presence: "online", status_msg: "here", currently_active: true, last_active_ago: expect.any(Number) });
    expect((await call("GET", status(dave.user_id), dave)).json.presence).toBe("online");
    // Someone sharing no room is refused; a user without presence reads offline.
    expect((await call("GET", status(dave.user_id), carol)).json.errcode).toBe("M_FORBIDDEN");
    expect((await call("GET", status(erin.user_id), dave)).json).toEqual({ presence: "offline" });
    // A sync without set_presence marks the user online (spec: GET /sync, set_presence).
    await sync(erin, erinBase.next_batch);
    expect((await call("GET", status(erin.user_id), dave)).json).toMatchObject({ presence: "online", currently_active: true });

    const s1 = await sync(erin, erinBase.next_batch);
    const daveEvents = s1.presence.events.filter((e: any) => e.sender === dave.user_id);
    expect(daveEvents).toEqual([{ type: "m.presence", sender: dave.user_id, content: { presence: "online", status_msg: "here", currently_active: true, last_active_ago: expect.any(Number) } }]);
    expect((await sync(carol, carolBase.next_batch)).presence.events).toEqual([]);
    // The initial sync shows room-mates' presence too.
    expect((await sync(erin)).presence.events.map((e: any) => e.sender)).toContain(dave.user_id);

    // set_presence=unavailable on a sync; offline leaves it alone.
    await sync(dave, undefined, "&set_presence=unavailable");
    expect((await call("GET", status(dave.user_id), erin)).json).toMatchObject({ presence: "unavailable", status_msg: "here" });
    await sync(dave, undefined, "&set_presence=offline");
    expect((await call("GET", status(dave.user_id), erin)).json.presence).toBe("unavailable");
    await sync(dave, undefined, "&set_presence=online");
    expect((await call("GET", status(dave.user_id), erin)).json.presence).toBe("online");
    expect((await call("GET", `/sync?set_presence=away`, dave)).json.errcode).toBe("M_INVALID_PARAM");
    // An online user idle for more than 5 minutes becomes unavailable, and room-mates hear of it.
    const before = await sync(erin);
    expect(await sweepIdlePresence(t.hs.services, Date.now() + 6 * 60_000)).toBeGreaterThanOrEqual(1);
    const idle = (await sync(erin, before.next_batch)).presence.events.find((e: any) => e.sender === dave.user_id);
    expect(idle.content).toMatchObject({ presence: "unavailable", currently_active: false });

    // Errors.
    expect((await call("PUT", status(dave.user_id), erin, { presence: "online" })).json.errcode).toBe("M_FORBIDDEN");
    const bad: [unknown, string][] = [[{}, "M_MISSING_PARAM"], [{ presence: 1 }, "M_BAD_JSON"], [{ presence: "away" }, "M_INVALID_PARAM"], [{ presence: "online", status_msg: 3 }, "M_BAD_JSON"]];
    for (const [body, errcode] of bad) {
      const res = await call("PUT", status(dave.user_id), dave, body);
      expect([JSON.stringify(body), res.status, res.json.errcode]).toEqual([JSON.stringify(body), 400, errcode]);
    }
    expect((await call("GET", status("nobody"), dave)).json.errcode).toBe("M_INVALID_PARAM");
    expect((await call("GET", status(dave.user_id), erin)).json.presence).toBe("unavailable");
  });

  it("legacy /initialSync and /rooms/{roomId}/initialSync carry presence and receipts", async () => {
    const roomId = await sharedRoom();
    const eventId = await send(alice, roomId);
    await call("PUT", `/presence/${enc(alice.user_id)}/status`, alice, { presence: "online" });
    await call("POST", `/rooms/${enc(roomId)}/receipt/m.read/${enc(eventId)}`, bob, {});
    const all = await call("GET", `/initialSync`, alice);
    expect(all.status).toBe(200);
    expectMatchesSpec(all, "GET", `${V3}/initialSync`);
    expect(all.json.presence.map((e: any) => e.sender)).toContain(alice.user_id);
    const receipt = all.json.receipts.find((e: any) => e.room_id === roomId);
    expect(receipt.content[eventId]["m.read"][bob.user_id]).toEqual({ ts: expect.any(Number) });
    const one = await call("GET", `/rooms/${enc(roomId)}/initialSync`, alice);
    expect(one.status).toBe(200);
    expect(one.json.presence.find((e: any) => e.sender === alice.user_id).content.presence).toBe("online");
    expect(one.json.receipts).toEqual([{ type: "m.receipt", room_id: roomId, content: { [eventId]: { "m.read": { [bob.user_id]: { ts: expect.any(Number) } } } } }]);
  });
});

describe.each(backends())("presence disabled on %s", (backend) => {
  let t: TestServer;
  afterAll(async () => {
    await t?.close();
  });

  it("accepts PUT, delivers nothing, reads offline", async () => {
    t = await startTestServer({ backend, config: { presence: { enabled: false } } });
    const a = await registerUser(t, "alice");
    const b = await registerUser(t, "bob");
    const roomId = await createRoom(t, a, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: b.access_token, body: {} });
    const base = await t.call("GET", `${V3}/sync`, { token: b.access_token });
    const put = await t.call("PUT", `${V3}/presence/${enc(a.user_id)}/status`, { token: a.access_token, body: { presence: "online", status_msg: "x" } });
    expect(put.status).toBe(200);
    expect((await t.call("GET", `${V3}/presence/${enc(a.user_id)}/status`, { token: b.access_token })).json).toEqual({ presence: "offline" });
    const inc = await t.call("GET", `${V3}/sync?timeout=0&since=${enc(base.json.next_batch)}`, { token: b.access_token });
    expect(inc.json.presence.events).toEqual([]);
  });
});
