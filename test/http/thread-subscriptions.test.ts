// Thread subscriptions (MSC4306, MSC4308) over HTTP on SQLite and PostgreSQL: subscribe, read, unsubscribe
// (also when not subscribed); automatic subscriptions caused by an event of the thread, overridden by
// manual ones, refused after an unsubscription that came later than their cause; 404 for roots the user
// may not see, 400 for bad ids; push evaluation with the postcontent thread-subscription rules (seen in
// GET /notifications); the changes through GET /io.element.msc4308/thread_subscriptions (paginated
// backwards) and the sliding-sync extension (initial, incremental, long-polled); all of it only with
// msc4306_enabled, which /versions' org.matrix.msc4306 follows (as Synapse 1.163); deactivation forgets them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("thread subscriptions on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let eve: Session;
  let roomId: string;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { experimental_features: { msc4306_enabled: true } } });
    alice = await registerUser(t, "alice");
    eve = await registerUser(t, "eve");
    roomId = await createRoom(t, alice);
  });
  afterAll(async () => {
    await t?.close();
  });

  const send = async (body: string, root?: string) => {
    const content: Record<string, unknown> = { msgtype: "m.text", body };
    if (root) content["m.relates_to"] = { rel_type: "m.thread", event_id: root };
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: content });
    return res.json.event_id as string;
  };
  const path = (root: string, room = roomId) => `/_matrix/client/unstable/io.element.msc4306/rooms/${enc(room)}/thread/${enc(root)}/subscription`;
  const get = (root: string, who = alice) => t.call("GET", path(root), { token: who.access_token });
  const put = (root: string, body: Record<string, unknown> = {}, who = alice) => t.call("PUT", path(root), { token: who.access_token, body });
  const del = (root: string, who = alice) => t.call("DELETE", path(root), { token: who.access_token });

  it("subscribes, reads and unsubscribes; unsubscribing twice is fine", async () => {
    const root = await send("root");
    expect((await get(root)).json.errcode).toBe("M_NOT_FOUND");
    expect((await put(root)).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: false });
    expect((await del(root)).status).toBe(200);
    expect((await del(root)).status).toBe(200);
    const gone = await get(root);
    expect([gone.status, gone.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("automatic subscriptions: caused by an event of the thread, replaced by a manual one, never replacing one", async () => {
    const root = await send("root");
    const reply = await send("reply", root);
    const other = await send("other root");
    const elsewhere = await send("elsewhere", other);
    for (const cause of [root, elsewhere]) {
      const res = await put(root, { automatic: cause });
      expect([res.status, res.json.errcode]).toEqual([400, "IO.ELEMENT.MSC4306.M_NOT_IN_THREAD"]);
    }
    expect((await put(root, { automatic: "$nowhere:weft.test" })).status).toBe(404);
    expect((await get(root)).status).toBe(404);
    expect((await put(root, { automatic: reply })).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: true });
    expect((await put(root)).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: false });
    expect((await put(root, { automatic: reply })).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: false });
  });

  it("after an unsubscription, an automatic subscription caused by an earlier event is a conflict; by a later one it holds", async () => {
    const root = await send("root");
    const r1 = await send("1", root);
    expect((await put(root, { automatic: r1 })).status).toBe(200);
    const r2 = await send("2", root);
    expect((await del(root)).status).toBe(200);
    const r3 = await send("3", root);
    for (const cause of [r1, r2]) {
      const res = await put(root, { automatic: cause });
      expect([res.status, res.json.errcode]).toEqual([409, "IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION"]);
      expect((await get(root)).status).toBe(404);
    }
    expect((await put(root, { automatic: r3 })).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: true });
    const subs = await t.hs.services.threadSubscriptions.store.subscribersOf(t.hs.services.storage.sql, roomId, [root]);
    expect([...subs.get(root)!]).toEqual([alice.user_id]);
  });

  it("404 for roots that do not exist or the user may not see; 400 for bad ids and bodies", async () => {
    const root = await send("private root");
    for (const res of [await put("$notathread:example.org"), await get("$notathread:example.org"), await put(root, {}, eve), await get(root, eve), await del(root, eve)]) {
      expect(res.status).toBe(404);
    }
    expect((await put("notanevent")).json.errcode).toBe("M_INVALID_PARAM");
    expect((await t.call("GET", path(root, "notaroom"), { token: alice.access_token })).json.errcode).toBe("M_INVALID_PARAM");
    for (const automatic of [5, "noteventid", true, {}]) expect((await put(root, { automatic })).json.errcode).toBe("M_BAD_JSON");
    const notJson = await t.call("PUT", path(root), { token: alice.access_token, raw: "{nope", headers: { "content-type": "application/json" } });
    expect([notJson.status, notJson.json.errcode]).toEqual([400, "M_NOT_JSON"]);
    expect((await put(root, { automatic: null })).status).toBe(200);
    expect((await get(root)).json).toEqual({ automatic: false });
    expect((await t.call("GET", path(root), {})).json.errcode).toBe("M_MISSING_TOKEN");
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc4306"]).toBe(true);
  });

  it("push: thread replies notify subscribers (sound) and not the others; main-timeline messages and mentions still notify", async () => {
    const bob = await registerUser(t, "bob_push");
    const room = await createRoom(t, alice, { preset: "public_chat" });
    expect((await t.call("POST", `${V3}/join/${enc(room)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    const say = async (body: string, extra: Record<string, unknown> = {}) =>
      (await t.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/p${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body, ...extra } })).json.event_id as string;
    const inThread = (root: string) => ({ "m.relates_to": { rel_type: "m.thread", event_id: root } });
    const watched = await say("watched root");
    const ignored = await say("ignored root");
    const bobPath = (root: string) => `/_matrix/client/unstable/io.element.msc4306/rooms/${enc(room)}/thread/${enc(root)}/subscription`;
    expect((await t.call("PUT", bobPath(watched), { token: bob.access_token, body: {} })).status).toBe(200);
    const r1 = await say("into the watched thread", inThread(watched));
    const r2 = await say("into the ignored thread", inThread(ignored));
    const r3 = await say("hey bob_push", { ...inThread(ignored), "m.mentions": { user_ids: [bob.user_id] } });
    expect((await t.call("DELETE", bobPath(watched), { token: bob.access_token })).status).toBe(200);
    const r4 = await say("after unsubscribing", inThread(watched));
    const main = await say("main timeline");
    const notifs = await t.call("GET", `${V3}/notifications`, { token: bob.access_token });
    expect(notifs.status).toBe(200);
    const byId = new Map(notifs.json.notifications.map((n: any) => [n.event.event_id, n]));
    expect([r1, r2, r3, r4, main].map((id) => byId.has(id))).toEqual([true, false, true, false, true]);
    expect((byId.get(r1) as any).actions).toEqual(["notify", { set_tweak: "sound", value: "default" }]);
    expect((byId.get(r3) as any).actions).toContainEqual({ set_tweak: "highlight" });
    // The rules are listed in postcontent and may be disabled; clients may not add their own.
    const rules = (await t.call("GET", `${V3}/pushrules/`, { token: bob.access_token })).json.global;
    expect(rules.postcontent.map((r: any) => [r.rule_id, r.enabled, r.default])).toEqual([
      [".io.element.msc4306.rule.unsubscribed_thread", true, true],
      [".io.element.msc4306.rule.subscribed_thread", true, true],
    ]);
    expect(rules.postcontent[1].conditions).toEqual([{ kind: "io.element.msc4306.thread_subscription", subscribed: true }]);
    const rulePath = `${V3}/pushrules/global/postcontent/.io.element.msc4306.rule.unsubscribed_thread`;
    expect((await t.call("GET", rulePath, { token: bob.access_token })).json.actions).toEqual([]);
    expect((await t.call("PUT", `${rulePath}/enabled`, { token: bob.access_token, body: { enabled: false } })).status).toBe(200);
    const r5 = await say("unsubscribed thread, rule disabled", inThread(ignored));
    const again = await t.call("GET", `${V3}/notifications`, { token: bob.access_token });
    expect(again.json.notifications.some((n: any) => n.event.event_id === r5)).toBe(true);
    const own = await t.call("PUT", `${V3}/pushrules/global/postcontent/mine`, { token: bob.access_token, body: { conditions: [], actions: ["notify"] } });
    expect([own.status, own.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const badCondition = await t.call("PUT", `${V3}/pushrules/global/override/mine`, { token: bob.access_token, body: { conditions: [{ kind: "io.element.msc4306.thread_subscription", subscribed: "yes" }], actions: [] } });
    expect([badCondition.status, badCondition.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
  });

  it("MSC4308: GET /thread_subscriptions pages backwards through the user's changes", async () => {
    const carol = await registerUser(t, "carol_pages");
    const room = await createRoom(t, carol);
    const roots: string[] = [];
    for (let i = 0; i < 3; i++)
      roots.push((await t.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/c${++txn}`, { token: carol.access_token, body: { msgtype: "m.text", body: `root ${i}` } })).json.event_id);
    const sub = (root: string, method = "PUT") => t.call(method, `/_matrix/client/unstable/io.element.msc4306/rooms/${enc(room)}/thread/${enc(root)}/subscription`, { token: carol.access_token, body: method === "PUT" ? {} : undefined });
    for (const root of roots) expect((await sub(root)).status).toBe(200);
    expect((await sub(roots[0]!, "DELETE")).status).toBe(200);
    const list = (q: string) => t.call("GET", `/_matrix/client/unstable/io.element.msc4308/thread_subscriptions?${q}`, { token: carol.access_token });
    const all = await list("dir=b");
    expect(all.status).toBe(200);
    expect(Object.keys(all.json.subscribed[room]).sort()).toEqual([roots[1], roots[2]].sort());
    expect(all.json.subscribed[room][roots[1]!]).toEqual({ automatic: false, bump_stamp: expect.any(Number) });
    expect(Object.keys(all.json.unsubscribed[room])).toEqual([roots[0]]);
    expect(all.json.end).toBeUndefined();
    // Newest first, one at a time: the unsubscription of roots[0], then roots[2], then roots[1].
    const seen: string[] = [];
    let from: string | undefined;
    for (let i = 0; i < 3; i++) {
      const page = await list(`dir=b&limit=1${from ? `&from=${from}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...Object.keys(page.json.subscribed?.[room] ?? {}), ...Object.keys(page.json.unsubscribed?.[room] ?? {}));
      expect(page.json.end).toMatch(/^ts\d+$/);
      from = page.json.end;
    }
    expect(seen).toEqual([roots[0], roots[2], roots[1]]);
    expect(await list(`dir=b&from=${from}`).then((r) => r.json)).toEqual({});
    // `to` bounds the page from below (a ts token or a sliding-sync pos).
    const stamp = all.json.subscribed[room][roots[2]!].bump_stamp as number;
    expect(Object.keys((await list(`dir=b&to=ts${stamp}`)).json.unsubscribed[room])).toEqual([roots[0]]);
    expect((await list(`dir=b&to=ss${stamp}`)).json.subscribed).toBeUndefined();
    const bad: [string, string][] = [
      ["", "M_MISSING_PARAM"],
      ["dir=f", "M_INVALID_PARAM"],
      ["dir=b&limit=0", "M_INVALID_PARAM"],
      ["dir=b&limit=-1", "M_INVALID_PARAM"],
      ["dir=b&limit=x", "M_INVALID_PARAM"],
      ["dir=b&from=nope", "M_INVALID_PARAM"],
      ["dir=b&to=nope", "M_INVALID_PARAM"],
    ];
    for (const [q, errcode] of bad) {
      const res = await list(q);
      expect({ q, status: res.status, errcode: res.json.errcode }).toEqual({ q, status: 400, errcode });
    }
  });

  it("MSC4308: the sliding-sync extension gives subscriptions initially and incrementally, and a long poll wakes on a change", async () => {
    const dave = await registerUser(t, "dave_ss");
    const room = await createRoom(t, dave);
    const root = (await t.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/d${++txn}`, { token: dave.access_token, body: { msgtype: "m.text", body: "root" } })).json.event_id as string;
    const subPath = `/_matrix/client/unstable/io.element.msc4306/rooms/${enc(room)}/thread/${enc(root)}/subscription`;
    const EXT = "io.element.msc4308.thread_subscriptions";
    const ss = (query = "", body: Record<string, unknown> = { extensions: { [EXT]: { enabled: true, limit: 2 } } }) =>
      t.call("POST", `/_matrix/client/unstable/org.matrix.simplified_msc3575/sync${query}`, { token: dave.access_token, body });
    const first = await ss();
    expect(first.status).toBe(200);
    expect(first.json.extensions[EXT]).toBeUndefined();
    expect(first.json.rooms).toEqual({});
    expect((await t.call("PUT", subPath, { token: dave.access_token, body: {} })).status).toBe(200);
    const next = await ss(`?pos=${first.json.pos}`);
    expect(next.json.extensions[EXT].subscribed[room][root]).toEqual({ automatic: false, bump_stamp: expect.any(Number) });
    // A new connection (a request without pos restarts its conn_id's: another conn_id here) gets it too.
    expect((await ss("", { conn_id: "fresh", extensions: { [EXT]: { enabled: true, limit: 2 } } })).json.extensions[EXT].subscribed[room][root].automatic).toBe(false);
    // Nothing new since `next`: empty; disabled: never there.
    expect((await ss(`?pos=${next.json.pos}`)).json.extensions[EXT]).toBeUndefined();
    expect((await ss("", { conn_id: "off", extensions: { [EXT]: { enabled: false } } })).json.extensions[EXT]).toBeUndefined();
    // A long poll returns when the user unsubscribes.
    const started = Date.now();
    const polling = ss(`?pos=${next.json.pos}&timeout=20000`);
    await new Promise((r) => setTimeout(r, 200));
    expect((await t.call("DELETE", subPath, { token: dave.access_token })).status).toBe(200);
    const woken = await polling;
    expect(Date.now() - started).toBeLessThan(15000);
    expect(Object.keys(woken.json.extensions[EXT].unsubscribed[room])).toEqual([root]);
    // With limit 1 and two changes pending from the start: the latest, and prev_batch to page back.
    expect((await t.call("PUT", subPath, { token: dave.access_token, body: {} })).status).toBe(200);
    const limited = await ss("", { extensions: { [EXT]: { enabled: true, limit: 1 } } });
    expect(limited.json.extensions[EXT].prev_batch).toMatch(/^ts\d+$/);
    const bad: [string, Record<string, unknown>, string][] = [
      ["?pos=nope", {}, "M_INVALID_PARAM"],
      ["?pos=ss99999999", {}, "M_INVALID_PARAM"],
      ["?timeout=soon", {}, "M_INVALID_PARAM"],
      ["", { lists: { all: { ranges: [[10, 0]], timeline_limit: 1 } } }, "M_INVALID_PARAM"],
      ["", { room_subscriptions: { [room]: { timeline_limit: 1001 } } }, "M_BAD_JSON"],
      ["", { extensions: { [EXT]: { enabled: "yes" } } }, "M_BAD_JSON"],
      ["", { extensions: { [EXT]: { enabled: true, limit: -1 } } }, "M_BAD_JSON"],
      ["", { extensions: [] }, "M_BAD_JSON"],
    ];
    for (const [q, body, errcode] of bad) {
      const res = await ss(q, body);
      expect({ q, body, status: res.status, errcode: res.json.errcode }).toEqual({ q, body, status: 400, errcode });
    }
  });

  it("deactivating an account forgets its subscriptions", async () => {
    const frank = await registerUser(t, "frank_gone");
    const room = await createRoom(t, frank);
    const root = (await t.call("PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/f${++txn}`, { token: frank.access_token, body: { msgtype: "m.text", body: "root" } })).json.event_id as string;
    expect((await t.call("PUT", `/_matrix/client/unstable/io.element.msc4306/rooms/${enc(room)}/thread/${enc(root)}/subscription`, { token: frank.access_token, body: {} })).status).toBe(200);
    const store = t.hs.services.threadSubscriptions.store;
    expect(await store.get(frank.user_id, room, root)).toMatchObject({ subscribed: true });
    const first = await t.call("POST", `${V3}/account/deactivate`, { token: frank.access_token, body: {} });
    const auth = { type: "m.login.password", identifier: { type: "m.id.user", user: "frank_gone" }, password: "password", session: first.json.session };
    expect((await t.call("POST", `${V3}/account/deactivate`, { token: frank.access_token, body: { auth } })).status).toBe(200);
    expect(await store.get(frank.user_id, room, root)).toBeUndefined();
  });

  it("without msc4306_enabled the routes are not served", async () => {
    const plain = await startTestServer({ backend });
    try {
      const bob = await registerUser(plain, "bob");
      const res = await plain.call("GET", "/_matrix/client/unstable/io.element.msc4306/rooms/!r:weft.test/thread/$e/subscription", { token: bob.access_token });
      expect([res.status, res.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
      const pages = await plain.call("GET", "/_matrix/client/unstable/io.element.msc4308/thread_subscriptions?dir=b", { token: bob.access_token });
      expect([pages.status, pages.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
      // Sliding sync itself is served (its thread-subscriptions extension then never has anything).
      const ss = await plain.call("POST", "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync", { token: bob.access_token, body: { extensions: { "io.element.msc4308.thread_subscriptions": { enabled: true } } } });
      expect([ss.status, ss.json.extensions["io.element.msc4308.thread_subscriptions"]]).toEqual([200, undefined]);
      // No thread-subscription rules: postcontent is empty, its rules unknown.
      const rules = (await plain.call("GET", `${V3}/pushrules/`, { token: bob.access_token })).json.global;
      expect(rules.postcontent).toEqual([]);
      const rule = await plain.call("PUT", `${V3}/pushrules/global/postcontent/.io.element.msc4306.rule.subscribed_thread/enabled`, { token: bob.access_token, body: { enabled: false } });
      expect([rule.status, rule.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    } finally {
      await plain.close();
    }
  });
});
