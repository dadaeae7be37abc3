// E2EE in GET /sync over HTTP on SQLite and PostgreSQL: to-device messages delivered in order (100 per
// response), re-delivered when the client repeats a since-token and removed once it syncs with the
// next_batch; a long poll woken by a to-device message, by a room-mate's new keys and by a deleted
// device; device_lists.changed when a room-mate uploads keys, adds a device, uploads cross-signing keys
// or is invited, and `left` once the last shared room is left (never for an invitation received);
// device_one_time_keys_count (signed_curve25519 always) and device_unused_fallback_key_types in every
// response; GET /keys/changes with real sync tokens. Every /sync answer is checked against the spec.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { V3, crossSigningKeys, otk, uploadDeviceKeys, uploadKeys } from "../helpers/e2ee.ts";
import { parseSyncToken } from "../../src/domain/sync/token.ts";

const enc = encodeURIComponent;

describe.each(backends())("E2EE in /sync on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
  });

  async function sync(who: Session, params: Record<string, string | number> = {}) {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)] as [string, string])).toString();
    const res = await t.call("GET", `${V3}/sync${qs ? `?${qs}` : ""}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/sync`);
    return res.json;
  }
  async function toDevice(from: Session, to: Session, content: Record<string, unknown>, type = "m.test", device = to.device_id) {
    const res = await t.call("PUT", `${V3}/sendToDevice/${enc(type)}/td${++txn}`, { token: from.access_token, body: { messages: { [to.user_id]: { [device]: content } } } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }
  async function post(who: Session, path: string, body: unknown = {}) {
    const res = await t.call("POST", `${V3}${path}`, { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }
  const contents = (r: any) => (r.to_device?.events ?? []).map((e: any) => e.content);
  const inboxSize = async (who: Session) => (await t.hs.services.e2ee.toDeviceFor(who.user_id, who.device_id, 0, undefined, 1000)).length;

  /** Starts a long poll and resolves once it is waiting on the notifier (a listener more than before). */
  async function waitingSync(who: Session, since: string, timeout = 20000) {
    const emitter = (t.hs.services.rooms.notifier as unknown as { emitter: { listenerCount(e: string): number } }).emitter;
    const before = emitter.listenerCount("stream");
    const started = Date.now();
    const pending = sync(who, { since, timeout });
    for (let i = 0; emitter.listenerCount("stream") <= before; i++) {
      if (i > 2000) throw new Error("the long poll never started waiting");
      await new Promise((r) => setImmediate(r));
    }
    return { pending, started, timeout };
  }

  describe("to_device", () => {
    it("delivers in order, re-delivers for a repeated since-token, removes once the next_batch is used", async () => {
      const carol = await registerUser(t, "carol");
      const first = await sync(carol);
      expect(first.to_device?.events ?? []).toEqual([]);
      await toDevice(alice, carol, { n: 1 });
      await toDevice(alice, carol, { n: 2 }, "m.other");

      const r1 = await sync(carol, { since: first.next_batch });
      expect(r1.to_device.events).toEqual([
        { sender: alice.user_id, type: "m.test", content: { n: 1 } },
        { sender: alice.user_id, type: "m.other", content: { n: 2 } },
      ]);
      // The client did not get that answer (say): it repeats its since-token and gets the same messages.
      const again = await sync(carol, { since: first.next_batch });
      expect(contents(again)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(await inboxSize(carol)).toBe(2);

      // Syncing with the next_batch acknowledges them: they are gone from storage and from later answers.
      const r2 = await sync(carol, { since: again.next_batch });
      expect(r2.to_device?.events ?? []).toEqual([]);
      expect(await inboxSize(carol)).toBe(0);
      expect(contents(await sync(carol, { since: first.next_batch }))).toEqual([]);

      // Only the messages of the requesting device: another device of carol's gets its own.
      const carol2 = await loginUser(t, "carol");
      await toDevice(alice, carol, { to: "second" }, "m.test", carol2.device_id);
      expect(contents(await sync(carol, { since: r2.next_batch }))).toEqual([]);
      expect(contents(await sync(carol2))).toEqual([{ to: "second" }]);
    });

    it("delivers at most 100 per response; next_batch continues after the last one delivered", async () => {
      const dave = await registerUser(t, "dave");
      const base = await sync(dave);
      // One request per message keeps their order; 150 messages in 150 PUTs.
      for (let i = 0; i < 150; i++) await toDevice(alice, dave, { i });
      const page1 = await sync(dave, { since: base.next_batch });
      expect(contents(page1)).toEqual(Array.from({ length: 100 }, (_, i) => ({ i })));
      const page2 = await sync(dave, { since: page1.next_batch });
      expect(contents(page2)).toEqual(Array.from({ length: 50 }, (_, i) => ({ i: 100 + i })));
      expect(parseSyncToken(page2.next_batch).to_device).toBeGreaterThan(parseSyncToken(page1.next_batch).to_device);
      const page3 = await sync(dave, { since: page2.next_batch });
      expect(contents(page3)).toEqual([]);
      expect(await inboxSize(dave)).toBe(0);
    });

    it("a to-device message wakes a long poll well before its timeout", async () => {
      const erin = await registerUser(t, "erin");
      const base = await sync(erin);
      const poll = await waitingSync(erin, base.next_batch);
      await toDevice(alice, erin, { wake: true });
      const r = await poll.pending;
      expect(Date.now() - poll.started).toBeLessThan(poll.timeout);
      expect(contents(r)).toEqual([{ wake: true }]);
    });

    it("a sync without messages for the device keeps waiting until its timeout", async () => {
      const frank = await registerUser(t, "frank");
      const base = await sync(frank);
      const started = Date.now();
      const r = await sync(frank, { since: base.next_batch, timeout: 300 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(r.to_device?.events ?? []).toEqual([]);
    });
  });

  describe("device_one_time_keys_count and device_unused_fallback_key_types", () => {
    it("are in every response, signed_curve25519 always, and follow uploads and claims", async () => {
      const gina = await registerUser(t, "gina");
      const initial = await sync(gina);
      expect(initial.device_one_time_keys_count).toEqual({ signed_curve25519: 0 });
      expect(initial.device_unused_fallback_key_types).toEqual([]);

      const dev = await uploadDeviceKeys(t, gina);
      const up = await uploadKeys(t, gina, {
        one_time_keys: { "signed_curve25519:A": otk(gina, dev, 1), "signed_curve25519:B": otk(gina, dev, 2) },
        fallback_keys: { "signed_curve25519:F": otk(gina, dev, 3, true) },
      });
      expect(up.status, JSON.stringify(up.json)).toBe(200);
      const r1 = await sync(gina, { since: initial.next_batch });
      expect(r1.device_one_time_keys_count).toEqual({ signed_curve25519: 2 });
      expect(r1.device_unused_fallback_key_types).toEqual(["signed_curve25519"]);

      // Three claims: two one-time keys, then the fallback key (now used).
      for (let i = 0; i < 3; i++) await post(alice, "/keys/claim", { one_time_keys: { [gina.user_id]: { [gina.device_id]: "signed_curve25519" } } });
      const r2 = await sync(gina, { since: r1.next_batch });
      expect(r2.device_one_time_keys_count).toEqual({ signed_curve25519: 0 });
      expect(r2.device_unused_fallback_key_types).toEqual([]);
      // Even a long poll that ends at its timeout with nothing new carries them.
      const idle = await sync(gina, { since: r2.next_batch, timeout: 50 });
      expect(idle.device_one_time_keys_count).toEqual({ signed_curve25519: 0 });
      expect(idle.device_unused_fallback_key_types).toEqual([]);
    });
  });

  describe("device_lists", () => {
    it("changed when a room-mate uploads keys, adds a device or uploads cross-signing keys; own changes too", async () => {
      const hal = await registerUser(t, "hal");
      const ivy = await registerUser(t, "ivy");
      const roomId = await createRoom(t, hal, { preset: "public_chat" });
      await post(ivy, `/join/${enc(roomId)}`);
      const initial = await sync(hal);
      expect(initial.device_lists).toBeUndefined();

      await uploadDeviceKeys(t, ivy);
      const r1 = await sync(hal, { since: initial.next_batch });
      expect(r1.device_lists).toEqual({ changed: [ivy.user_id], left: [] });
      // Nothing new: a short poll ends empty.
      const quiet = await sync(hal, { since: r1.next_batch, timeout: 50 });
      expect(quiet.device_lists).toBeUndefined();

      const poll = await waitingSync(hal, quiet.next_batch);
      await loginUser(t, "ivy");
      const r2 = await poll.pending;
      expect(Date.now() - poll.started).toBeLessThan(poll.timeout);
      expect(r2.device_lists.changed).toEqual([ivy.user_id]);

      const xs = crossSigningKeys(ivy.user_id);
      expect((await t.call("POST", `${V3}/keys/device_signing/upload`, { token: ivy.access_token, body: xs.body })).status).toBe(200);
      const r3 = await sync(hal, { since: r2.next_batch });
      expect(r3.device_lists.changed).toEqual([ivy.user_id]);

      // Hal's own new device is reported to hal too; a stranger's is not.
      const stranger = await registerUser(t, "stranger");
      await uploadDeviceKeys(t, stranger);
      await loginUser(t, "hal");
      const r4 = await sync(hal, { since: r3.next_batch });
      expect(r4.device_lists.changed).toEqual([hal.user_id]);
    });

    it("a deleted device of a room-mate wakes the long poll and shows as changed", async () => {
      const jon = await registerUser(t, "jon");
      const kim = await registerUser(t, "kim");
      const roomId = await createRoom(t, jon, { preset: "public_chat" });
      await post(kim, `/join/${enc(roomId)}`);
      const kim2 = await loginUser(t, "kim");
      await uploadDeviceKeys(t, kim2);
      const base = await sync(jon);
      const poll = await waitingSync(jon, base.next_batch);
      await post(kim2, "/logout");
      const r = await poll.pending;
      expect(Date.now() - poll.started).toBeLessThan(poll.timeout);
      expect(r.device_lists.changed).toEqual([kim.user_id]);
      const q = await post(jon, "/keys/query", { device_keys: { [kim.user_id]: [] } });
      expect(Object.keys(q.device_keys[kim.user_id] ?? {})).not.toContain(kim2.device_id);
    });

    it("a newly shared room makes its members changed; `left` once the last shared room is left", async () => {
      const lou = await registerUser(t, "lou");
      const max = await registerUser(t, "max");
      const room1 = await createRoom(t, lou, { preset: "public_chat" });
      const room2 = await createRoom(t, lou, { preset: "public_chat" });
      const base = await sync(lou);

      await post(max, `/join/${enc(room1)}`);
      const r1 = await sync(lou, { since: base.next_batch });
      expect(r1.device_lists).toEqual({ changed: [max.user_id], left: [] });
      await post(max, `/join/${enc(room2)}`);
      const r2 = await sync(lou, { since: r1.next_batch });

      // Leaving one of two shared rooms: still sharing one, not `left`.
      await post(max, `/rooms/${enc(room1)}/leave`);
      const r3 = await sync(lou, { since: r2.next_batch });
      expect(r3.device_lists?.left ?? []).toEqual([]);
      // Leaving the last one.
      await post(max, `/rooms/${enc(room2)}/leave`);
      const r4 = await sync(lou, { since: r3.next_batch });
      expect(r4.device_lists).toEqual({ changed: [], left: [max.user_id] });
      // Max's key changes no longer reach lou.
      await uploadDeviceKeys(t, max);
      const r5 = await sync(lou, { since: r4.next_batch, timeout: 50 });
      expect(r5.device_lists).toBeUndefined();

      // The same, seen from the side of the user who leaves: lou leaves the room she shares with nia.
      const nia = await registerUser(t, "nia");
      const room3 = await createRoom(t, nia, { preset: "public_chat" });
      await post(lou, `/join/${enc(room3)}`);
      const r6 = await sync(lou, { since: r5.next_batch });
      // Every member of the room lou joined, lou too (her other devices; as Synapse).
      expect(r6.device_lists.changed).toEqual([lou.user_id, nia.user_id].sort());
      await post(lou, `/rooms/${enc(room3)}/leave`);
      const r7 = await sync(lou, { since: r6.next_batch });
      expect(r7.device_lists).toEqual({ changed: [], left: [nia.user_id] });
    });

    it("an invited user is changed for the room's members; the invitee hears of nobody until joining", async () => {
      const quin = await registerUser(t, "quin");
      const rex = await registerUser(t, "rex");
      const roomId = await createRoom(t, quin, { preset: "private_chat" });
      const [q0, r0] = [await sync(quin), await sync(rex)];
      await post(quin, `/rooms/${enc(roomId)}/invite`, { user_id: rex.user_id });
      const q1 = await sync(quin, { since: q0.next_batch });
      expect(q1.device_lists).toEqual({ changed: [rex.user_id], left: [] });
      // Rex sees the invite, but no `left` or `changed` for members of a room he never shared.
      const r1 = await sync(rex, { since: r0.next_batch });
      expect(Object.keys(r1.rooms.invite)).toEqual([roomId]);
      expect(r1.device_lists).toBeUndefined();
      // He rejects: quin no longer shares anything with him.
      await post(rex, `/rooms/${enc(roomId)}/leave`);
      const q2 = await sync(quin, { since: q1.next_batch });
      expect(q2.device_lists).toEqual({ changed: [], left: [rex.user_id] });
    });
  });

  describe("GET /keys/changes with sync tokens", () => {
    it("answers the changes between two next_batch tokens", async () => {
      const oli = await registerUser(t, "oli");
      const pam = await registerUser(t, "pam");
      const roomId = await createRoom(t, oli, { preset: "public_chat" });
      await post(pam, `/join/${enc(roomId)}`);
      const from = (await sync(oli)).next_batch;
      await uploadDeviceKeys(t, pam);
      const to = (await sync(oli, { since: from })).next_batch;
      const changes = async (a: string, b: string) => {
        const res = await t.call("GET", `${V3}/keys/changes?from=${enc(a)}&to=${enc(b)}`, { token: oli.access_token });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        expectMatchesSpec(res, "GET", `${V3}/keys/changes`);
        return res.json;
      };
      expect(await changes(from, to)).toEqual({ changed: [pam.user_id], left: [] });
      expect(await changes(to, to)).toEqual({ changed: [], left: [] });

      await post(pam, `/rooms/${enc(roomId)}/leave`);
      const later = (await sync(oli, { since: to })).next_batch;
      expect(await changes(to, later)).toEqual({ changed: [], left: [pam.user_id] });
      // A bad token is the spec's M_INVALID_PARAM.
      const bad = await t.call("GET", `${V3}/keys/changes?from=x${enc(from)}&to=${enc(to)}`, { token: oli.access_token });
      expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    });
  });
});
