// MSC4354 sticky events behind `experimental_features.msc4354_enabled`, on SQLite and PostgreSQL and beside
// the pinned live Synapse with the same options and assertions: `/versions` says org.matrix.msc4354; a
// send with `org.matrix.msc4354.sticky_duration_ms` carries `msc4354_sticky: {duration_ms}` and
// `unsigned.msc4354_sticky_duration_ttl_ms` (bounded to an hour; none once expired); bad values are refused
// with Synapse's errors and store nothing; /sync's `msc4354_sticky` section holds the room's unexpired sticky
// events the timeline does not show (initial: all; incremental: those since the token; a room joined since
// the token: all), an expired one no longer appears; the sliding-sync extension
// `org.matrix.msc4354.sticky_events` with its `sticky_<n>` tokens and errors; a delayed sticky event.
// Then Weft alone: the option off (nothing changes, tokens as before), and two Weft servers federating:
// a sticky event sent after the other server joined, and one sent before it joined (pushed to the new
// server), reach its client's sticky section.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";

const enc = encodeURIComponent;
const P = "org.matrix.msc4354.sticky_duration_ms";
const EXT = "org.matrix.msc4354.sticky_events";
const SSS = "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync";
const CONFIG = { experimental_features: { msc4354_enabled: true }, max_event_delay_duration: "24h" };
const LIMIT1 = enc(JSON.stringify({ room: { timeline: { limit: 1 } } }));

interface Home {
  call: TestServer["call"];
  register(localpart: string): Promise<Session>;
  close(): Promise<void>;
  /** Synapse answers fields the spec does not list: only Weft's answers are validated. */
  weft: boolean;
}

const starts: [string, () => Promise<Home>][] = [
  ...backends().map((backend): [string, () => Promise<Home>] => [`Weft on ${backend}`, async () => {
    const t = await startTestServer({ backend, config: CONFIG });
    return { call: t.call.bind(t), register: (l) => registerUser(t, l), close: () => t.close(), weft: true };
  }]),
  ["Synapse", async () => {
    const s = await startSynapse({ config: CONFIG });
    return { call: (m, p, o) => s.call(m, p, o), register: (l) => s.register(l), close: () => s.close(), weft: false };
  }],
];

/** Polls `fn` until it returns a value (not undefined), failing after `ms`. */
async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Ev = { event_id: string; type: string; content: Record<string, unknown>; msc4354_sticky?: { duration_ms: number }; unsigned?: Record<string, unknown> };
const ids = (events: Ev[] | undefined) => (events ?? []).map((e) => e.event_id);

