// Notification counts and the notifications list over HTTP on SQLite and PostgreSQL: counts in /sync rise
// with messages and mentions (m.mentions, display names with regex characters, @room with and without
// the power to notify the room), are cleared by read receipts (m.read and m.read.private, at the latest
// event or an earlier one), per thread with threaded receipts; muting a room through a room rule;
// GET /notifications (newest first, read flags, only=highlight, pagination, profile_tag); the same counts after a
// restart (read back from storage). Responses are validated against the spec's schemas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const THREAD_FILTER = enc(JSON.stringify({ room: { timeline: { unread_thread_notifications: true } } }));

/** A /notifications answer without its null profile_tags (Synapse's null, which the spec's schema types a string), to validate the rest. */
function withoutNullProfileTags(res: { status: number; json: any }): { status: number; json: unknown } {
  return { status: res.status, json: { ...res.json, notifications: res.json.notifications.map(({ profile_tag, ...n }: any) => (profile_tag === null ? n : { profile_tag, ...n })) } };
}

describe.each(backends())("notification counts on %s", (backend) => {
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

  const call = (method: string, path: string, who: Session, body?: unknown) => t.call(method, `${V3}${path}`, { token: who.access_token, body });
  const send = async (who: Session, roomId: string, content: Record<string, unknown>, type = "m.room.message") => {
    const res = await call("PUT", `/rooms/${enc(roomId)}/send/${type}/c${++txn}`, who, content);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const text = (body: string, extra: Record<string, unknown> = {}) => ({ msgtype: "m.text", body, ...extra });
  const sync = async (who: Session, extra = "") => {
    const res = await call("GET", `/sync?timeout=0${extra}`, who);
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/sync`);
    return res.json;
  };
  const counts = async (who: Session, roomId: string) => (await sync(who)).rooms.join[roomId].unread_notifications;
  const receipt = async (who: Session, roomId: string, eventId: string, type = "m.read", body: unknown = {}) =>
    expect((await call("POST", `/rooms/${enc(roomId)}/receipt/${type}/${enc(eventId)}`, who, body)).status).toBe(200);
  const room = async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await call("POST", `/join/${enc(roomId)}`, bob, {})).status).toBe(200);
    return roomId;
  };

  it("rise with messages and mentions, never for the sender, and are cleared by receipts", async () => {
    const roomId = await room();
    expect(await counts(bob, roomId)).toEqual({ notification_count: 0, highlight_count: 0 });
    const m1 = await send(alice, roomId, text("hello"));
    const m2 = await send(alice, roomId, text("how are you"));
    expect(await counts(bob, roomId)).toEqual({ notification_count: 2, highlight_count: 0 });
    expect(await counts(alice, roomId)).toEqual({ notification_count: 0, highlight_count: 0 });
    const m3 = await send(alice, roomId, text("bob?", { "m.mentions": { user_ids: [bob.user_id] } }));
    expect(await counts(bob, roomId)).toEqual({ notification_count: 3, highlight_count: 1 });
    // An incremental sync carries the new counts with the new event.
    const before = await sync(bob);
    await send(alice, roomId, text("again"));
    const inc = await call("GET", `/sync?timeout=0&since=${enc(before.next_batch)}`, bob);
    expect(inc.json.rooms.join[roomId].timeline.events).toHaveLength(1);
    expect(inc.json.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 4, highlight_count: 1 });
    // A receipt on an earlier event clears what it covers.
    await receipt(bob, roomId, m2);
    expect(await counts(bob, roomId)).toEqual({ notification_count: 2, highlight_count: 1 });
    // A private receipt counts as well; one behind it changes nothing.
    await receipt(bob, roomId, m3, "m.read.private");
    expect(await counts(bob, roomId)).toEqual({ notification_count: 1, highlight_count: 0 });
    await receipt(bob, roomId, m1);
    expect(await counts(bob, roomId)).toEqual({ notification_count: 1, highlight_count: 0 });
    // Bob's own messages never count for him, and reading the latest clears everything.
    const last = await send(bob, roomId, text("fine"));
    expect(await counts(bob, roomId)).toEqual({ notification_count: 1, highlight_count: 0 });
    await receipt(bob, roomId, last);
    expect(await counts(bob, roomId)).toEqual({ notification_count: 0, highlight_count: 0 });
    // The same counts are read back from storage after a restart.
    await send(alice, roomId, text("after", { "m.mentions": { user_ids: [bob.user_id] } }));
    await t.restart();
    expect(await counts(bob, roomId)).toEqual({ notification_count: 1, highlight_count: 1 });
  });

  it("highlights display names with regex characters, @room only from senders allowed to notify the room", async () => {
    const roomId = await room();
    const name = "B.o*b (x)+?";
    expect((await call("PUT", `/profile/${enc(bob.user_id)}/displayname`, bob, { displayname: name })).status).toBe(200);
    const s0 = await sync(bob);
    await send(alice, roomId, text(`hey ${name}!`));
    await send(alice, roomId, text("hey BXo-b (x)+? no"));
    const s1 = await call("GET", `/sync?timeout=0&since=${enc(s0.next_batch)}`, bob);
    expect(s1.json.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 2, highlight_count: 1 });
    // @room in the body from the creator (power 100 >= notifications.room 50) highlights.
    await send(alice, roomId, text("@room lunch"));
    expect((await counts(bob, roomId)).highlight_count).toBe(2);
    // From bob (power 0) it does not highlight alice.
    const a0 = await counts(alice, roomId);
    await send(bob, roomId, text("@room anyone?"));
    expect(await counts(alice, roomId)).toEqual({ notification_count: a0.notification_count + 1, highlight_count: a0.highlight_count });
    // m.mentions present: the legacy body rules no longer apply (the name alone does not highlight).
    await send(alice, roomId, text(`${name} again`, { "m.mentions": {} }));
    expect((await counts(bob, roomId)).highlight_count).toBe(2);
    // The user name (localpart) in the body highlights through .m.rule.contains_user_name.
    await send(alice, roomId, text("is bob around?"));
    expect((await counts(bob, roomId)).highlight_count).toBe(3);
  });

  it("per thread with unread_thread_notifications, cleared by threaded receipts", async () => {
    const roomId = await room();
    const root = await send(alice, roomId, text("root"));
    const inThread = (body: string) => text(body, { "m.relates_to": { rel_type: "m.thread", event_id: root } });
    const r1 = await send(alice, roomId, inThread("reply 1"));
    const r2 = await send(alice, roomId, inThread("reply 2 bob"));
    // A reaction to a thread reply belongs to the thread (but reactions do not notify by default).
    await send(alice, roomId, { "m.relates_to": { rel_type: "m.annotation", event_id: r1, key: "👍" } }, "m.reaction");
    const all = await sync(bob);
    expect(all.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 3, highlight_count: 1 });
    expect(all.rooms.join[roomId].unread_thread_notifications).toBeUndefined();
    const threaded = await sync(bob, `&filter=${THREAD_FILTER}`);
    expect(threaded.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 1, highlight_count: 0 });
    expect(threaded.rooms.join[roomId].unread_thread_notifications).toEqual({ [root]: { notification_count: 2, highlight_count: 1 } });
    // A threaded receipt clears its thread only; "main" the main timeline only.
    await receipt(bob, roomId, r1, "m.read", { thread_id: root });
    const t1 = await sync(bob, `&filter=${THREAD_FILTER}`);
    expect(t1.rooms.join[roomId].unread_thread_notifications).toEqual({ [root]: { notification_count: 1, highlight_count: 1 } });
    expect(t1.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 1, highlight_count: 0 });
    await receipt(bob, roomId, root, "m.read", { thread_id: "main" });
    const t2 = await sync(bob, `&filter=${THREAD_FILTER}`);
    expect(t2.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 0, highlight_count: 0 });
    expect(t2.rooms.join[roomId].unread_thread_notifications).toEqual({ [root]: { notification_count: 1, highlight_count: 1 } });
    // An unthreaded receipt covers every thread.
    await receipt(bob, roomId, r2);
    const t3 = await sync(bob, `&filter=${THREAD_FILTER}`);
    expect(t3.rooms.join[roomId].unread_thread_notifications).toBeUndefined();
    expect(t3.rooms.join[roomId].unread_notifications).toEqual({ notification_count: 0, highlight_count: 0 });
  });

  it("a room rule with no actions mutes the room; suppress_notices and edits do not notify", async () => {
    const roomId = await room();
    await send(alice, roomId, text("notice", { msgtype: "m.notice" }));
    const m = await send(alice, roomId, text("original"));
    await send(alice, roomId, text("* edited", { "m.new_content": text("edited"), "m.relates_to": { rel_type: "m.replace", event_id: m } }));
    expect(await counts(bob, roomId)).toEqual({ notification_count: 1, highlight_count: 0 });
    expect((await call("PUT", `/pushrules/global/room/${enc(roomId)}`, bob, { actions: [] })).status).toBe(200);
    await send(alice, roomId, text("muted"));
    await send(alice, roomId, text("muted bob", { "m.mentions": { user_ids: [bob.user_id] } }));
    // The mention override comes before room rules: it still notifies.
    expect(await counts(bob, roomId)).toEqual({ notification_count: 2, highlight_count: 1 });
    expect((await call("DELETE", `/pushrules/global/room/${enc(roomId)}`, bob)).status).toBe(200);
  });

  it("GET /notifications: newest first, read flags, only=highlight, pagination", async () => {
    const carol = await registerUser(t, "carol");
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await call("POST", `/join/${enc(roomId)}`, carol, {})).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send(alice, roomId, text(`n${i}`, i === 3 ? { "m.mentions": { user_ids: [carol.user_id] } } : {})));
    await receipt(carol, roomId, ids[1]!);
    const first = await call("GET", "/notifications?limit=3", carol);
    expect(first.status).toBe(200);
    // Every entry carries profile_tag, null as Synapse sends it (the spec types it a string when given).
    expect(first.json.notifications.map((n: any) => ("profile_tag" in n ? n.profile_tag : "absent"))).toEqual([null, null, null]);
    expectMatchesSpec(withoutNullProfileTags(first), "GET", `${V3}/notifications`);
    expect(first.json.notifications.map((n: any) => n.event.event_id)).toEqual([ids[4], ids[3], ids[2]]);
    expect(first.json.notifications.map((n: any) => n.read)).toEqual([false, false, false]);
    expect(first.json.notifications[1].actions).toContainEqual({ set_tweak: "highlight" });
    // Two members: .m.rule.room_one_to_one (with a sound).
    expect(first.json.notifications[0]).toMatchObject({ room_id: roomId, actions: ["notify", { set_tweak: "sound", value: "default" }] });
    expect(typeof first.json.notifications[0].ts).toBe("number");
    expect(first.json.next_token).toBeDefined();
    const rest = await call("GET", `/notifications?limit=3&from=${enc(first.json.next_token)}`, carol);
    expectMatchesSpec(withoutNullProfileTags(rest), "GET", `${V3}/notifications`);
    expect(rest.json.notifications.map((n: any) => [n.event.event_id, n.read])).toEqual([[ids[1], true], [ids[0], true]]);
    expect(rest.json.next_token).toBeUndefined();
    const hl = await call("GET", "/notifications?only=highlight", carol);
    expect(hl.json.notifications.map((n: any) => n.event.event_id)).toEqual([ids[3]]);
    expect((await call("GET", "/notifications?from=abc", carol)).json.errcode).toBe("M_INVALID_PARAM");
    expect((await call("GET", "/notifications?only=everything", carol)).json.errcode).toBe("M_INVALID_PARAM");
    expect((await call("GET", "/notifications?limit=x", carol)).json.errcode).toBe("M_INVALID_PARAM");
    // The sender has none of their own.
    expect((await call("GET", "/notifications", alice)).json.notifications.filter((n: any) => n.room_id === roomId)).toEqual([]);
  });

  it("invites notify the invited user; a 1:1 room sounds", async () => {
    const dave = await registerUser(t, "dave");
    const roomId = await createRoom(t, alice, {});
    expect((await call("POST", `/rooms/${enc(roomId)}/invite`, alice, { user_id: dave.user_id })).status).toBe(200);
    const n = await call("GET", "/notifications", dave);
    expect(n.json.notifications).toHaveLength(1);
    expect(n.json.notifications[0].event).toMatchObject({ type: "m.room.member", state_key: dave.user_id, content: { membership: "invite" } });
    expect(n.json.notifications[0].actions).toEqual(["notify", { set_tweak: "sound", value: "default" }]);
    expect((await call("POST", `/join/${enc(roomId)}`, dave, {})).status).toBe(200);
    expect(await counts(dave, roomId)).toEqual({ notification_count: 0, highlight_count: 0 });
    await send(alice, roomId, text("just us"));
    expect(await counts(dave, roomId)).toEqual({ notification_count: 1, highlight_count: 0 });
    const latest = (await call("GET", "/notifications?limit=1", dave)).json.notifications[0];
    expect(latest.actions).toEqual(["notify", { set_tweak: "sound", value: "default" }]);
  });
});
