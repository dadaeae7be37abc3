// Pushers and the push gateway on SQLite and PostgreSQL: the pushers API (validation with the spec's
// errors, http and email pushers, append, deletion), and delivery to a real HTTP gateway listening on
// loopback (allowed by ip_range_whitelist; every body it receives is validated against the Push Gateway
// API's schema): the spec's fields (and Synapse's legacy `id`, an invite's `membership`), event_id_only, highlight tweaks, retries after failures and garbage,
// a hanging gateway that holds up only its own queue, a rejected pushkey deleting its pusher, a badge
// update after a receipt, and a restart with the gateway down that loses nothing and sends nothing twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { RecordingGateway } from "../helpers/push-gateway.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("pushers and the push gateway on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;
  let gw: RecordingGateway;
  let txn = 0;

  beforeAll(async () => {
    gw = await new RecordingGateway().start();
    t = await startTestServer({ backend, config: { ip_range_whitelist: ["127.0.0.1"] } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
    await gw?.stop();
  });

  const call = (method: string, path: string, who: Session, body?: unknown) => t.call(method, `${V3}${path}`, { token: who.access_token, body });
  const send = async (who: Session, roomId: string, content: Record<string, unknown>) => {
    const res = await call("PUT", `/rooms/${enc(roomId)}/send/m.room.message/p${++txn}`, who, content);
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };
  const pusher = (pushkey: string, url: string, extra: Record<string, unknown> = {}, data: Record<string, unknown> = {}) => ({
    pushkey,
    kind: "http",
    app_id: "org.example.app",
    app_display_name: "Example",
    device_display_name: "Phone",
    lang: "en",
    data: { url, ...data },
    ...extra,
  });
  const setPusher = async (who: Session, body: unknown) => {
    const res = await call("POST", "/pushers/set", who, body);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", `${V3}/pushers/set`);
  };
  const sharedRoom = async (name = "Mission Control") => {
    const roomId = await createRoom(t, alice, { preset: "public_chat", name });
    expect((await call("POST", `/join/${enc(roomId)}`, bob, {})).status).toBe(200);
    return roomId;
  };
  const forEvent = (g: RecordingGateway, eventId: string, pushkey?: string) => () =>
    g.events().some((n) => n.event_id === eventId && (!pushkey || n.devices[0].pushkey === pushkey));

  it("the pushers API: set, list, validate, append, delete", async () => {
    const carol = await registerUser(t, "carol");
    const empty = await call("GET", "/pushers", carol);
    expect(empty.status).toBe(200);
    expectMatchesSpec(empty, "GET", `${V3}/pushers`);
    expect(empty.json).toEqual({ pushers: [] });
    await setPusher(carol, pusher("key-c", "https://push.example.org/_matrix/push/v1/notify", { profile_tag: "xyz" }, { format: "event_id_only", custom: 1 }));
    await setPusher(carol, { pushkey: "carol@example.org", kind: "email", app_id: "m.email", app_display_name: "Email", device_display_name: "carol@example.org", lang: "en", data: {} });
    const list = await call("GET", "/pushers", carol);
    expectMatchesSpec(list, "GET", `${V3}/pushers`);
    expect(list.json.pushers).toEqual([
      { pushkey: "carol@example.org", kind: "email", app_id: "m.email", app_display_name: "Email", device_display_name: "carol@example.org", lang: "en", data: {} },
      { pushkey: "key-c", kind: "http", app_id: "org.example.app", app_display_name: "Example", device_display_name: "Phone", profile_tag: "xyz", lang: "en", data: { url: "https://push.example.org/_matrix/push/v1/notify", format: "event_id_only", custom: 1 } },
    ]);
    const bad: [unknown, string][] = [
      [{ kind: "http", app_id: "a" }, "M_MISSING_PARAM"],
      [{ ...pusher("k", "https://push.example.org/_matrix/push/v1/notify"), lang: undefined }, "M_MISSING_PARAM"],
      [pusher("k", "https://push.example.org/notify"), "M_INVALID_PARAM"],
      [pusher("k", "ftp://push.example.org/_matrix/push/v1/notify"), "M_INVALID_PARAM"],
      [pusher("k", "not a url"), "M_INVALID_PARAM"],
      [{ ...pusher("k", "https://push.example.org/_matrix/push/v1/notify"), data: { format: "event_id_only" } }, "M_INVALID_PARAM"],
      [pusher("k", "http://10.1.2.3/_matrix/push/v1/notify"), "M_INVALID_PARAM"],
      [pusher("k", "http://[::1]/_matrix/push/v1/notify"), "M_INVALID_PARAM"],
      [{ ...pusher("k", "https://push.example.org/_matrix/push/v1/notify"), kind: "carrier-pigeon" }, "M_INVALID_PARAM"],
      [pusher("x".repeat(513), "https://push.example.org/_matrix/push/v1/notify"), "M_INVALID_PARAM"],
      [{ ...pusher("k", "https://push.example.org/_matrix/push/v1/notify"), app_id: "a".repeat(65) }, "M_INVALID_PARAM"],
      [{ ...pusher("k", "https://push.example.org/_matrix/push/v1/notify"), append: "yes" }, "M_INVALID_PARAM"],
      [{ ...pusher("k", "https://push.example.org/_matrix/push/v1/notify"), data: "url" }, "M_INVALID_PARAM"],
    ];
    for (const [body, errcode] of bad) {
      const res = await call("POST", "/pushers/set", carol, body);
      expect({ body, status: res.status, errcode: res.json.errcode }).toEqual({ body, status: 400, errcode });
    }
    expect((await call("GET", "/pushers", carol)).json.pushers).toHaveLength(2);
    // The same app_id and pushkey for another user replaces carol's, unless appended.
    const dave = await registerUser(t, "dave");
    await setPusher(dave, { ...pusher("key-c", "https://push.example.org/_matrix/push/v1/notify"), append: true });
    expect((await call("GET", "/pushers", carol)).json.pushers).toHaveLength(2);
    await setPusher(dave, pusher("key-c", "https://push.example.org/_matrix/push/v1/notify"));
    expect((await call("GET", "/pushers", carol)).json.pushers.map((p: any) => p.pushkey)).toEqual(["carol@example.org"]);
    await setPusher(carol, { pushkey: "carol@example.org", app_id: "m.email", kind: null });
    expect((await call("GET", "/pushers", carol)).json.pushers).toEqual([]);
    // Logging out (deleting the device) removes the device's pushers.
    expect((await call("GET", "/pushers", dave)).json.pushers).toHaveLength(1);
    expect((await call("POST", "/logout", dave, {})).status).toBe(200);
    const rows = await t.hs.services.push.pushers.store.ofUser(dave.user_id);
    expect(rows).toEqual([]);
  });

  it("delivers notifications with the spec's body; event_id_only; highlights; badge after a receipt", async () => {
    const roomId = await sharedRoom();
    expect((await call("PUT", `/profile/${enc(alice.user_id)}/displayname`, alice, { displayname: "Major Tom" })).status).toBe(200);
    await setPusher(bob, pusher("bob-full", gw.url, {}, { custom: "kept" }));
    await setPusher(bob, { ...pusher("bob-ids", gw.url, {}, { format: "event_id_only" }), app_id: "org.example.lite" });
    const e1 = await send(alice, roomId, { msgtype: "m.text", body: "I'm floating" });
    await gw.until(() => forEvent(gw, e1, "bob-full")() && forEvent(gw, e1, "bob-ids")());
    expect(gw.invalid).toEqual([]);
    const full = gw.events().find((n) => n.event_id === e1 && n.devices[0].pushkey === "bob-full");
    expect(full).toMatchObject({
      // The legacy `id` beside `event_id`, as Synapse sends it.
      id: e1,
      event_id: e1,
      room_id: roomId,
      type: "m.room.message",
      sender: alice.user_id,
      sender_display_name: "Major Tom",
      room_name: "Mission Control",
      content: { msgtype: "m.text", body: "I'm floating" },
      // Two members: .m.rule.room_one_to_one sounds, so the priority is high (as Synapse decides it).
      prio: "high",
      counts: { unread: 1 },
    });
    expect(full.devices).toEqual([{ app_id: "org.example.app", pushkey: "bob-full", pushkey_ts: expect.any(Number), data: { custom: "kept" }, tweaks: { sound: "default" } }]);
    expect(Math.abs(full.devices[0].pushkey_ts - Date.now() / 1000)).toBeLessThan(600);
    const lite = gw.events().find((n) => n.event_id === e1 && n.devices[0].pushkey === "bob-ids");
    expect(Object.keys(lite).sort()).toEqual(["counts", "devices", "event_id", "prio", "room_id"]);
    expect(lite.devices[0].data).toEqual({ format: "event_id_only" });
    const e2 = await send(alice, roomId, { msgtype: "m.text", body: "hey", "m.mentions": { user_ids: [bob.user_id] } });
    await gw.until(forEvent(gw, e2, "bob-full"));
    const hl = gw.events().find((n) => n.event_id === e2 && n.devices[0].pushkey === "bob-full");
    expect(hl.prio).toBe("high");
    expect(hl.devices[0].tweaks).toEqual({ highlight: true, sound: "default" });
    // Reading sends a badge-only update with the new count.
    const badges = () => gw.received.filter((r) => !r.body.notification.event_id);
    expect((await call("POST", `/rooms/${enc(roomId)}/receipt/m.read/${enc(e2)}`, bob, {})).status).toBe(200);
    await gw.until(() => badges().some((r) => r.body.notification.counts.unread === 0));
    expect(gw.invalid).toEqual([]);
    await setPusher(bob, { pushkey: "bob-ids", app_id: "org.example.lite", kind: null });
    // An invite's push says so: membership and user_is_target, as Synapse sends them.
    const other = await createRoom(t, alice, { name: "Invited" });
    const invite = await call("POST", `/rooms/${enc(other)}/invite`, alice, { user_id: bob.user_id });
    expect(invite.status).toBe(200);
    const invited = () => gw.events().find((n) => n.room_id === other && n.type === "m.room.member" && n.devices[0].pushkey === "bob-full");
    await gw.until(() => invited() !== undefined);
    expect(gw.invalid).toEqual([]);
    expect(invited()).toMatchObject({ id: invited().event_id, sender: alice.user_id, membership: "invite", user_is_target: true });
  });

  it("retries failures and garbage with backoff, and a hanging gateway holds up only its own queue", async () => {
    const roomId = await sharedRoom("retry");
    const slow = await new RecordingGateway().start();
    slow.mode = "hang";
    const erin = await registerUser(t, "erin");
    expect((await call("POST", `/join/${enc(roomId)}`, erin, {})).status).toBe(200);
    await setPusher(erin, pusher("erin-hang", slow.url));
    try {
      gw.mode = "fail";
      const before = gw.attempts;
      const e1 = await send(alice, roomId, { msgtype: "m.text", body: "one" });
      await gw.until(() => gw.attempts > before);
      await slow.until(() => slow.attempts > 0); // erin's request hangs from here on
      gw.mode = "garbage";
      await gw.until(() => gw.attempts > before + 1, 20000, "a retry");
      expect(forEvent(gw, e1)()).toBe(false);
      gw.mode = "ok";
      const e2 = await send(alice, roomId, { msgtype: "m.text", body: "two" });
      await gw.until(() => forEvent(gw, e1, "bob-full")() && forEvent(gw, e2, "bob-full")(), 20000, "delivery after the retries");
      const delivered = gw.events().filter((n) => n.devices[0].pushkey === "bob-full").map((n) => n.event_id);
      expect(delivered.indexOf(e1)).toBeLessThan(delivered.indexOf(e2));
      expect(delivered.filter((id) => id === e1)).toHaveLength(1);
      expect(slow.received).toEqual([]);
    } finally {
      gw.mode = "ok";
      await setPusher(erin, { pushkey: "erin-hang", app_id: "org.example.app", kind: null });
      await slow.stop();
    }
  });

  it("a pushkey the gateway rejects deletes its pusher", async () => {
    const roomId = await sharedRoom("reject");
    await setPusher(bob, pusher("bob-dead", gw.url));
    gw.mode = { reject: ["bob-dead"] };
    try {
      const e = await send(alice, roomId, { msgtype: "m.text", body: "anyone?" });
      await gw.until(forEvent(gw, e, "bob-dead"));
      await expect.poll(async () => (await call("GET", "/pushers", bob)).json.pushers.map((p: any) => p.pushkey), { timeout: 10000 }).not.toContain("bob-dead");
      expect((await call("GET", "/pushers", bob)).json.pushers.map((p: any) => p.pushkey)).toContain("bob-full");
    } finally {
      gw.mode = "ok";
    }
  });

  it("a restart with the gateway down loses nothing and sends nothing twice", async () => {
    const roomId = await sharedRoom("restart");
    const warm = await send(alice, roomId, { msgtype: "m.text", body: "warm" });
    await gw.until(forEvent(gw, warm, "bob-full"));
    await gw.stop();
    const sent = [await send(alice, roomId, { msgtype: "m.text", body: "a" }), await send(alice, roomId, { msgtype: "m.text", body: "b" })];
    await t.restart();
    sent.push(await send(alice, roomId, { msgtype: "m.text", body: "c" }));
    await gw.restart();
    // A new message wakes the queue at once (no need to wait for the retry timer).
    sent.push(await send(alice, roomId, { msgtype: "m.text", body: "d" }));
    await gw.until(() => sent.every((id) => forEvent(gw, id, "bob-full")()), 20000, "every message after the restart");
    const ids = gw.events().filter((n) => n.devices[0].pushkey === "bob-full").map((n) => n.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(gw.invalid).toEqual([]);
  });
});