describe.each(starts)("sticky events (MSC4354) on %s", (_name, start) => {
  let home: Home;
  let alice: Session, bob: Session;
  let roomId: string;
  const sent: string[] = [];

  const send = async (txn: string, query: string, content: Record<string, unknown> = { txn }, type = "m.test.sticky") =>
    home.call("PUT", `/_matrix/client/v3/rooms/${enc(roomId)}/send/${type}/${txn}${query}`, { token: alice.access_token, body: content });
  const sendSticky = async (txn: string, ms: number) => {
    const res = await send(txn, `?${P}=${ms}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    sent.push(res.json.event_id);
    return res.json.event_id as string;
  };
  const event = async (id: string, token = bob.access_token) => (await home.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/event/${enc(id)}`, { token })).json as Ev;
  // Synapse answers an identical /sync request from its response cache for 2 minutes
  // (sync_response_cache_duration): each request here differs by its timeout (a few ms).
  let timeout = 0;
  const sync = async (token: string, since?: string, filter = LIMIT1) => {
    const res = await home.call("GET", `/_matrix/client/v3/sync?filter=${filter}&timeout=${timeout++}${since ? `&since=${enc(since)}` : ""}`, { token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    if (home.weft) expectMatchesSpec(res, "GET", "/_matrix/client/v3/sync");
    return res.json;
  };
  const stickyOf = (body: any, room = roomId): Ev[] | undefined => body.rooms?.join?.[room]?.msc4354_sticky?.events;
  const messages = async () => {
    const res = await home.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: alice.access_token });
    expect(res.status).toBe(200);
    return res.json.chunk as Ev[];
  };

  beforeAll(async () => {
    home = await start();
    [alice, bob] = [await home.register("alice"), await home.register("bob")];
    roomId = (await home.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { preset: "public_chat" } })).json.room_id;
    expect((await home.call("POST", `/_matrix/client/v3/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await home?.close();
  });

  it("says org.matrix.msc4354 in /versions", async () => {
    const res = await home.call("GET", "/_matrix/client/versions");
    expect(res.json.unstable_features["org.matrix.msc4354"]).toBe(true);
  });

  it("refuses bad durations with Synapse's errors, storing nothing", async () => {
    const before = ids(await messages());
    const cases: [string, number, string, string][] = [
      ["abc", 400, "M_INVALID_PARAM", "must be an integer"],
      ["1.5", 400, "M_INVALID_PARAM", "must be an integer"],
      ["", 400, "M_INVALID_PARAM", "must be an integer"],
      ["1e3", 400, "M_INVALID_PARAM", "must be an integer"],
      ["0x10", 400, "M_INVALID_PARAM", "must be an integer"],
      ["-1", 400, "M_INVALID_PARAM", "must be a positive integer"],
      ["99999999999999999999999", 400, "M_BAD_JSON", "JSON integer out of range"],
    ];
    for (const [i, [value, status, errcode, text]] of cases.entries()) {
      const res = await send(`bad${i}`, `?${P}=${enc(value)}`);
      expect([value, res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([value, status, errcode]);
      expect(res.json.error).toContain(text);
    }
    expect(ids(await messages())).toEqual(before);
  });

  it("puts msc4354_sticky on the event and tells what is left of it, bounded to an hour", async () => {
    const a = await sendSticky("s-10m", 600_000);
    const long = await sendSticky("s-2h", 7_200_000);
    const zero = await sendSticky("s-0", 0);
    // Python's int(): a sign and blanks around the digits are accepted.
    const plus = await send("s-plus", `?${P}=${enc(" +600000 ")}`);
    expect(plus.status).toBe(200);
    sent.push(plus.json.event_id);
    const ea = await event(a);
    expect(ea.msc4354_sticky).toEqual({ duration_ms: 600_000 });
    expect(ea.unsigned?.msc4354_sticky_duration_ttl_ms).toBeGreaterThan(500_000);
    expect(ea.unsigned?.msc4354_sticky_duration_ttl_ms).toBeLessThanOrEqual(600_000);
    const el = await event(long);
    expect(el.msc4354_sticky).toEqual({ duration_ms: 7_200_000 });
    expect(el.unsigned?.msc4354_sticky_duration_ttl_ms).toBeLessThanOrEqual(3_600_000);
    expect(el.unsigned?.msc4354_sticky_duration_ttl_ms).toBeGreaterThan(3_500_000);
    const ez = await event(zero);
    expect(ez.msc4354_sticky).toEqual({ duration_ms: 0 });
    expect(ez.unsigned?.msc4354_sticky_duration_ttl_ms).toBeUndefined();
    expect((await event(plus.json.event_id)).msc4354_sticky).toEqual({ duration_ms: 600_000 });
    // /messages shows them the same way.
    const chunk = await messages();
    expect(chunk.find((e) => e.event_id === a)?.msc4354_sticky).toEqual({ duration_ms: 600_000 });
    // A state event is never sticky (the parameter is not read there).
    const st = await home.call("PUT", `/_matrix/client/v3/rooms/${enc(roomId)}/state/m.test.state/k?${P}=5000`, { token: alice.access_token, body: {} });
    expect(st.status).toBe(200);
    expect((await event(st.json.event_id)).msc4354_sticky).toBeUndefined();
  });

  let nextBatch: string;

  it("gives an initial /sync the room's unexpired sticky events not in its timeline, in order", async () => {
    const last = (await send("plain1", "", { msgtype: "m.text", body: "x" }, "m.room.message")).json.event_id as string;
    const body = await sync(bob.access_token);
    nextBatch = body.next_batch;
    expect(ids(body.rooms.join[roomId].timeline.events)).toEqual([last]);
    // The unexpired ones (not the 0 ms one), in the order sent.
    const unexpired = sent.filter((_, i) => i !== 2);
    const sticky = stickyOf(body)!;
    expect(ids(sticky)).toEqual(unexpired);
    for (const e of sticky) expect(e.unsigned?.msc4354_sticky_duration_ttl_ms).toBeGreaterThan(0);
  });

  it("gives an incremental /sync the sticky events since the token, once, and not those in the timeline", async () => {
    const s1 = await sendSticky("inc1", 600_000);
    await send("plain2", "", { msgtype: "m.text", body: "y" }, "m.room.message");
    const body = await sync(bob.access_token, nextBatch);
    expect(ids(stickyOf(body))).toEqual([s1]);
    // The next one brings nothing again; a sticky event in the timeline is not repeated in the section.
    const s2 = await sendSticky("inc2", 600_000);
    const again = await sync(bob.access_token, body.next_batch);
    expect(ids(again.rooms.join[roomId].timeline.events)).toEqual([s2]);
    expect(stickyOf(again)).toBeUndefined();
    expect(stickyOf(await sync(bob.access_token, again.next_batch))).toBeUndefined();
  });

  it("gives a room joined since the token all its unexpired sticky events", async () => {
    const carol = await home.register("carol");
    const before = (await sync(carol.access_token)).next_batch;
    expect((await home.call("POST", `/_matrix/client/v3/join/${enc(roomId)}`, { token: carol.access_token, body: {} })).status).toBe(200);
    const body = await sync(carol.access_token, before);
    const shown = new Set(ids(body.rooms.join[roomId].timeline.events));
    expect(ids(stickyOf(body))).toEqual(sent.filter((id, i) => i !== 2 && !shown.has(id)));
  });

  it("stops giving a sticky event once it expired", async () => {
    const short = await sendSticky("short", 1500);
    await send("plain3", "", { msgtype: "m.text", body: "z" }, "m.room.message");
    expect(ids(stickyOf(await sync(bob.access_token)))).toContain(short);
    await until("the sticky event to expire", async () => ((await event(short)).unsigned?.msc4354_sticky_duration_ttl_ms === undefined ? true : undefined));
    expect((await event(short)).msc4354_sticky).toEqual({ duration_ms: 1500 });
    expect(ids(stickyOf(await sync(bob.access_token)))).not.toContain(short);
  });

  it("serves the sliding-sync extension with its own tokens", async () => {
    const body = (ext: unknown) => ({ lists: { all: { ranges: [[0, 9]], timeline_limit: 1, required_state: [] } }, extensions: { [EXT]: ext } });
    const call = (ext: unknown) => home.call("POST", SSS, { token: bob.access_token, body: body(ext) });
    const all = await call({ enabled: true });
    expect(all.status, JSON.stringify(all.json)).toBe(200);
    const got = all.json.extensions[EXT];
    expect(got.next_batch).toMatch(/^sticky_\d+$/);
    const timeline = ids(all.json.rooms[roomId].timeline);
    const events: Ev[] = got.rooms[roomId].events;
    expect(ids(events).some((id) => timeline.includes(id))).toBe(false);
    expect(ids(events)).toEqual(expect.arrayContaining(sent.filter((_, i) => i < 2)));
    for (const e of events) expect(e.msc4354_sticky?.duration_ms).toBeGreaterThan(0);
    // A limit cuts it short; next_batch then goes on from the last one given.
    const one = await call({ enabled: true, limit: 1 });
    const first = one.json.extensions[EXT];
    expect(ids(first.rooms[roomId].events)).toEqual([ids(events)[0]]);
    const next = (await call({ enabled: true, limit: 1, since: first.next_batch })).json.extensions[EXT];
    expect(ids(next.rooms[roomId].events)).toEqual([ids(events)[1]]);
    // Off, or nothing new since the token: no extension.
    expect((await call({ enabled: false })).json.extensions[EXT]).toBeUndefined();
    expect((await call({ enabled: true, since: got.next_batch })).json.extensions[EXT]).toBeUndefined();
    // Bad requests.
    for (const bad of [{ enabled: "yes" }, { enabled: true, limit: -1 }, { enabled: true, since: "sticky_bogus" }, { enabled: true, since: 5 }]) {
      const res = await call(bad);
      expect([JSON.stringify(bad), res.status, res.json.errcode]).toEqual([JSON.stringify(bad), 400, "M_BAD_JSON"]);
    }
    const future = await call({ enabled: true, since: "sticky_999999" });
    expect([future.status, future.json.errcode]).toEqual([400, "M_UNKNOWN_POS"]);
  });

  it("sends a delayed sticky event as sticky", async () => {
    const before = (await sync(bob.access_token)).next_batch;
    const bad = await send("d-bad", `?org.matrix.msc4140.delay=500&${P}=abc`);
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const res = await send("delayed", `?org.matrix.msc4140.delay=500&${P}=60000`, { delayed: true });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.delay_id).toEqual(expect.any(String));
    const e = await until("the delayed sticky event", async () => {
      const body = await sync(bob.access_token, before, enc(JSON.stringify({ room: { timeline: { limit: 10 } } })));
      return (body.rooms?.join?.[roomId]?.timeline.events as Ev[] | undefined)?.find((x) => x.content.delayed === true);
    });
    expect(e.msc4354_sticky).toEqual({ duration_ms: 60_000 });
    expect(e.unsigned?.msc4354_sticky_duration_ttl_ms).toBeGreaterThan(50_000);
  });
});

describe.each(backends())("sticky events off (the default) on Weft on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(() => t?.close());

  it("ignores the parameter, syncs with the tokens it always did and serves no extension", async () => {
    const alice = await registerUser(t, "alice");
    expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc4354"]).toBe(false);
    const room = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: {} })).json.room_id as string;
    const res = await t.call("PUT", `/_matrix/client/v3/rooms/${enc(room)}/send/m.test/t1?${P}=abc`, { token: alice.access_token, body: {} });
    expect(res.status).toBe(200);
    const ok = await t.call("PUT", `/_matrix/client/v3/rooms/${enc(room)}/send/m.test/t2?${P}=60000`, { token: alice.access_token, body: {} });
    const e = (await t.call("GET", `/_matrix/client/v3/rooms/${enc(room)}/event/${enc(ok.json.event_id)}`, { token: alice.access_token })).json;
    expect(e.msc4354_sticky).toBeUndefined();
    expect((await t.hs.services.rooms.events.get(ok.json.event_id))?.pdu.msc4354_sticky).toBeUndefined();
    const body = (await t.call("GET", "/_matrix/client/v3/sync", { token: alice.access_token })).json;
    expect(body.next_batch.split("_")).toHaveLength(8);
    expect(body.rooms.join[room].msc4354_sticky).toBeUndefined();
    const ss = await t.call("POST", SSS, { token: alice.access_token, body: { lists: { a: { ranges: [[0, 9]], timeline_limit: 1 } }, extensions: { [EXT]: { enabled: true } } } });
    expect(ss.status).toBe(200);
    expect(ss.json.extensions[EXT]).toBeUndefined();
    expect(ss.json.pos.split("_")).toHaveLength(9);
  });
});

describe.each(backends())("sticky events over federation between two Weft servers on %s", (backend) => {
  let a: FederatedServer, b: FederatedServer;
  let alice: Session, bob: Session;
  let roomId: string;
  beforeAll(async () => {
    a = await startFederatedServer({ backend, config: CONFIG });
    b = await startFederatedServer({ backend, config: CONFIG });
    alice = await registerUser(a, "alice");
    bob = await registerUser(b, "bob");
    roomId = (await a.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { preset: "public_chat" } })).json.room_id;
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const sendSticky = async (txn: string, ms: number) => {
    const res = await a.call("PUT", `/_matrix/client/v3/rooms/${enc(roomId)}/send/m.test.sticky/${txn}?${P}=${ms}`, { token: alice.access_token, body: { txn } });
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };
  const bobSticky = async (since?: string) => {
    const res = await b.call("GET", `/_matrix/client/v3/sync?filter=${LIMIT1}&timeout=0${since ? `&since=${enc(since)}` : ""}`, { token: bob.access_token });
    expect(res.status).toBe(200);
    return res.json;
  };

  it("pushes the sticky events sent before a server joined to it, and those sent after", async () => {
    const early = await sendSticky("early", 600_000);
    const join = await b.call("POST", `/_matrix/client/v3/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    // The sticky event from before the join reaches bob's server a moment later (JOINER_PUSH_DELAY_MS).
    await until("the early sticky event on the joining server", async () => ((await b.hs.services.sticky.inRooms(new Set([roomId]), 0, Number.MAX_SAFE_INTEGER, Date.now(), undefined)).some((r) => r.eventId === early) ? true : undefined));
    const initial = await bobSticky();
    const all = [...ids(initial.rooms.join[roomId].timeline.events), ...ids(stickyOf(initial))];
    expect(all).toContain(early);
    const e = [...(initial.rooms.join[roomId].msc4354_sticky?.events ?? []), ...initial.rooms.join[roomId].timeline.events].find((x: Ev) => x.event_id === early);
    expect(e.msc4354_sticky).toEqual({ duration_ms: 600_000 });
    expect(e.unsigned.msc4354_sticky_duration_ttl_ms).toBeGreaterThan(500_000);

    // After the join: sent with other events after it, it shows in the sticky section of an incremental sync.
    const late = await sendSticky("late", 600_000);
    const plain = (await a.call("PUT", `/_matrix/client/v3/rooms/${enc(roomId)}/send/m.room.message/p1`, { token: alice.access_token, body: { msgtype: "m.text", body: "after" } })).json.event_id;
    const body = await until("the late sticky event in bob's sync", async () => {
      const got = await bobSticky(initial.next_batch);
      const tl = ids(got.rooms?.join?.[roomId]?.timeline.events);
      return tl.includes(plain) ? got : undefined;
    });
    // Not in the timeline (limit 1: the message after it), so in the sticky section. (The early one may be
    // there again: bob's join was made with partial state, and a room whose state completes after a token
    // is shown anew to a sync from it, with all of its sticky events, as a room joined since the token.)
    expect(ids(body.rooms.join[roomId].timeline.events)).toEqual([plain]);
    expect(ids(stickyOf(body))).toContain(late);
  });
});

function stickyOf(body: any): Ev[] | undefined {
  const rooms = body.rooms?.join ?? {};
  const first = Object.values(rooms)[0] as { msc4354_sticky?: { events: Ev[] } } | undefined;
  return first?.msc4354_sticky?.events;
}
