// POST /search (Server Side Search) over HTTP on SQLite and PostgreSQL: term matching (word prefixes,
// all words), keys, order_by rank vs recent, filters by room and sender, next_batch pagination (also
// per group), event_context with profiles, include_state, groupings, history visibility (a later joiner
// of a `joined` room, a member who left), redacted events, rooms never joined, and bad requests.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import type { Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("search on %s", (backend) => {
  const { t, users: { alice, bob, carol, dave } } = withServer({ backend, users: ["alice", "bob", "carol", "dave"] });
  let txn = 0;

  async function join(who: Session, roomId: string) {
    const res = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: who.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  }

  async function send(who: Session, roomId: string, body: string): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }

  /** Runs a search that must succeed (validated against the spec) and returns room_events. */
  async function search(who: Session, roomEvents: Record<string, unknown>, nextBatch?: string): Promise<any> {
    const p = `${V3}/search${nextBatch === undefined ? "" : `?next_batch=${enc(nextBatch)}`}`;
    const res = await t.call("POST", p, { token: who.access_token, body: { search_categories: { room_events: roomEvents } } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", p);
    return res.json.search_categories.room_events;
  }

  const ids = (re: any) => re.results.map((x: any) => x.result.event_id);

  function expectError(res: { status: number; json: any }, status: number, errcode: string) {
    expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
    expect(typeof res.json.error).toBe("string");
  }

  it("matches every word of the term as a word prefix, case-insensitively, in joined rooms only", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await join(bob, roomId);
    const a = await send(alice, roomId, "I really like Pineapples on pizza");
    const b = await send(bob, roomId, "pineapple juice is fine");
    await send(bob, roomId, "nothing to see here");
    const both = await search(alice, { search_term: "PINEAPPLE" });
    expect(ids(both).sort()).toEqual([a, b].sort());
    expect(both.count).toBe(2);
    expect(both.highlights).toContain("pineapple");
    expect(both.results[0].result).toMatchObject({ room_id: roomId, type: "m.room.message" });
    expect(typeof both.results[0].rank).toBe("number");
    // Prefixes of words match; every word must match.
    expect(ids(await search(alice, { search_term: "pinea piz" }))).toEqual([a]);
    expect(ids(await search(alice, { search_term: "pineapple zucchini" }))).toEqual([]);
    // Dave is in no room: he finds nothing, not even in this public room.
    const none = await search(dave, { search_term: "pineapple" });
    expect(none.results).toEqual([]);
    expect(none.count).toBe(0);
    expect(none.next_batch).toBeUndefined();
  });

  it("searches content.body, content.name and content.topic, or only the keys asked for", async () => {
    const roomId = await createRoom(t, alice, { name: "Quokka fanclub", topic: "quokka photos daily" });
    const msg = await send(alice, roomId, "a quokka smiled at me");
    const all = await search(alice, { search_term: "quokka" });
    expect(all.results.map((x: any) => x.result.type).sort()).toEqual(["m.room.message", "m.room.name", "m.room.topic"]);
    const names = await search(alice, { search_term: "quokka", keys: ["content.name"] });
    expect(names.results.map((x: any) => x.result.type)).toEqual(["m.room.name"]);
    const bodies = await search(alice, { search_term: "quokka", keys: ["content.body", "content.topic"] });
    expect(bodies.results.map((x: any) => x.result.type).sort()).toEqual(["m.room.message", "m.room.topic"]);
    expect(ids(bodies)).toContain(msg);
  });

  it("orders by rank (higher first) or by recency (newest first)", async () => {
    const roomId = await createRoom(t, alice);
    const once = await send(alice, roomId, "walrus spotted near the harbour with many boats and gulls and fishermen");
    const thrice = await send(alice, roomId, "walrus walrus walrus");
    const last = await send(alice, roomId, "a walrus again, far away from all the other animals in the bay");
    const ranked = await search(alice, { search_term: "walrus", order_by: "rank" });
    expect(ids(ranked)[0]).toBe(thrice);
    const ranks = ranked.results.map((x: any) => x.rank);
    expect([...ranks].sort((x: number, y: number) => y - x)).toEqual(ranks);
    expect(ranks[0]).toBeGreaterThan(ranks[2]);
    const recent = await search(alice, { search_term: "walrus", order_by: "recent" });
    expect(ids(recent)).toEqual([last, thrice, once]);
  });

  it("applies the filter: rooms, not_rooms, senders, not_senders, types, limit", async () => {
    const r1 = await createRoom(t, alice, { preset: "public_chat" });
    const r2 = await createRoom(t, alice, { preset: "public_chat" });
    await join(bob, r1);
    const a1 = await send(alice, r1, "narwhal one");
    const b1 = await send(bob, r1, "narwhal two");
    const a2 = await send(alice, r2, "narwhal three");
    expect(ids(await search(alice, { search_term: "narwhal", filter: { rooms: [r2] } }))).toEqual([a2]);
    expect(ids(await search(alice, { search_term: "narwhal", filter: { not_rooms: [r2] } })).sort()).toEqual([a1, b1].sort());
    expect(ids(await search(alice, { search_term: "narwhal", filter: { senders: [bob.user_id] } }))).toEqual([b1]);
    expect(ids(await search(alice, { search_term: "narwhal", filter: { not_senders: [bob.user_id] } })).sort()).toEqual([a1, a2].sort());
    expect(ids(await search(alice, { search_term: "narwhal", filter: { types: ["m.room.topic"] } }))).toEqual([]);
    const one = await search(alice, { search_term: "narwhal", order_by: "recent", filter: { limit: 1 } });
    expect(ids(one)).toEqual([a2]);
    expect(one.count).toBe(3);
    expect(typeof one.next_batch).toBe("string");
  });

  it("pages through results with next_batch, in both orders", async () => {
    const roomId = await createRoom(t, alice);
    const sent: string[] = [];
    for (let i = 0; i < 7; i++) sent.push(await send(alice, roomId, `platypus number ${i}${" filler".repeat(i)}`));
    for (const order_by of ["recent", "rank"]) {
      const seen: string[] = [];
      let next: string | undefined;
      let pages = 0;
      do {
        const page = await search(alice, { search_term: "platypus", order_by, filter: { limit: 3 } }, next);
        expect(page.results.length).toBeLessThanOrEqual(3);
        seen.push(...ids(page));
        next = page.next_batch;
        pages++;
      } while (next !== undefined && pages < 10);
      expect(seen.sort()).toEqual([...sent].sort());
      expect(pages).toBe(3);
    }
    const recent = await search(alice, { search_term: "platypus", order_by: "recent", filter: { limit: 3 } });
    expect(ids(recent)).toEqual([sent[6], sent[5], sent[4]]);
    // A token of one order is refused by the other.
    const res = await t.call("POST", `${V3}/search?next_batch=${enc(recent.next_batch)}`, {
      token: alice.access_token,
      body: { search_categories: { room_events: { search_term: "platypus", order_by: "rank" } } },
    });
    expectError(res, 400, "M_INVALID_PARAM");
  });

  it("gives every full page a next_batch, as Synapse: the page after the last full one is empty and has none", async () => {
    const roomId = await createRoom(t, alice);
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) sent.push(await send(alice, roomId, `quoll ${i}`));
    for (const order_by of ["recent", "rank"]) {
      const first = await search(alice, { search_term: "quoll", order_by, filter: { limit: 2, rooms: [roomId] } });
      const second = await search(alice, { search_term: "quoll", order_by, filter: { limit: 2, rooms: [roomId] } }, first.next_batch);
      expect([...ids(first), ...ids(second)].sort()).toEqual([...sent].sort());
      expect(typeof second.next_batch).toBe("string");
      const third = await search(alice, { search_term: "quoll", order_by, filter: { limit: 2, rooms: [roomId] } }, second.next_batch);
      expect([third.results, third.count, third.next_batch]).toEqual([[], 4, undefined]);
    }
    // One result asked for, one found: a token all the same.
    expect(typeof (await search(alice, { search_term: "quoll 3", order_by: "recent", filter: { limit: 1, rooms: [roomId] } })).next_batch).toBe("string");
  });

  it("returns event_context with before/after events and the senders' profiles at that point", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await join(bob, roomId);
    const before1 = await send(bob, roomId, "first");
    const before2 = await send(alice, roomId, "second");
    const hit = await send(bob, roomId, "the dugong appears");
    const after1 = await send(alice, roomId, "third");
    await send(alice, roomId, "fourth");
    const re = await search(alice, {
      search_term: "dugong",
      event_context: { before_limit: 2, after_limit: 1, include_profile: true },
    });
    expect(ids(re)).toEqual([hit]);
    const ctx = re.results[0].context;
    expect(ctx.events_before.map((e: any) => e.event_id)).toEqual([before2, before1]);
    expect(ctx.events_after.map((e: any) => e.event_id)).toEqual([after1]);
    expect(typeof ctx.start).toBe("string");
    expect(typeof ctx.end).toBe("string");
    expect(ctx.profile_info).toEqual({ [alice.user_id]: { displayname: "alice" }, [bob.user_id]: { displayname: "bob" } });
    // The start/end tokens page on with /messages from the context's edges.
    const more = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=f&from=${enc(ctx.end)}&limit=1`, { token: alice.access_token });
    expect(more.json.chunk.map((e: any) => e.body ?? e.content.body)).toEqual(["fourth"]);
    // Without include_profile there is no profile_info.
    const plain = await search(alice, { search_term: "dugong", event_context: { before_limit: 0, after_limit: 0 } });
    expect(plain.results[0].context.profile_info).toBeUndefined();
    expect(plain.results[0].context.events_before).toEqual([]);
  });

  it("includes each room's state with include_state, and groups results by room and by sender", async () => {
    const r1 = await createRoom(t, alice, { name: "Room of axolotls" });
    const r2 = await createRoom(t, alice, { preset: "public_chat" });
    await join(bob, r2);
    const e1 = await send(alice, r1, "axolotl facts");
    const e2 = await send(bob, r2, "axolotl pictures");
    const e3 = await send(alice, r2, "axolotl videos");
    const re = await search(alice, {
      search_term: "axolotl",
      keys: ["content.body"],
      order_by: "recent",
      include_state: true,
      groupings: { group_by: [{ key: "room_id" }, { key: "sender" }] },
    });
    expect(ids(re)).toEqual([e3, e2, e1]);
    expect(Object.keys(re.state).sort()).toEqual([r1, r2].sort());
    expect(re.state[r1].find((e: any) => e.type === "m.room.name").content.name).toBe("Room of axolotls");
    expect(re.state[r2].some((e: any) => e.type === "m.room.create")).toBe(true);
    expect(re.groups.room_id[r2].results).toEqual([e3, e2]);
    expect(re.groups.room_id[r1].results).toEqual([e1]);
    expect(re.groups.room_id[r2].order).toBeLessThan(re.groups.room_id[r1].order);
    expect(re.groups.sender[alice.user_id].results).toEqual([e3, e1]);
    expect(re.groups.sender[bob.user_id].results).toEqual([e2]);
    expect(re.groups.room_id[r2].next_batch).toBeUndefined();

    // A group's next_batch pages on within that group only.
    const page = await search(alice, { search_term: "axolotl", keys: ["content.body"], order_by: "recent", filter: { limit: 1 }, groupings: { group_by: [{ key: "room_id" }] } });
    expect(ids(page)).toEqual([e3]);
    const groupNext = page.groups.room_id[r2].next_batch;
    expect(typeof groupNext).toBe("string");
    const inGroup = await search(alice, { search_term: "axolotl", keys: ["content.body"], order_by: "recent", filter: { limit: 5 } }, groupNext);
    expect(ids(inGroup)).toEqual([e2]);
    const global = await search(alice, { search_term: "axolotl", keys: ["content.body"], order_by: "recent", filter: { limit: 5 } }, page.next_batch);
    expect(ids(global)).toEqual([e2, e1]);
  });

  it("applies history visibility: a later joiner of a `joined` room does not find earlier messages", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat", initial_state: [{ type: "m.room.history_visibility", content: { history_visibility: "joined" } }] });
    await send(alice, roomId, "capybara before carol");
    await join(carol, roomId);
    const late = await send(alice, roomId, "capybara after carol");
    expect(ids(await search(carol, { search_term: "capybara" }))).toEqual([late]);
    expect((await search(alice, { search_term: "capybara" })).results).toHaveLength(2);
  });

  it("a member who left finds what they could see until they left, and nothing after", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await join(dave, roomId);
    const seen = await send(alice, roomId, "okapi while dave is here");
    const res = await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: dave.access_token, body: {} });
    expect(res.status).toBe(200);
    await send(alice, roomId, "okapi after dave left");
    expect(ids(await search(dave, { search_term: "okapi" }))).toEqual([seen]);
    // Once forgotten, the room is not searched at all.
    expect((await t.call("POST", `${V3}/rooms/${enc(roomId)}/forget`, { token: dave.access_token, body: {} })).status).toBe(200);
    expect(ids(await search(dave, { search_term: "okapi" }))).toEqual([]);
  });

  it("does not find redacted events", async () => {
    const roomId = await createRoom(t, alice);
    const gone = await send(alice, roomId, "zebra secret");
    const kept = await send(alice, roomId, "zebra public");
    const red = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(gone)}/r${++txn}`, { token: alice.access_token, body: { reason: "oops" } });
    expect(red.status, JSON.stringify(red.json)).toBe(200);
    const re = await search(alice, { search_term: "zebra" });
    expect(ids(re)).toEqual([kept]);
    expect(re.count).toBe(1);
    expect(ids(await search(alice, { search_term: "secret" }))).toEqual([]);
  });

  it("does not find events redacted while the index catches up (redactions racing the indexer's batches)", async () => {
    // The index is written after each commit, in batches (src/domain/search/index-consumer.ts): a redaction
    // may commit before the batch holding its event, or while that batch is being written.
    const roomId = await createRoom(t, alice);
    const pairs = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const gone = await send(alice, roomId, `wombat hidden ${i}`);
        const red = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(gone)}/race${i}-${++txn}`, { token: alice.access_token, body: {} });
        expect(red.status).toBe(200);
        return { gone, kept: await send(alice, roomId, `wombat shown ${i}`) };
      }),
    );
    const found = await search(alice, { search_term: "wombat", filter: { limit: 50 } });
    expect(new Set(ids(found))).toEqual(new Set(pairs.map((p) => p.kept)));
    expect(found.count).toBe(pairs.length);
  });

  it("answers an empty category list and a term without words with no results", async () => {
    const res = await t.call("POST", `${V3}/search`, { token: alice.access_token, body: { search_categories: {} } });
    expect([res.status, res.json]).toEqual([200, { search_categories: {} }]);
    expectMatchesSpec(res, "POST", `${V3}/search`);
    const re = await search(alice, { search_term: "!!! ???" });
    expect(re.results).toEqual([]);
  });

  it("refuses bad requests with the spec's errors", async () => {
    const post = (body: unknown, opts: { raw?: string; query?: string; token?: string | null } = {}) =>
      t.call("POST", `${V3}/search${opts.query ?? ""}`, {
        token: opts.token === null ? undefined : (opts.token ?? alice.access_token),
        ...(opts.raw !== undefined ? { raw: opts.raw, headers: { "content-type": "application/json" } } : { body }),
      });
    expectError(await post({ search_categories: { room_events: {} } }), 400, "M_MISSING_PARAM");
    expectError(await post({}), 400, "M_MISSING_PARAM");
    expectError(await post({ search_categories: { room_events: { search_term: 42 } } }), 400, "M_BAD_JSON");
    expectError(await post({ search_categories: "all" }), 400, "M_BAD_JSON");
    expectError(await post({ search_categories: { room_events: { search_term: "x", keys: "content.body" } } }), 400, "M_BAD_JSON");
    expectError(await post({ search_categories: { room_events: { search_term: "x", keys: ["content.url"] } } }), 400, "M_INVALID_PARAM");
    expectError(await post({ search_categories: { room_events: { search_term: "x", order_by: "oldest" } } }), 400, "M_INVALID_PARAM");
    expectError(await post({ search_categories: { room_events: { search_term: "x", filter: { rooms: "!a:b" } } } }), 400, "M_BAD_JSON");
    expectError(await post({ search_categories: { room_events: { search_term: "x", event_context: { before_limit: -1 } } } }), 400, "M_BAD_JSON");
    expectError(await post({ search_categories: { room_events: { search_term: "x", groupings: { group_by: [{ key: "type" }] } } } }), 400, "M_INVALID_PARAM");
    expectError(await post({ search_categories: { room_events: { search_term: "x" } } }, { query: "?next_batch=not-a-token" }), 400, "M_INVALID_PARAM");
    expectError(await post(undefined, { raw: "{not json" }), 400, "M_NOT_JSON");
    expectError(await post({ search_categories: { room_events: { search_term: "x" } } }, { token: null }), 401, "M_MISSING_TOKEN");
  });
});
