// Simplified sliding sync (MSC4186, as Synapse serves it) over HTTP on SQLite and PostgreSQL: lists with
// ranges sorted by activity and their counts; rooms' initial data (name, heroes, counts, required_state
// with wildcards, $ME and $LAZY, timeline, limited, prev_batch, bump_stamp) and later deltas (num_live,
// only rooms with something new); every list filter; invites' stripped state; room subscriptions and a
// grown timeline_limit (unstable_expanded_timeline); the to_device, e2ee, account_data, receipts and
// typing extensions; long polls; M_UNKNOWN_POS; the spec's errors for bad requests; /versions' flag.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const SS = "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync";
const enc = encodeURIComponent;

describe.each(backends())("sliding sync on %s", (backend) => {
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

  const ss = async (who: Session, body: Record<string, unknown>, query = ""): Promise<any> => {
    const res = await t.call("POST", `${SS}${query}`, { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  };
  const send = async (who: Session, roomId: string, body: string, type = "m.room.message") => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/ss${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const join = async (who: Session, roomId: string) => expect((await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} })).status).toBe(200);
  const state = async (who: Session, roomId: string, type: string, key: string, content: Record<string, unknown>) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(key)}`, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const ids = (list: any) => list.ops.flatMap((op: any) => op.room_ids);

  it("lists sort by activity, window by ranges, and send each room's initial data once, then its news", async () => {
    const carol = await registerUser(t, "carol");
    const a = await createRoom(t, carol, { name: "Room A", preset: "public_chat" });
    const b = await createRoom(t, carol, { preset: "public_chat" });
    const c = await createRoom(t, carol, { name: "Room C", preset: "public_chat" });
    for (const id of [a, b, c]) await join(bob, id);
    await send(bob, a, "a1");
    await send(bob, b, "b1");
    await send(bob, c, "c1");
    await send(carol, b, "b2");
    // Activity: b (b2), c, a.
    const body = { conn_id: "main", lists: { all: { ranges: [[0, 1]], timeline_limit: 1, required_state: [["m.room.create", ""], ["m.room.member", "$ME"]] } } };
    const first = await ss(bob, body);
    expect(first.lists.all.count).toBe(3);
    expect(first.lists.all.ops).toEqual([{ op: "SYNC", range: [0, 1], room_ids: [b, c] }]);
    expect(Object.keys(first.rooms).sort()).toEqual([b, c].sort());
    const rb = first.rooms[b];
    expect(rb.initial).toBe(true);
    expect(rb.name).toBeUndefined();
    expect(rb.heroes.map((h: any) => h.user_id)).toEqual([carol.user_id]);
    expect(rb.heroes[0].displayname).toBe("carol");
    expect([rb.joined_count, rb.invited_count]).toEqual([2, 0]);
    expect(rb.timeline.map((e: any) => e.content.body)).toEqual(["b2"]);
    expect(rb.timeline[0].room_id).toBeUndefined();
    expect(rb.limited).toBe(true);
    expect(rb.prev_batch).toMatch(/^s\d+$/);
    expect(rb.num_live).toBe(0);
    expect(rb.bump_stamp).toEqual(expect.any(Number));
    expect(rb.required_state.map((e: any) => [e.type, e.state_key]).sort()).toEqual([["m.room.create", ""], ["m.room.member", bob.user_id]]);
    expect(first.rooms[c].name).toBe("Room C");
    expect(first.rooms[c].heroes).toBeUndefined();
    expect(rb.bump_stamp).toBeGreaterThan(first.rooms[c].bump_stamp);
    expect([rb.notification_count, rb.highlight_count]).toEqual([1, 0]);
    // /messages from prev_batch pages back before the timeline.
    const back = await t.call("GET", `${V3}/rooms/${enc(b)}/messages?dir=b&limit=5&from=${enc(rb.prev_batch)}`, { token: bob.access_token });
    expect(back.json.chunk.map((e: any) => e.content?.body)).toContain("b1");

    // Nothing new: an answer at once without rooms (timeout 0), a new pos.
    const quiet = await ss(bob, body, `?pos=${enc(first.pos)}`);
    expect(quiet.rooms).toEqual({});
    expect(quiet.lists.all.ops[0].room_ids).toEqual([b, c]);
    expect(quiet.pos).not.toBe(first.pos);

    // A message in a: a enters the window at the top (initial: it was never sent); c is still known.
    await send(carol, a, "a2");
    const next = await ss(bob, body, `?pos=${enc(quiet.pos)}`);
    expect(next.lists.all.ops[0].room_ids).toEqual([a, b]);
    expect(Object.keys(next.rooms)).toEqual([a]);
    expect(next.rooms[a].initial).toBe(true);
    expect(next.rooms[a].name).toBe("Room A");
    expect(next.rooms[a].num_live).toBe(1);
    // A message in b: b is sent with just it, not initial, one live event, not limited.
    await send(carol, b, "b3");
    const news = await ss(bob, body, `?pos=${enc(next.pos)}`);
    expect(Object.keys(news.rooms)).toEqual([b]);
    const nb = news.rooms[b];
    expect([nb.initial, nb.name, nb.heroes, nb.required_state]).toEqual([undefined, undefined, undefined, undefined]);
    expect(nb.timeline.map((e: any) => e.content.body)).toEqual(["b3"]);
    expect([nb.limited, nb.num_live]).toEqual([false, 1]);
    // Growing the range sends c? c was sent already and has nothing new: only the ops change.
    const wide = await ss(bob, { ...body, lists: { all: { ...body.lists.all, ranges: [[0, 2]] } } }, `?pos=${enc(news.pos)}`);
    expect(wide.lists.all.ops[0].room_ids).toEqual([b, a, c]);
    expect(wide.rooms).toEqual({});
    // A retried request with the same pos answers again; an old pos is gone.
    expect((await ss(bob, body, `?pos=${enc(news.pos)}`)).lists.all.count).toBe(3);
    const old = await t.call("POST", `${SS}?pos=${enc(first.pos)}`, { token: bob.access_token, body });
    expect([old.status, old.json.errcode]).toEqual([400, "M_UNKNOWN_POS"]);
    // A long poll the client cancelled may finish after the request it sent instead: both answers are
    // kept until the client uses one, so the one it took still works (Element X does this).
    const base = await ss(bob, body, `?pos=${enc(news.pos)}`);
    const cancelled = await ss(bob, body, `?pos=${enc(base.pos)}`);
    const taken = await ss(bob, body, `?pos=${enc(base.pos)}`);
    expect((await ss(bob, body, `?pos=${enc(taken.pos)}`)).lists.all.count).toBe(3);
    const dropped = await t.call("POST", `${SS}?pos=${enc(cancelled.pos)}`, { token: bob.access_token, body });
    expect([dropped.status, dropped.json.errcode]).toEqual([400, "M_UNKNOWN_POS"]);
    // Another connection (conn_id) is separate: it starts from scratch.
    const other = await ss(bob, { ...body, conn_id: "other" });
    expect(Object.values(other.rooms).every((r: any) => r.initial === true)).toBe(true);
  });

  it("required_state: wildcards, $LAZY members of the timeline, and state changes later", async () => {
    const dave = await registerUser(t, "dave");
    const roomId = await createRoom(t, dave, { name: "lazy", preset: "public_chat" });
    const eric = await registerUser(t, "eric");
    await join(eric, roomId);
    await join(bob, roomId);
    await send(eric, roomId, "from eric");
    const sub = (rs: unknown[], limit = 1) => ({ room_subscriptions: { [roomId]: { timeline_limit: limit, required_state: rs } } });
    const lazy = await ss(dave, sub([["m.room.member", "$LAZY"]]));
    const rs = lazy.rooms[roomId].required_state;
    expect(rs.map((e: any) => e.state_key)).toEqual([eric.user_id]);
    const all = await ss(dave, sub([["*", "*"]]));
    const types = new Set(all.rooms[roomId].required_state.map((e: any) => e.type));
    for (const type of ["m.room.create", "m.room.power_levels", "m.room.join_rules", "m.room.member", "m.room.name"]) expect(types.has(type)).toBe(true);
    const members = await ss(dave, sub([["m.room.member", "*"]]));
    expect(members.rooms[roomId].required_state.map((e: any) => e.state_key).sort()).toEqual([bob.user_id, dave.user_id, eric.user_id].sort());
    // Later: a topic change comes in required_state when asked for; a new lazy sender brings their member event once.
    const conn = await ss(dave, sub([["m.room.topic", ""], ["m.room.member", "$LAZY"]]));
    await state(dave, roomId, "m.room.topic", "", { topic: "new topic" });
    await send(bob, roomId, "from bob");
    const later = await ss(dave, sub([["m.room.topic", ""], ["m.room.member", "$LAZY"]], 5), `?pos=${enc(conn.pos)}`);
    const r = later.rooms[roomId];
    expect(r.required_state.map((e: any) => [e.type, e.state_key]).sort()).toEqual([["m.room.member", bob.user_id], ["m.room.member", dave.user_id], ["m.room.topic", ""]].sort());
    // The grown timeline_limit (1 → 5) resends the latest events, flagged.
    expect(r.unstable_expanded_timeline).toBe(true);
    expect(r.timeline.slice(-2).map((e: any) => e.type)).toEqual(["m.room.topic", "m.room.message"]);
    expect(r.timeline.length).toBe(5);
  });

  it("filters: is_dm, is_encrypted, is_invite, room_types, not_room_types, room_name_like, tags, not_tags, spaces", async () => {
    const fay = await registerUser(t, "fay");
    const plain = await createRoom(t, fay, { name: "Plain talk" });
    const enc1 = await createRoom(t, fay, { name: "Secret", initial_state: [{ type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } }] });
    const space = await createRoom(t, fay, { name: "A space", creation_content: { type: "m.space" } });
    const dm = await createRoom(t, bob, { is_direct: true, invite: [fay.user_id] });
    await join(fay, dm);
    const invited = await createRoom(t, bob, { name: "Invite only", invite: [fay.user_id] });
    await state(fay, space, "m.space.child", plain, { via: ["localhost"] });
    expect((await t.call("PUT", `${V3}/user/${enc(fay.user_id)}/account_data/m.direct`, { token: fay.access_token, body: { [bob.user_id]: [dm] } })).status).toBe(200);
    expect((await t.call("PUT", `${V3}/user/${enc(fay.user_id)}/rooms/${enc(enc1)}/tags/u.work`, { token: fay.access_token, body: {} })).status).toBe(200);
    expect((await t.call("PUT", `${V3}/user/${enc(fay.user_id)}/rooms/${enc(plain)}/tags/m.favourite`, { token: fay.access_token, body: {} })).status).toBe(200);
    const list = (filters: Record<string, unknown>) => ({ ranges: [[0, 20]], timeline_limit: 0, required_state: [], filters });
    const res = await ss(fay, {
      lists: {
        dms: list({ is_dm: true }),
        notDms: list({ is_dm: false }),
        encrypted: list({ is_encrypted: true }),
        invites: list({ is_invite: true }),
        spaces: list({ room_types: ["m.space"] }),
        rooms: list({ not_room_types: ["m.space"] }),
        untyped: list({ room_types: [null] }),
        named: list({ room_name_like: "TALK" }),
        work: list({ tags: ["u.work", "m.favourite"], not_tags: ["m.favourite"] }),
        inSpace: list({ spaces: [space] }),
      },
    });
    const of = (k: string) => new Set(ids(res.lists[k]));
    expect(of("dms")).toEqual(new Set([dm]));
    expect(of("notDms")).toEqual(new Set([plain, enc1, space, invited]));
    expect(of("encrypted")).toEqual(new Set([enc1]));
    expect(of("invites")).toEqual(new Set([invited]));
    expect(of("spaces")).toEqual(new Set([space]));
    expect(of("rooms")).toEqual(new Set([plain, enc1, dm, invited]));
    expect(of("untyped")).toEqual(new Set([plain, enc1, dm, invited]));
    expect(of("named")).toEqual(new Set([plain]));
    expect(of("work")).toEqual(new Set([enc1]));
    expect(of("inSpace")).toEqual(new Set([plain]));
    expect(res.lists.dms.count).toBe(1);
    // The invite: stripped state, no timeline; the DM is flagged.
    const inv = res.rooms[invited];
    expect(inv.invite_state.map((e: any) => e.type)).toEqual(expect.arrayContaining(["m.room.create", "m.room.name", "m.room.member"]));
    expect(inv.timeline).toBeUndefined();
    expect(res.rooms[dm].is_dm).toBe(true);
    expect(res.rooms[plain].is_dm).toBeUndefined();
  });

  it("room subscriptions: rooms the user has no part in are ignored; a kicked user still sees the room", async () => {
    const gus = await registerUser(t, "gus");
    const mine = await createRoom(t, gus, { name: "mine" });
    const theirs = await createRoom(t, bob, { name: "not gus's" });
    const kickedFrom = await createRoom(t, bob, { preset: "public_chat" });
    await join(gus, kickedFrom);
    expect((await t.call("POST", `${V3}/rooms/${enc(kickedFrom)}/kick`, { token: bob.access_token, body: { user_id: gus.user_id } })).status).toBe(200);
    const res = await ss(gus, {
      lists: { all: { ranges: [[0, 9]], timeline_limit: 1, required_state: [] } },
      room_subscriptions: { [mine]: { timeline_limit: 3, required_state: [] }, [theirs]: { timeline_limit: 3, required_state: [] }, "!nowhere:localhost": { timeline_limit: 1, required_state: [] } },
    });
    expect(Object.keys(res.rooms).sort()).toEqual([mine, kickedFrom].sort());
    expect(res.rooms[mine].timeline.length).toBe(3);
    expect(ids(res.lists.all).sort()).toEqual([mine, kickedFrom].sort());
    // The kick is the last thing the user sees of the room.
    expect(res.rooms[kickedFrom].timeline.at(-1).content.membership).toBe("leave");
    expect(res.rooms[kickedFrom].joined_count).toBeUndefined();
  });

  it("extensions: to_device with since, e2ee key counts and device lists, account_data, receipts, typing", async () => {
    const hal = await registerUser(t, "hal");
    const roomId = await createRoom(t, hal, { preset: "public_chat" });
    await join(bob, roomId);
    const msgId = await send(bob, roomId, "read me");
    expect((await t.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(msgId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    expect((await t.call("PUT", `${V3}/user/${enc(hal.user_id)}/account_data/org.example.global`, { token: hal.access_token, body: { a: 1 } })).status).toBe(200);
    expect((await t.call("PUT", `${V3}/user/${enc(hal.user_id)}/rooms/${enc(roomId)}/account_data/org.example.room`, { token: hal.access_token, body: { b: 2 } })).status).toBe(200);
    const toDev = await t.call("PUT", `${V3}/sendToDevice/org.example.ping/td${++txn}`, { token: bob.access_token, body: { messages: { [hal.user_id]: { [hal.device_id]: { n: 1 } } } } });
    expect(toDev.status).toBe(200);
    const ext = { to_device: { enabled: true }, e2ee: { enabled: true }, account_data: { enabled: true }, receipts: { enabled: true }, typing: { enabled: true } };
    const body = { lists: { all: { ranges: [[0, 9]], timeline_limit: 5, required_state: [] } }, extensions: ext };
    const first = await ss(hal, body);
    expect(first.extensions.to_device.events.map((e: any) => [e.type, e.sender, e.content])).toEqual([["org.example.ping", bob.user_id, { n: 1 }]]);
    expect(first.extensions.e2ee.device_one_time_keys_count).toEqual({ signed_curve25519: 0 });
    expect(first.extensions.e2ee.device_unused_fallback_key_types).toEqual([]);
    expect(first.extensions.e2ee.device_lists).toBeUndefined();
    expect(first.extensions.account_data.global).toEqual(expect.arrayContaining([{ type: "org.example.global", content: { a: 1 } }]));
    expect(first.extensions.account_data.rooms[roomId]).toEqual([{ type: "org.example.room", content: { b: 2 } }]);
    expect(first.extensions.receipts.rooms[roomId].content[msgId]["m.read"][bob.user_id].ts).toEqual(expect.any(Number));
    // to_device: the same messages until `since` acknowledges them.
    const since = first.extensions.to_device.next_batch;
    const again = await ss(hal, { ...body, extensions: { ...ext, to_device: { enabled: true } } }, `?pos=${enc(first.pos)}`);
    expect(again.extensions.to_device.events.length).toBe(1);
    const acked = await ss(hal, { ...body, extensions: { ...ext, to_device: { enabled: true, since } } }, `?pos=${enc(again.pos)}`);
    expect(acked.extensions.to_device.events).toEqual([]);
    // Typing and a new receipt reach the next answer; device lists name a user who changed keys.
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(bob.user_id)}`, { token: bob.access_token, body: { typing: true, timeout: 30000 } })).status).toBe(200);
    const keys = await t.call("POST", `${V3}/keys/upload`, {
      token: bob.access_token,
      body: { device_keys: { user_id: bob.user_id, device_id: bob.device_id, algorithms: ["m.megolm.v1.aes-sha2"], keys: { [`ed25519:${bob.device_id}`]: "k" }, signatures: {} } },
    });
    expect(keys.status, JSON.stringify(keys.json)).toBe(200);
    const live = await ss(hal, { ...body, extensions: { ...ext, to_device: { enabled: true, since } } }, `?pos=${enc(acked.pos)}`);
    expect(live.extensions.typing.rooms[roomId]).toEqual({ type: "m.typing", content: { user_ids: [bob.user_id] } });
    expect(live.extensions.e2ee.device_lists.changed).toContain(bob.user_id);
    // Extensions are scoped: a list that matches nothing gets no typing.
    const none = await ss(hal, { ...body, extensions: { typing: { enabled: true, lists: ["other"], rooms: [] } } });
    expect(none.extensions.typing.rooms).toEqual({});
  });

  it("a long poll waits for news and returns with it", async () => {
    const ivy = await registerUser(t, "ivy");
    const roomId = await createRoom(t, ivy, {});
    const body = { lists: { all: { ranges: [[0, 9]], timeline_limit: 3, required_state: [] } } };
    const first = await ss(ivy, body);
    const started = Date.now();
    const polling = ss(ivy, body, `?pos=${enc(first.pos)}&timeout=20000`);
    let sentAt = 0;
    setTimeout(() => {
      sentAt = Date.now();
      void send(ivy, roomId, "wake up");
    }, 300);
    const woken = await polling;
    expect(sentAt).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(15000);
    expect(woken.rooms[roomId].timeline.map((e: any) => e.content.body)).toEqual(["wake up"]);
    // With nothing new, the poll returns at its timeout without rooms.
    const empty = await ss(ivy, body, `?pos=${enc(woken.pos)}&timeout=200`);
    expect(empty.rooms).toEqual({});
  });

  it("bad requests get the spec's errors; /versions advertises it", async () => {
    const bad: [string, unknown, number, string][] = [
      ["?pos=nope", {}, 400, "M_INVALID_PARAM"],
      ["?pos=999/s1_0_0_0_0_0_0_0_0", {}, 400, "M_UNKNOWN_POS"],
      ["?pos=1/s99999999_0_0_0_0_0_0_0_0", {}, 400, "M_INVALID_PARAM"],
      ["?set_presence=busy", {}, 400, "M_INVALID_PARAM"],
      ["", { lists: [] }, 400, "M_BAD_JSON"],
      ["", { lists: { a: { ranges: [[5, 1]], timeline_limit: 1 } } }, 400, "M_INVALID_PARAM"],
      ["", { lists: { a: { ranges: [[-1, 1]], timeline_limit: 1 } } }, 400, "M_BAD_JSON"],
      ["", { lists: { a: { ranges: [[0, 1]], timeline_limit: 1001 } } }, 400, "M_BAD_JSON"],
      ["", { lists: { a: { ranges: [[0, 1]], timeline_limit: "10" } } }, 400, "M_BAD_JSON"],
      ["", { lists: { a: { ranges: [[0, 1]], timeline_limit: 1, required_state: [["m.room.name"]] } } }, 400, "M_BAD_JSON"],
      ["", { lists: { a: { ranges: [[0, 1]], timeline_limit: 1, filters: { is_dm: "yes" } } } }, 400, "M_BAD_JSON"],
      ["", { lists: { ["k".repeat(65)]: { ranges: [[0, 1]], timeline_limit: 1 } } }, 400, "M_BAD_JSON"],
      ["", { lists: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`l${i}`, { ranges: [[0, 1]], timeline_limit: 1 }])) }, 400, "M_BAD_JSON"],
      ["", { room_subscriptions: { "!x:localhost": "all" } }, 400, "M_BAD_JSON"],
      ["", { extensions: { to_device: { enabled: true, since: 5 } } }, 400, "M_BAD_JSON"],
      ["", { conn_id: 7 }, 400, "M_BAD_JSON"],
    ];
    for (const [q, body, status, errcode] of bad) {
      const res = await t.call("POST", `${SS}${q}`, { token: alice.access_token, body });
      expect({ q, body, status: res.status, errcode: res.json.errcode }).toEqual({ q, body, status, errcode });
    }
    const notJson = await t.call("POST", SS, { token: alice.access_token, raw: "{nope", headers: { "content-type": "application/json" } });
    expect([notJson.status, notJson.json.errcode]).toEqual([400, "M_NOT_JSON"]);
    const anon = await t.call("POST", SS, { body: {} });
    expect([anon.status, anon.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const versions = await t.call("GET", "/_matrix/client/versions");
    expect(versions.json.unstable_features["org.matrix.simplified_msc3575"]).toBe(true);
  });
});
