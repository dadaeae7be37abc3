// Reading rooms over HTTP on SQLite and PostgreSQL: one event, /messages in both directions (from, to,
// limit, filters, lazy-loaded members, the end of history, continuity across pages), /context, and history
// visibility (joined, invited, shared, world_readable, former members, guests) applied to every read.
import { beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import type { Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("room reads on %s", (backend) => {
  const { t, users: { alice, bob, carol } } = withServer({ backend, users: ["alice", "bob", "carol"] });
  let txn = 0;

  const create = (body: Record<string, unknown> = {}, who: Session = alice) => createRoom(t, who, body);

  async function post(who: Session | string, p: string, body: Record<string, unknown> = {}) {
    const res = await t.call("POST", p, { token: typeof who === "string" ? who : who.access_token, body });
    expect(res.status, `${p}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json;
  }
  const join = (who: Session | string, roomId: string) => post(who, `${V3}/join/${enc(roomId)}`);
  const leave = (who: Session | string, roomId: string) => post(who, `${V3}/rooms/${enc(roomId)}/leave`);
  const invite = (who: Session, roomId: string, userId: string) => post(who, `${V3}/rooms/${enc(roomId)}/invite`, { user_id: userId });

  async function send(who: Session | string, roomId: string, body: string, type = "m.room.message"): Promise<string> {
    const p = `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/r${++txn}`;
    const res = await t.call("PUT", p, { token: typeof who === "string" ? who : who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }

  async function putState(who: Session, roomId: string, type: string, content: Record<string, unknown>, stateKey = ""): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(stateKey)}`, { token: who.access_token, body: content });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }

  /** GET /messages; asserts 200 and the spec's shape. */
  async function messages(who: Session | string, roomId: string, q: Record<string, string | number | object | undefined>) {
    const params = Object.entries(q)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${enc(typeof v === "object" ? JSON.stringify(v) : String(v))}`)
      .join("&");
    const p = `${V3}/rooms/${enc(roomId)}/messages?${params}`;
    const res = await t.call("GET", p, { token: typeof who === "string" ? who : who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "GET", p);
    expect(typeof res.json.start).toBe("string");
    return res.json as { chunk: any[]; start: string; end?: string; state?: any[] };
  }

  const ids = (chunk: any[]) => chunk.map((e) => e.event_id as string);
  const bodies = (chunk: any[]) => chunk.filter((e) => e.type === "m.room.message").map((e) => e.content.body as string);

  /** Every event of the room as stored, oldest first. */
  async function storedIds(roomId: string): Promise<string[]> {
    const rows = await t.hs.services.db.event.findMany({ where: { roomId }, orderBy: { streamOrdering: "asc" }, select: { eventId: true } });
    return rows.map((r: { eventId: string }) => r.eventId);
  }

  async function getEvent(who: Session | string, roomId: string, eventId: string) {
    const p = `${V3}/rooms/${enc(roomId)}/event/${enc(eventId)}`;
    return t.call("GET", p, { token: typeof who === "string" ? who : who.access_token });
  }

  function expectError(res: { status: number; json: any }, status: number, errcode: string) {
    expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
  }

  describe("a busy room", () => {
    let roomId: string;
    let msgs: string[];
    let all: string[];

    beforeAll(async () => {
      roomId = await create({ preset: "public_chat", name: "busy" });
      await join(bob, roomId);
      msgs = [];
      for (let i = 0; i < 10; i++) msgs.push(await send(i % 3 === 2 ? bob : alice, roomId, `m${i}`));
      await send(alice, roomId, "custom a", "com.example.a");
      await send(bob, roomId, "custom b", "com.example.b");
      await putState(alice, roomId, "m.room.topic", { topic: "busy topic" });
      all = await storedIds(roomId);
    });

    it("GET /event returns one event; unknown ids, other rooms and outsiders get 404", async () => {
      const ok = await getEvent(bob, roomId, msgs[3]!);
      expect(ok.status).toBe(200);
      expectMatchesSpec(ok, "GET", `${V3}/rooms/${enc(roomId)}/event/${enc(msgs[3]!)}`);
      expect(ok.json).toMatchObject({ event_id: msgs[3], room_id: roomId, type: "m.room.message", content: { body: "m3" } });
      expectError(await getEvent(bob, roomId, "$unknown"), 404, "M_NOT_FOUND");
      const other = await create({ preset: "public_chat" });
      expectError(await getEvent(alice, other, msgs[3]!), 404, "M_NOT_FOUND");
      // carol is not in the room (shared history is for members only).
      expectError(await getEvent(carol, roomId, msgs[3]!), 404, "M_NOT_FOUND");
      expectError(await getEvent(carol, "!nowhere:weft.test", msgs[3]!), 404, "M_NOT_FOUND");
    });

    it("backwards and forwards with from omitted, and limit", async () => {
      const b = await messages(bob, roomId, { dir: "b", limit: 3 });
      expect(ids(b.chunk)).toEqual(all.slice(-3).reverse());
      expect(b.end).toBeDefined();
      const f = await messages(bob, roomId, { dir: "f", limit: 3 });
      expect(ids(f.chunk)).toEqual(all.slice(0, 3));
      expect(f.chunk[0].type).toBe("m.room.create");
      expect(f.end).toBeDefined();
      // The spec requires dir; without it, forwards (as Synapse does).
      const def = await messages(bob, roomId, { limit: 1 });
      expect(ids(def.chunk)).toEqual(all.slice(0, 1));
      const two = await messages(bob, roomId, { dir: "b", limit: 2, from: b.end });
      expect(ids(two.chunk)).toEqual(all.slice(-5, -3).reverse());
      const none = await messages(bob, roomId, { dir: "b", limit: 0 });
      expect(none.chunk).toEqual([]);
    });

    it("the default limit is 10", async () => {
      const b = await messages(bob, roomId, { dir: "b" });
      expect(b.chunk).toHaveLength(10);
    });

    it("`to` stops the walk in both directions", async () => {
      const first = await messages(bob, roomId, { dir: "f", limit: 4 });
      // Forwards from the start up to the token after the 4th event: exactly those 4.
      const f = await messages(bob, roomId, { dir: "f", limit: 100, to: first.end });
      expect(ids(f.chunk)).toEqual(all.slice(0, 4));
      // Backwards from the head down to the same token: everything after the 4th event.
      const b = await messages(bob, roomId, { dir: "b", limit: 100, to: first.end });
      expect(ids(b.chunk)).toEqual(all.slice(4).reverse());
    });

    it("end is omitted once history is exhausted", async () => {
      const b = await messages(bob, roomId, { dir: "b", limit: 1000 });
      expect(ids(b.chunk)).toEqual([...all].reverse());
      // The chunk reached the start of history: it still says where it ended; the next page has no end.
      const past = await messages(bob, roomId, { dir: "b", limit: 1000, from: b.end });
      expect([past.chunk, past.end]).toEqual([[], undefined]);
      const last = await messages(bob, roomId, { dir: "b", limit: all.length });
      expect(last.chunk).toHaveLength(all.length);
      if (last.end !== undefined) expect((await messages(bob, roomId, { dir: "b", from: last.end })).chunk).toEqual([]);
    });

    it("walking the whole room backwards then forwards in pages of 3 gives every event once, in order", async () => {
      const back: string[] = [];
      let from: string | undefined;
      for (let i = 0; i < 50; i++) {
        const page = await messages(bob, roomId, { dir: "b", limit: 3, from });
        back.push(...ids(page.chunk));
        if (page.end === undefined) break;
        expect(page.chunk.length).toBeGreaterThan(0);
        from = page.end;
      }
      expect(back).toEqual([...all].reverse());
      const fwd: string[] = [];
      from = undefined;
      for (let i = 0; i < 50; i++) {
        const page = await messages(bob, roomId, { dir: "f", limit: 3, from });
        fwd.push(...ids(page.chunk));
        if (page.end === undefined) break;
        from = page.end;
      }
      expect(fwd).toEqual(all);
      expect(new Set(fwd).size).toBe(fwd.length);
    });

    it("turning around mid-walk: the start token of a page leads back over the same events", async () => {
      const p1 = await messages(bob, roomId, { dir: "b", limit: 4 });
      const p2 = await messages(bob, roomId, { dir: "b", limit: 4, from: p1.end });
      // From p2's end forwards: p2's events again, oldest first, then p1's.
      const f = await messages(bob, roomId, { dir: "f", limit: 8, from: p2.end });
      expect(ids(f.chunk)).toEqual([...ids(p2.chunk).reverse(), ...ids(p1.chunk).reverse()]);
      // From p1's start backwards is p1 again.
      expect(ids((await messages(bob, roomId, { dir: "b", limit: 4, from: p1.start })).chunk)).toEqual(ids(p1.chunk));
    });

    it("filters: types and not_types with *, senders, not_senders, limit", async () => {
      const custom = await messages(bob, roomId, { dir: "b", limit: 50, filter: { types: ["com.example.*"] } });
      expect(custom.chunk.map((e) => e.type)).toEqual(["com.example.b", "com.example.a"]);
      const notRoom = await messages(bob, roomId, { dir: "f", limit: 50, filter: { not_types: ["m.room.*"] } });
      expect(notRoom.chunk.map((e) => e.type)).toEqual(["com.example.a", "com.example.b"]);
      const exact = await messages(bob, roomId, { dir: "f", limit: 50, filter: { types: ["m.room.message"], not_types: ["*"] } });
      expect(exact.chunk).toEqual([]);
      const bobs = await messages(alice, roomId, { dir: "f", limit: 50, filter: { senders: [bob.user_id], types: ["m.room.message"] } });
      expect(bodies(bobs.chunk)).toEqual(["m2", "m5", "m8"]);
      const notAlice = await messages(alice, roomId, { dir: "f", limit: 50, filter: { not_senders: [alice.user_id] } });
      expect(new Set(notAlice.chunk.map((e) => e.sender))).toEqual(new Set([bob.user_id]));
      const limited = await messages(alice, roomId, { dir: "b", filter: { limit: 2, types: ["m.room.message"] } });
      expect(bodies(limited.chunk)).toEqual(["m9", "m8"]);
      // Filtered pages still continue across the gaps.
      const p1 = await messages(alice, roomId, { dir: "b", limit: 2, filter: { types: ["m.room.message"] } });
      const p2 = await messages(alice, roomId, { dir: "b", limit: 2, from: p1.end, filter: { types: ["m.room.message"] } });
      expect([...bodies(p1.chunk), ...bodies(p2.chunk)]).toEqual(["m9", "m8", "m7", "m6"]);
    });

    it("lazy_load_members returns the senders' member events in state", async () => {
      const res = await messages(alice, roomId, { dir: "b", limit: 2, filter: { lazy_load_members: true, types: ["m.room.message"] } });
      expect(bodies(res.chunk)).toEqual(["m9", "m8"]);
      expect(res.state).toBeDefined();
      const members = Object.fromEntries(res.state!.map((e) => [e.state_key, e.content.membership]));
      expect(members).toEqual({ [alice.user_id]: "join", [bob.user_id]: "join" });
      for (const e of res.state!) expect(e.type).toBe("m.room.member");
      const plain = await messages(alice, roomId, { dir: "b", limit: 2 });
      expect(plain.state ?? []).toEqual([]);
    });

    it("bad parameters: 400", async () => {
      const bad = async (q: string, errcode: string) => expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?${q}`, { token: bob.access_token }), 400, errcode);
      await bad("dir=x", "M_INVALID_PARAM");
      await bad("dir=b&from=garbage", "M_INVALID_PARAM");
      await bad("dir=b&limit=abc", "M_INVALID_PARAM");
      await bad(`dir=b&filter=${enc("{nope")}`, "M_NOT_JSON");
      await bad(`dir=b&filter=${enc(JSON.stringify({ types: "m.room.message" }))}`, "M_BAD_JSON");
    });

    it("/context returns the event, its neighbours, state and tokens that continue", async () => {
      const target = msgs[5]!;
      const p = `${V3}/rooms/${enc(roomId)}/context/${enc(target)}?limit=4`;
      const res = await t.call("GET", p, { token: bob.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "GET", p);
      const i = all.indexOf(target);
      expect(res.json.event.event_id).toBe(target);
      expect(ids(res.json.events_before)).toEqual([all[i - 1], all[i - 2]]);
      expect(ids(res.json.events_after)).toEqual([all[i + 1], all[i + 2]]);
      const stateTypes = new Set((res.json.state as any[]).map((e) => e.type));
      for (const type of ["m.room.create", "m.room.power_levels", "m.room.join_rules", "m.room.member", "m.room.name"]) expect(stateTypes).toContain(type);
      const back = await messages(bob, roomId, { dir: "b", limit: 2, from: res.json.start });
      expect(ids(back.chunk)).toEqual([all[i - 3], all[i - 4]]);
      const fwd = await messages(bob, roomId, { dir: "f", limit: 2, from: res.json.end });
      expect(ids(fwd.chunk)).toEqual([all[i + 3], all[i + 4]]);
      // Filtered context and lazy-loaded members.
      const fp = `${V3}/rooms/${enc(roomId)}/context/${enc(target)}?limit=2&filter=${enc(JSON.stringify({ types: ["m.room.message"], lazy_load_members: true }))}`;
      const filtered = await t.call("GET", fp, { token: bob.access_token });
      expect(filtered.status).toBe(200);
      expectMatchesSpec(filtered, "GET", fp);
      expect(bodies(filtered.json.events_before)).toEqual(["m4"]);
      expect(bodies(filtered.json.events_after)).toEqual(["m6"]);
      for (const e of filtered.json.state) expect(e.type).toBe("m.room.member");
      // Unknown event and outsiders: 404 / 403.
      const unknown = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc("$nope")}`, { token: bob.access_token });
      expectError(unknown, 404, "M_NOT_FOUND");
      const outsider = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(target)}`, { token: carol.access_token });
      expect([403, 404]).toContain(outsider.status);
    });
  });

  describe("history visibility", () => {
    it("joined: a member sees nothing from before their join", async () => {
      const roomId = await create({ preset: "public_chat", initial_state: [{ type: "m.room.history_visibility", content: { history_visibility: "joined" } }] });
      const before = await send(alice, roomId, "before");
      await join(bob, roomId);
      const after = await send(alice, roomId, "after");
      const res = await messages(bob, roomId, { dir: "b", limit: 100 });
      expect(bodies(res.chunk)).toEqual(["after"]);
      // Events before the first m.room.history_visibility have the default visibility, shared; the event
      // that sets `joined` is visible to whoever the visibility before or after it allows (spec; Synapse
      // takes the laxer): shared, so bob sees it.
      const all = await storedIds(roomId);
      expect(ids(res.chunk).reverse()).toEqual(all.filter((id) => id !== before));
      expect(res.chunk.slice(0, 2).map((e) => e.type)).toEqual(["m.room.message", "m.room.member"]);
      expect(res.chunk[1].state_key).toBe(bob.user_id);
      expect((await messages(bob, roomId, { dir: "b", limit: 100, from: res.end })).chunk).toEqual([]);
      expectError(await getEvent(bob, roomId, before), 404, "M_NOT_FOUND");
      expect((await getEvent(bob, roomId, after)).status).toBe(200);
      const ctx = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(before)}`, { token: bob.access_token });
      expectError(ctx, 404, "M_NOT_FOUND");
      const ctxAfter = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(after)}`, { token: bob.access_token });
      expect(ctxAfter.status).toBe(200);
      expect(bodies(ctxAfter.json.events_before)).toEqual([]);
      // Forwards from the start: the same two events.
      expect(ids((await messages(bob, roomId, { dir: "f", limit: 100 })).chunk)).toEqual(ids(res.chunk).reverse());
      // The creator sees all of it.
      expect(bodies((await messages(alice, roomId, { dir: "b", limit: 100 })).chunk)).toEqual(["after", "before"]);
      // Current state is still readable by the member.
      expect((await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: bob.access_token })).status).toBe(200);
    });

    it("invited: a member sees from their invite on", async () => {
      const roomId = await create({ preset: "private_chat", initial_state: [{ type: "m.room.history_visibility", content: { history_visibility: "invited" } }] });
      const pre = await send(alice, roomId, "pre-invite");
      await invite(alice, roomId, bob.user_id);
      // Invited but not joined: no reads yet.
      expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b`, { token: bob.access_token }), 403, "M_FORBIDDEN");
      await send(alice, roomId, "while invited");
      await join(bob, roomId);
      await send(alice, roomId, "after join");
      const res = await messages(bob, roomId, { dir: "b", limit: 100 });
      expect(bodies(res.chunk)).toEqual(["after join", "while invited"]);
      const members = res.chunk.filter((e) => e.type === "m.room.member").map((e) => `${e.state_key}:${e.content.membership}`);
      // (alice's own join predates the m.room.history_visibility event: default shared visibility.)
      expect(members).toEqual([`${bob.user_id}:join`, `${bob.user_id}:invite`, `${alice.user_id}:join`]);
      expectError(await getEvent(bob, roomId, pre), 404, "M_NOT_FOUND");
    });

    it("shared: members see everything, non-members nothing", async () => {
      const roomId = await create({ preset: "public_chat" });
      const early = await send(alice, roomId, "early");
      expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b`, { token: bob.access_token }), 403, "M_FORBIDDEN");
      expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: bob.access_token }), 403, "M_FORBIDDEN");
      expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.create`, { token: bob.access_token }), 403, "M_FORBIDDEN");
      expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/members`, { token: bob.access_token }), 403, "M_FORBIDDEN");
      await join(bob, roomId);
      await send(alice, roomId, "late");
      const res = await messages(bob, roomId, { dir: "f", limit: 100 });
      expect(ids(res.chunk)).toEqual(await storedIds(roomId));
      expect(bodies(res.chunk)).toEqual(["early", "late"]);
      expect((await getEvent(bob, roomId, early)).status).toBe(200);
    });

    it("world_readable: a non-member (and a guest) reads messages, state and events but cannot send", async () => {
      const roomId = await create({ preset: "private_chat", name: "open book", initial_state: [{ type: "m.room.history_visibility", content: { history_visibility: "world_readable" } }] });
      const hello = await send(alice, roomId, "hello world");
      const g = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json.access_token as string;
      // Non-members see what came from the room becoming world_readable on (the change itself is visible
      // to whoever the visibility before or after it allows: world_readable).
      const all = await storedIds(roomId);
      const hvId = (await t.hs.services.db.event.findFirst({ where: { roomId, type: "m.room.history_visibility" } }))!.eventId;
      const visible = all.slice(all.indexOf(hvId));
      for (const who of [carol.access_token, g]) {
        const res = await messages(who, roomId, { dir: "b", limit: 100 });
        expect(ids(res.chunk)).toEqual([...visible].reverse());
        expect(bodies(res.chunk)).toEqual(["hello world"]);
        expect((await messages(who, roomId, { dir: "b", limit: 100, from: res.end })).end).toBeUndefined();
        const st = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: who });
        expect(st.status).toBe(200);
        expectMatchesSpec(st, "GET", `${V3}/rooms/${enc(roomId)}/state`);
        const name = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.name`, { token: who });
        expect(name.json).toEqual({ name: "open book" });
        const ev = await getEvent(who, roomId, hello);
        expect(ev.status).toBe(200);
        const ctx = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(hello)}`, { token: who });
        expect(ctx.status).toBe(200);
        const members = await t.call("GET", `${V3}/rooms/${enc(roomId)}/members`, { token: who });
        expect(members.status).toBe(200);
        const sendRes = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/wr${++txn}`, { token: who, body: { msgtype: "m.text", body: "no" } });
        expectError(sendRes, 403, "M_FORBIDDEN");
      }
      // /joined_members still needs membership.
      expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: carol.access_token }), 403, "M_FORBIDDEN");
    });

    it("a member who left reads up to their leave and not after", async () => {
      const roomId = await create({ preset: "public_chat", topic: "old topic" });
      await join(bob, roomId);
      const during = await send(alice, roomId, "while bob was here");
      await leave(bob, roomId);
      const afterLeave = await send(alice, roomId, "after bob left");
      await putState(alice, roomId, "m.room.topic", { topic: "new topic" });
      await join(carol, roomId);

      const res = await messages(bob, roomId, { dir: "b", limit: 100 });
      expect(res.chunk[0]).toMatchObject({ type: "m.room.member", state_key: bob.user_id, content: { membership: "leave" } });
      expect(bodies(res.chunk)).toEqual(["while bob was here"]);
      expect(ids((await messages(bob, roomId, { dir: "f", limit: 100 })).chunk)).toEqual(ids(res.chunk).reverse());
      expect((await getEvent(bob, roomId, during)).status).toBe(200);
      expectError(await getEvent(bob, roomId, afterLeave), 404, "M_NOT_FOUND");
      const ctx = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(afterLeave)}`, { token: bob.access_token });
      expectError(ctx, 404, "M_NOT_FOUND");
      const ctxDuring = await t.call("GET", `${V3}/rooms/${enc(roomId)}/context/${enc(during)}`, { token: bob.access_token });
      expect(ctxDuring.status).toBe(200);
      expect(ctxDuring.json.events_after.map((e: any) => e.type)).toEqual(["m.room.member"]);
      expect(ctxDuring.json.events_after[0].content.membership).toBe("leave");
      // State as it was when bob left.
      const topic = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.topic`, { token: bob.access_token });
      expect(topic.json.topic).toBe("old topic");
      const st = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: bob.access_token });
      expect((st.json as any[]).find((e) => e.type === "m.room.topic").content.topic).toBe("old topic");
      expect((st.json as any[]).find((e) => e.type === "m.room.member" && e.state_key === carol.user_id)).toBeUndefined();
      const members = await t.call("GET", `${V3}/rooms/${enc(roomId)}/members`, { token: bob.access_token });
      expect((members.json.chunk as any[]).map((e) => e.state_key).sort()).toEqual([alice.user_id, bob.user_id].sort());
      // A token past the leave reads nothing newer.
      const head = await messages(alice, roomId, { dir: "b", limit: 1 });
      const fromHead = await messages(bob, roomId, { dir: "b", limit: 100, from: head.start });
      expect(bodies(fromHead.chunk)).toEqual(["while bob was here"]);
      // Joined again: the gap is visible under shared history.
      await join(bob, roomId);
      expect((await getEvent(bob, roomId, afterLeave)).status).toBe(200);
    });

    it("joined visibility for a former member: only what they were joined for", async () => {
      const roomId = await create({ preset: "public_chat", initial_state: [{ type: "m.room.history_visibility", content: { history_visibility: "joined" } }] });
      await send(alice, roomId, "one");
      await join(bob, roomId);
      await send(alice, roomId, "two");
      await leave(bob, roomId);
      await send(alice, roomId, "three");
      await join(bob, roomId);
      await send(alice, roomId, "four");
      expect(bodies((await messages(bob, roomId, { dir: "f", limit: 100 })).chunk)).toEqual(["two", "four"]);
    });

    it("guests read and send in a room with guest_access can_join", async () => {
      const roomId = await create({ preset: "public_chat", initial_state: [{ type: "m.room.guest_access", content: { guest_access: "can_join" } }] });
      await send(alice, roomId, "welcome");
      const g = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
      // Not yet joined: shared history is for members.
      expectError(await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b`, { token: g.access_token }), 403, "M_FORBIDDEN");
      await join(g.access_token, roomId);
      const mine = await send(g.access_token, roomId, "guest here");
      const res = await messages(g.access_token, roomId, { dir: "b", limit: 100 });
      expect(bodies(res.chunk)).toEqual(["guest here", "welcome"]);
      const ev = await getEvent(g.access_token, roomId, mine);
      expect(ev.json.sender).toBe(g.user_id);
      expect((await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: g.access_token })).status).toBe(200);
      expect((await t.call("GET", `${V3}/rooms/${enc(roomId)}/members`, { token: g.access_token })).status).toBe(200);
      expect((await getEvent(alice, roomId, mine)).json.content.body).toBe("guest here");
    });
  });
});
