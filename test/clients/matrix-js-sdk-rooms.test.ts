// matrix-js-sdk 43 against a real Weft server (SQLite and PostgreSQL), two (and three) users, no sync
// loop and no mocks: only the SDK's REST methods. Rooms: createRoom with name, topic, preset and
// invite; join; sending (txnId idempotency); /messages paged backwards and forwards to the end;
// fetching, redacting; state reads and writes; members and joined members; joined rooms; invite, kick,
// ban, unban; leave (reads stop at the leave), forget (reads stop altogether). The core path (create,
// join, send, paginate) also runs once per client prefix (/_matrix/client/v3, r0, /_proto/client/v3).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";
import { CLIENT_PREFIXES, expectMatrixError, makeClient, type ClientPrefixPath } from "../helpers/js-sdk.ts";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";

// The SDK's send scheduler logs through its global logger, not the client's: quiet unless asked.
if (process.env.WEFT_TEST_SDK_LOG !== "1") (sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void }).setLevel("warn", false);

/** An event as /messages, /event and /state return it. */
type Ev = Partial<sdk.IEvent> & { event_id: string; type: string; unsigned?: Record<string, any> };

interface User {
  userId: string;
  client: sdk.MatrixClient;
}

/** Registers `localpart` over REST, then gives a matrix-js-sdk client bound to `prefix`. */
async function newUser(t: TestServer, localpart: string, prefix: ClientPrefixPath = "/_matrix/client/v3"): Promise<User> {
  const s = await registerUser(t, localpart);
  return { userId: s.user_id, client: makeClient(t.baseUrl, { userId: s.user_id, accessToken: s.access_token, deviceId: s.device_id }, prefix) };
}

interface Walk {
  events: Ev[];
  /** Every page's `start`, `end` and chunk, in the order fetched. */
  pages: { from: string | null; start?: string; end?: string; chunk: Ev[] }[];
}

/**
 * Pages /messages in one direction from `from` (null: the end for backwards, the start for forwards)
 * until a response carries no `end`; at most `maxPages` requests.
 */
async function walk(client: sdk.MatrixClient, roomId: string, dir: sdk.Direction, limit: number, from: string | null = null, maxPages = 200): Promise<Walk> {
  const out: Walk = { events: [], pages: [] };
  let token = from;
  for (let i = 0; i < maxPages; i++) {
    const res = await client.createMessagesRequest(roomId, token, limit, dir);
    const chunk = res.chunk as Ev[];
    out.pages.push({ from: token, start: res.start, end: res.end, chunk });
    expect(res.start, "every /messages response has a start token").toBeTruthy();
    if (token !== null) expect(res.start, "start is the token given in from").toBe(token);
    expect(chunk.length).toBeLessThanOrEqual(limit);
    for (const e of chunk) expect(e.room_id).toBe(roomId);
    out.events.push(...chunk);
    if (res.end === undefined) return out;
    expect(res.end, "end moves on").not.toBe(token);
    token = res.end;
  }
  throw new Error(`/messages did not end within ${maxPages} pages (dir ${dir}, limit ${limit})`);
}

/** A call's outcome: 200, or the MatrixError's status and errcode. */
async function outcome(p: Promise<unknown>): Promise<{ status: number; errcode?: string }> {
  try {
    await p;
    return { status: 200 };
  } catch (e) {
    if (e instanceof sdk.MatrixError) return { status: e.httpStatus ?? 0, errcode: e.errcode };
    throw e;
  }
}

const ids = (events: Ev[]) => events.map((e) => e.event_id);

function expectNoDuplicates(events: Ev[]): void {
  const seen = new Set<string>();
  const dups = ids(events).filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
  expect(dups, "event ids seen twice while paginating").toEqual([]);
}

/** Walks the whole room backwards and forwards (several page sizes) and checks both give one order. */
async function fullHistory(client: sdk.MatrixClient, roomId: string, limits = [1, 3, 50]): Promise<Ev[]> {
  let reference: string[] | undefined;
  let forwardEvents: Ev[] = [];
  for (const limit of limits) {
    const back = await walk(client, roomId, sdk.Direction.Backward, limit);
    const fwd = await walk(client, roomId, sdk.Direction.Forward, limit);
    expectNoDuplicates(back.events);
    expectNoDuplicates(fwd.events);
    expect(ids(back.events).reverse(), `backwards (limit ${limit}) is forwards reversed`).toEqual(ids(fwd.events));
    if (reference) expect(ids(fwd.events), `limit ${limit} gives the same history`).toEqual(reference);
    reference = ids(fwd.events);
    forwardEvents = fwd.events;
  }
  expect(forwardEvents[0]?.type, "history starts at m.room.create").toBe("m.room.create");
  return forwardEvents;
}

/** The message events' bodies, in order. */
const bodies = (events: Ev[]) => events.filter((e) => e.type === "m.room.message").map((e) => (e.content as { body?: string }).body);

describe.each(backends())("matrix-js-sdk rooms on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => { await t?.close(); });

  describe("a two-user room through the REST methods (no sync)", () => {
    let alice: User;
    let bob: User;
    let carol: User;
    let roomId: string;
    /** Ids of the events this test sent, in the order sent (after Bob's join). */
    const sent: string[] = [];
    const sentBodies: string[] = [];
    const sentSenders: string[] = [];
    /** The head of the room right after creation (before Bob joins), as a /messages token. */
    let beforeJoinToken: string;
    let txnEventId: string;
    let redactedId: string;

    beforeAll(async () => {
      alice = await newUser(t, "alice");
      bob = await newUser(t, "bob");
      carol = await newUser(t, "carol");
      await alice.client.setDisplayName("Alice");
      await bob.client.setDisplayName("Bob");
    });

    it("Alice creates a private room with a name, a topic and an invite for Bob", async () => {
      const res = await alice.client.createRoom({ name: "Weft room", topic: "First topic", preset: sdk.Preset.PrivateChat, invite: [bob.userId] });
      expect(res.room_id).toMatch(/^!.+:weft\.test$/);
      roomId = res.room_id;
      expect((await alice.client.getJoinedRooms()).joined_rooms).toEqual([roomId]);
      // Bob is invited, not joined.
      expect((await bob.client.getJoinedRooms()).joined_rooms).toEqual([]);
      const head = await alice.client.createMessagesRequest(roomId, null, 1, sdk.Direction.Backward);
      expect(head.chunk).toHaveLength(1);
      expect((head.chunk[0] as Ev).type).toBe("m.room.member");
      expect((head.chunk[0] as Ev).state_key).toBe(bob.userId);
      expect((head.chunk[0] as Ev).content).toMatchObject({ membership: "invite", displayname: "Bob" });
      beforeJoinToken = head.start!;
      // The invited user cannot read the room's state yet (he is not joined, and it is not world_readable).
      const err = await expectMatrixError(bob.client.getStateEvent(roomId, "m.room.name", ""));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
    });

    it("Bob joins with joinRoom(roomId)", async () => {
      const room = await bob.client.joinRoom(roomId);
      expect(room.roomId).toBe(roomId);
      expect((await bob.client.getJoinedRooms()).joined_rooms).toEqual([roomId]);
      // Joining again is a no-op that still answers with the room.
      expect((await bob.client.joinRoom(roomId)).roomId).toBe(roomId);
      const last = await bob.client.createMessagesRequest(roomId, null, 5, sdk.Direction.Backward);
      const joins = (last.chunk as Ev[]).filter((e) => e.type === "m.room.member" && e.state_key === bob.userId && e.content?.membership === "join");
      expect(joins, "one join event, not two").toHaveLength(1);
    });

    it("getStateEvent reads the name and topic createRoom set, as both users", async () => {
      for (const u of [alice, bob]) {
        expect(await u.client.getStateEvent(roomId, "m.room.name", "")).toEqual({ name: "Weft room" });
        expect(await u.client.getStateEvent(roomId, "m.room.topic", "")).toMatchObject({ topic: "First topic" });
        expect(await u.client.getStateEvent(roomId, "m.room.join_rules", "")).toMatchObject({ join_rule: "invite" });
        expect(await u.client.getStateEvent(roomId, "m.room.history_visibility", "")).toEqual({ history_visibility: "shared" });
        expect(await u.client.getStateEvent(roomId, "m.room.member", bob.userId)).toMatchObject({ membership: "join", displayname: "Bob" });
      }
      const missing = await expectMatrixError(alice.client.getStateEvent(roomId, "m.room.avatar", ""));
      expect([missing.httpStatus, missing.errcode]).toEqual([404, "M_NOT_FOUND"]);
    });

    it("both send messages with sendTextMessage, sendMessage and sendEvent", async () => {
      const send = async (u: User, body: string, how: "text" | "message" | "event" | "notice") => {
        let res: sdk.ISendEventResponse;
        if (how === "text") res = await u.client.sendTextMessage(roomId, body);
        else if (how === "message") res = await u.client.sendMessage(roomId, { msgtype: sdk.MsgType.Text, body });
        else if (how === "notice") res = await u.client.sendNotice(roomId, body);
        else res = await u.client.sendEvent(roomId, sdk.EventType.RoomMessage, { msgtype: sdk.MsgType.Emote, body });
        expect(res.event_id).toMatch(/^\$/);
        expect(sent).not.toContain(res.event_id);
        sent.push(res.event_id);
        sentBodies.push(body);
        sentSenders.push(u.userId);
        return res.event_id;
      };
      await send(alice, "a1", "text");
      await send(bob, "b1", "text");
      await send(alice, "a2", "message");
      await send(bob, "b2", "message");
      await send(alice, "a3", "event");
      await send(bob, "b3", "event");
      await send(alice, "a4", "notice");
      await send(bob, "b4", "text");
    });

    it("sendEvent twice with the same txnId gives one event; another user's same txnId is another event", async () => {
      const first = await alice.client.sendEvent(roomId, sdk.EventType.RoomMessage, { msgtype: sdk.MsgType.Text, body: "once" }, "weft-fixed-txn");
      const again = await alice.client.sendEvent(roomId, sdk.EventType.RoomMessage, { msgtype: sdk.MsgType.Text, body: "once" }, "weft-fixed-txn");
      expect(again.event_id).toBe(first.event_id);
      sent.push(first.event_id);
      sentBodies.push("once");
      sentSenders.push(alice.userId);
      txnEventId = first.event_id;
      const bobs = await bob.client.sendEvent(roomId, sdk.EventType.RoomMessage, { msgtype: sdk.MsgType.Text, body: "bob once" }, "weft-fixed-txn");
      expect(bobs.event_id).not.toBe(first.event_id);
      sent.push(bobs.event_id);
      sentBodies.push("bob once");
      sentSenders.push(bob.userId);
      // The same txnId again from Bob is still his event.
      expect((await bob.client.sendTextMessage(roomId, "bob once", "weft-fixed-txn")).event_id).toBe(bobs.event_id);
    });

    it("a burst of concurrent sends from both users lands once each, in one order both ways", async () => {
      const burst = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? alice : bob).client.sendTextMessage(roomId, `burst ${i}`)),
      );
      const burstIds = burst.map((r) => r.event_id);
      expect(new Set(burstIds).size).toBe(6);
      const history = await fullHistory(alice.client, roomId, [2, 50]);
      const tail = history.slice(-6);
      expect(new Set(ids(tail))).toEqual(new Set(burstIds));
      // Fix the expected order for the rest of the test to the server's.
      for (const e of tail) {
        sent.push(e.event_id);
        sentBodies.push((e.content as { body: string }).body);
        sentSenders.push(e.sender!);
      }
    });

    it("createMessagesRequest pages the whole history backwards and forwards in the exact order, with no duplicates", async () => {
      for (const u of [alice, bob]) {
        const history = await fullHistory(u.client, roomId, [1, 3, 4, 7, 100]);
        const types = history.map((e) => `${e.type}${e.state_key !== undefined ? `/${e.state_key}` : ""}`);
        expect(types.slice(0, 2)).toEqual(["m.room.create/", `m.room.member/${alice.userId}`]);
        expect(types).toContain("m.room.power_levels/");
        expect(types).toContain("m.room.join_rules/");
        expect(types).toContain("m.room.history_visibility/");
        expect(types).toContain("m.room.name/");
        expect(types).toContain("m.room.topic/");
        // Bob's invite, then his join, then exactly what was sent, in the order sent.
        const joinAt = history.findIndex((e) => e.type === "m.room.member" && e.state_key === bob.userId && e.content?.membership === "join");
        const inviteAt = history.findIndex((e) => e.type === "m.room.member" && e.state_key === bob.userId && e.content?.membership === "invite");
        expect(inviteAt).toBeGreaterThan(0);
        expect(joinAt).toBeGreaterThan(inviteAt);
        expect(ids(history.slice(joinAt + 1))).toEqual(sent);
        expect(bodies(history.slice(joinAt + 1))).toEqual(sentBodies);
        expect(history.slice(joinAt + 1).map((e) => e.sender)).toEqual(sentSenders);
      }
    });

    it("tokens work in either direction: forwards from a backwards page's end gives that page again, reversed", async () => {
      const back = await walk(alice.client, roomId, sdk.Direction.Backward, 4);
      expect(back.pages.length).toBeGreaterThan(2);
      // Every full page (the last non-empty one may be shorter; an empty page without `end` closes the walk).
      const full = back.pages.filter((p) => p.chunk.length === 4);
      expect(full.length).toBeGreaterThan(1);
      for (const page of full) {
        const res = await alice.client.createMessagesRequest(roomId, page.end!, 4, sdk.Direction.Forward);
        expect(ids(res.chunk as Ev[]), `forwards from ${page.end}`).toEqual(ids(page.chunk).reverse());
      }
      // From the head, forwards, there is nothing more and no end.
      const atHead = await alice.client.createMessagesRequest(roomId, back.pages[0]!.start!, 10, sdk.Direction.Forward);
      expect(atHead.chunk).toEqual([]);
      expect(atHead.end).toBeUndefined();
      // A nonsense token is refused.
      const bad = await expectMatrixError(alice.client.createMessagesRequest(roomId, "not-a-token", 10, sdk.Direction.Backward));
      expect(bad.httpStatus).toBe(400);
    });

    it("fetchRoomEvent returns one event, with transaction_id only for the sender's device", async () => {
      const own = (await alice.client.fetchRoomEvent(roomId, txnEventId)) as Ev;
      expect(own).toMatchObject({ event_id: txnEventId, room_id: roomId, type: "m.room.message", sender: alice.userId, content: { msgtype: "m.text", body: "once" } });
      expect(typeof own.origin_server_ts).toBe("number");
      expect(own.unsigned?.transaction_id).toBe("weft-fixed-txn");
      const theirs = (await bob.client.fetchRoomEvent(roomId, txnEventId)) as Ev;
      expect(theirs).toMatchObject({ event_id: txnEventId, sender: alice.userId, content: { body: "once" } });
      expect(theirs.unsigned?.transaction_id).toBeUndefined();
      const missing = await expectMatrixError(alice.client.fetchRoomEvent(roomId, "$nope"));
      expect([missing.httpStatus, missing.errcode]).toEqual([404, "M_NOT_FOUND"]);
    });

    it("redactEvent empties the content, and the event comes back with unsigned.redacted_because", async () => {
      redactedId = sent[0]!; // Alice's "a1"
      const bobsId = sent[1]!; // Bob's "b1"
      // Bob (power 0) may not redact Alice's message, but may redact his own.
      const denied = await expectMatrixError(bob.client.redactEvent(roomId, redactedId));
      expect([denied.httpStatus, denied.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const r1 = await alice.client.redactEvent(roomId, redactedId, "weft-redact-txn", { reason: "typo" });
      expect(r1.event_id).toMatch(/^\$/);
      // The same txnId again is the same redaction.
      expect((await alice.client.redactEvent(roomId, redactedId, "weft-redact-txn", { reason: "typo" })).event_id).toBe(r1.event_id);
      const r2 = await bob.client.redactEvent(roomId, bobsId);
      for (const u of [alice, bob]) {
        const ev = (await u.client.fetchRoomEvent(roomId, redactedId)) as Ev;
        expect(ev.event_id).toBe(redactedId);
        expect(ev.type).toBe("m.room.message");
        expect(ev.content).toEqual({});
        const because = ev.unsigned?.redacted_because as Ev;
        expect(because).toMatchObject({ event_id: r1.event_id, type: "m.room.redaction", sender: alice.userId });
        expect(because.content).toMatchObject({ reason: "typo" });
        expect(because.content?.redacts ?? because.redacts).toBe(redactedId);
        const bobs = (await u.client.fetchRoomEvent(roomId, bobsId)) as Ev;
        expect(bobs.content).toEqual({});
        expect((bobs.unsigned?.redacted_because as Ev).event_id).toBe(r2.event_id);
      }
      // /messages shows the redacted events empty and the redactions at the end.
      const history = await fullHistory(bob.client, roomId, [3, 100]);
      const a1 = history.find((e) => e.event_id === redactedId)!;
      expect(a1.content).toEqual({});
      expect((a1.unsigned?.redacted_because as Ev).event_id).toBe(r1.event_id);
      expect(ids(history.slice(-2))).toEqual([r1.event_id, r2.event_id]);
      expect(history.slice(-2).map((e) => e.type)).toEqual(["m.room.redaction", "m.room.redaction"]);
    });

    it("sendStateEvent, setRoomName and setRoomTopic change state that getStateEvent and roomState read", async () => {
      const topic = await alice.client.sendStateEvent(roomId, sdk.EventType.RoomTopic, { topic: "Second topic" }, "");
      expect(topic.event_id).toMatch(/^\$/);
      expect(await bob.client.getStateEvent(roomId, "m.room.topic", "")).toEqual({ topic: "Second topic" });
      // Bob (power 0) may not change state in a private_chat room.
      const denied = await expectMatrixError(bob.client.sendStateEvent(roomId, sdk.EventType.RoomTopic, { topic: "Bob's" }, ""));
      expect([denied.httpStatus, denied.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const name = await alice.client.setRoomName(roomId, "Renamed room");
      const topic3 = await alice.client.setRoomTopic(roomId, "Third topic");
      expect(await bob.client.getStateEvent(roomId, "m.room.name", "")).toEqual({ name: "Renamed room" });
      expect(await bob.client.getStateEvent(roomId, "m.room.topic", "")).toMatchObject({ topic: "Third topic" });

      for (const u of [alice, bob]) {
        const state = (await u.client.roomState(roomId)) as Ev[];
        for (const e of state) expect(e.room_id).toBe(roomId);
        const keys = state.map((e) => `${e.type}|${e.state_key}`);
        expect(new Set(keys).size, "one event per (type, state_key)").toBe(keys.length);
        const get = (type: string, key = "") => state.find((e) => e.type === type && e.state_key === key);
        expect(get("m.room.create")?.sender).toBe(alice.userId);
        expect(get("m.room.name")).toMatchObject({ event_id: name.event_id, content: { name: "Renamed room" } });
        expect(get("m.room.topic")).toMatchObject({ event_id: topic3.event_id, content: { topic: "Third topic" } });
        expect(get("m.room.join_rules")?.content).toEqual({ join_rule: "invite" });
        expect(get("m.room.member", alice.userId)?.content).toMatchObject({ membership: "join", displayname: "Alice" });
        expect(get("m.room.member", bob.userId)?.content).toMatchObject({ membership: "join", displayname: "Bob" });
        expect((get("m.room.power_levels")?.content as { users?: Record<string, number> }).users?.[alice.userId]).toBe(100);
      }
    });

    it("members and getJoinedRoomMembers list both users; members takes membership filters and an at token", async () => {
      for (const u of [alice, bob]) {
        const { chunk } = await u.client.members(roomId);
        const byUser = Object.fromEntries(chunk.map((e) => [e.state_key, e.content.membership]));
        expect(byUser).toEqual({ [alice.userId]: "join", [bob.userId]: "join" });
        for (const e of chunk) expect(e).toMatchObject({ type: "m.room.member", room_id: roomId });
        const joined = await u.client.getJoinedRoomMembers(roomId);
        expect(joined.joined).toEqual({ [alice.userId]: { display_name: "Alice", avatar_url: null }, [bob.userId]: { display_name: "Bob", avatar_url: null } });
      }
      expect((await alice.client.members(roomId, "join")).chunk).toHaveLength(2);
      expect((await alice.client.members(roomId, undefined, "join")).chunk).toHaveLength(0);
      // At the head from before Bob joined, Bob was invited.
      const then = await alice.client.members(roomId, undefined, undefined, beforeJoinToken);
      expect(Object.fromEntries(then.chunk.map((e) => [e.state_key, e.content.membership]))).toEqual({ [alice.userId]: "join", [bob.userId]: "invite" });
    });

    it("invite, kick, ban and unban a third user", async () => {
      const membershipOf = async (userId: string) => (await alice.client.getStateEvent(roomId, "m.room.member", userId)) as { membership: string; reason?: string };
      // Carol, not invited, cannot join an invite-only room.
      let err = await expectMatrixError(carol.client.joinRoom(roomId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      await alice.client.invite(roomId, carol.userId);
      expect((await membershipOf(carol.userId)).membership).toBe("invite");
      expect((await alice.client.members(roomId, "invite")).chunk.map((e) => e.state_key)).toEqual([carol.userId]);
      expect((await carol.client.getJoinedRooms()).joined_rooms).toEqual([]);
      // Inviting someone already joined is refused.
      err = await expectMatrixError(alice.client.invite(roomId, bob.userId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // Bob may not kick (kick level 50).
      err = await expectMatrixError(bob.client.kick(roomId, carol.userId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // Kicking an invited user rescinds the invite: she can no longer join.
      await alice.client.kick(roomId, carol.userId, "changed my mind");
      expect(await membershipOf(carol.userId)).toMatchObject({ membership: "leave", reason: "changed my mind" });
      err = await expectMatrixError(carol.client.joinRoom(roomId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // Invited again, she joins; kicked, she is out.
      await alice.client.invite(roomId, carol.userId, { reason: "come back" });
      expect(await membershipOf(carol.userId)).toMatchObject({ membership: "invite", reason: "come back" });
      expect((await carol.client.joinRoom(roomId)).roomId).toBe(roomId);
      expect((await carol.client.getJoinedRooms()).joined_rooms).toEqual([roomId]);
      const carolMsg = await carol.client.sendTextMessage(roomId, "hi from carol");
      await alice.client.kick(roomId, carol.userId);
      expect((await membershipOf(carol.userId)).membership).toBe("leave");
      expect((await carol.client.getJoinedRooms()).joined_rooms).toEqual([]);
      err = await expectMatrixError(carol.client.sendTextMessage(roomId, "still here?"));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // Kicking someone who is not in the room is refused.
      err = await expectMatrixError(alice.client.kick(roomId, carol.userId));
      expect(err.httpStatus).toBe(403);
      // Banned: cannot join, cannot be invited.
      await alice.client.ban(roomId, carol.userId, "spam");
      expect(await membershipOf(carol.userId)).toMatchObject({ membership: "ban", reason: "spam" });
      expect((await alice.client.members(roomId, "ban")).chunk.map((e) => e.state_key)).toEqual([carol.userId]);
      err = await expectMatrixError(carol.client.joinRoom(roomId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      err = await expectMatrixError(alice.client.invite(roomId, carol.userId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // Bob may not unban (ban level 50).
      err = await expectMatrixError(bob.client.unban(roomId, carol.userId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // A banned former member still reads what she could see, up to her ban.
      const carolView = await walk(carol.client, roomId, sdk.Direction.Backward, 5);
      expect(carolView.events[0]).toMatchObject({ type: "m.room.member", state_key: carol.userId, content: { membership: "ban" } });
      expect(ids(carolView.events)).toContain(carolMsg.event_id);
      // Unbanned: membership leave, and after an invite she may join again.
      await alice.client.unban(roomId, carol.userId);
      expect((await membershipOf(carol.userId)).membership).toBe("leave");
      err = await expectMatrixError(alice.client.unban(roomId, carol.userId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      await alice.client.invite(roomId, carol.userId);
      expect((await carol.client.joinRoom(roomId)).roomId).toBe(roomId);
      await carol.client.leave(roomId);
      const joined = await alice.client.getJoinedRoomMembers(roomId);
      expect(Object.keys(joined.joined).sort()).toEqual([alice.userId, bob.userId].sort());
    });

    let afterLeave: string[];
    let bobLeaveId: string;
    let lastSeenByBob: string;

    it("after Bob leaves, his reads stop at his leave", async () => {
      lastSeenByBob = (await bob.client.sendTextMessage(roomId, "bye")).event_id;
      await bob.client.leave(roomId);
      expect((await bob.client.getJoinedRooms()).joined_rooms).toEqual([]);
      // Leaving again is harmless.
      await bob.client.leave(roomId);
      // Alice goes on.
      afterLeave = [];
      afterLeave.push((await alice.client.sendTextMessage(roomId, "after bob left")).event_id);
      afterLeave.push((await alice.client.setRoomName(roomId, "Name after leave")).event_id);
      afterLeave.push((await alice.client.sendTextMessage(roomId, "still after")).event_id);

      const aliceView = await fullHistory(alice.client, roomId, [5, 100]);
      expect(ids(aliceView.slice(-3))).toEqual(afterLeave);
      const leave = aliceView[aliceView.length - 4]!;
      expect(leave).toMatchObject({ type: "m.room.member", state_key: bob.userId, sender: bob.userId, content: { membership: "leave" } });
      bobLeaveId = leave.event_id;
      const bobLeaveOrderIndex = aliceView.length - 4;

      // Bob's /messages, backwards from the end, starts at his leave event, and holds nothing later.
      for (const limit of [1, 4, 100]) {
        const back = await walk(bob.client, roomId, sdk.Direction.Backward, limit);
        expectNoDuplicates(back.events);
        expect(back.events[0]?.event_id, `first event backwards (limit ${limit})`).toBe(bobLeaveId);
        expect(back.events[1]?.event_id).toBe(lastSeenByBob);
        for (const id of afterLeave) expect(ids(back.events)).not.toContain(id);
        const fwd = await walk(bob.client, roomId, sdk.Direction.Forward, limit);
        expect(ids(fwd.events)).toEqual(ids(back.events).reverse());
        // What he saw while joined (everything from his join on) is still there, in the same order.
        const joinAt = aliceView.findIndex((e) => e.type === "m.room.member" && e.state_key === bob.userId && e.content?.membership === "join");
        const fromJoin = ids(aliceView.slice(joinAt, bobLeaveOrderIndex + 1));
        expect(ids(fwd.events).slice(-fromJoin.length)).toEqual(fromJoin);
      }
      // Events after the leave are not found; those before are.
      for (const id of afterLeave) {
        const err = await expectMatrixError(bob.client.fetchRoomEvent(roomId, id));
        expect([err.httpStatus, err.errcode]).toEqual([404, "M_NOT_FOUND"]);
      }
      expect(((await bob.client.fetchRoomEvent(roomId, lastSeenByBob)) as Ev).content).toMatchObject({ body: "bye" });
      // State as of the leave: the old name, and his own leave.
      expect(await bob.client.getStateEvent(roomId, "m.room.name", "")).toEqual({ name: "Renamed room" });
      expect(await alice.client.getStateEvent(roomId, "m.room.name", "")).toEqual({ name: "Name after leave" });
      const state = (await bob.client.roomState(roomId)) as Ev[];
      expect(state.find((e) => e.type === "m.room.name")?.content).toEqual({ name: "Renamed room" });
      expect(state.find((e) => e.type === "m.room.member" && e.state_key === bob.userId)?.event_id).toBe(bobLeaveId);
      const members = await bob.client.members(roomId);
      expect(Object.fromEntries(members.chunk.map((e) => [e.state_key, e.content.membership]))[bob.userId]).toBe("leave");
      // Joined-only reads and writes are refused.
      let err = await expectMatrixError(bob.client.getJoinedRoomMembers(roomId));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      err = await expectMatrixError(bob.client.sendTextMessage(roomId, "I left"));
      expect([err.httpStatus, err.errcode]).toEqual([403, "M_FORBIDDEN"]);
      // Alice's view of the members.
      const aliceMembers = await alice.client.members(roomId);
      expect(Object.fromEntries(aliceMembers.chunk.map((e) => [e.state_key, e.content.membership]))).toEqual({ [alice.userId]: "join", [bob.userId]: "leave", [carol.userId]: "leave" });
    });

    it("forget: refused while joined; after it, a former member can no longer read the room", async () => {
      const joinedErr = await expectMatrixError(alice.client.forget(roomId));
      expect(joinedErr.httpStatus).toBe(400);
      expect(await bob.client.forget(roomId)).toEqual({});
      expect((await bob.client.getJoinedRooms()).joined_rooms).toEqual([]);
      // Spec (POST /rooms/{roomId}/forget): "After this API is called, however, a user will no longer
      // be able to retrieve history for this room." Each read is refused as for a non-member.
      expect.soft(await outcome(bob.client.createMessagesRequest(roomId, null, 10, sdk.Direction.Backward)), "/messages after forget").toEqual({ status: 403, errcode: "M_FORBIDDEN" });
      expect.soft(await outcome(bob.client.fetchRoomEvent(roomId, lastSeenByBob)), "/event after forget").toEqual({ status: 404, errcode: "M_NOT_FOUND" });
      expect.soft(await outcome(bob.client.roomState(roomId)), "/state after forget").toEqual({ status: 403, errcode: "M_FORBIDDEN" });
      expect.soft(await outcome(bob.client.getStateEvent(roomId, "m.room.name", "")), "/state/m.room.name after forget").toEqual({ status: 403, errcode: "M_FORBIDDEN" });
      expect.soft(await outcome(bob.client.members(roomId)), "/members after forget").toEqual({ status: 403, errcode: "M_FORBIDDEN" });
    });

    it("a forgotten room can be joined again once invited, and reads come back", async () => {
      await alice.client.invite(roomId, bob.userId);
      expect((await bob.client.joinRoom(roomId)).roomId).toBe(roomId);
      expect((await bob.client.getJoinedRooms()).joined_rooms).toEqual([roomId]);
      const history = await fullHistory(bob.client, roomId, [7, 100]);
      // Joined again under shared visibility, he sees everything, including what was sent while he was away.
      for (const id of afterLeave) expect(ids(history)).toContain(id);
      expect(await bob.client.getStateEvent(roomId, "m.room.name", "")).toEqual({ name: "Name after leave" });
    });
  });

  // The core path once per client prefix: create, join, send, paginate both ways.
  describe.each(CLIENT_PREFIXES)("core path with prefix %s", (prefix: ClientPrefixPath) => {
    it("creates, joins, sends and paginates", async () => {
      const tag = prefix.replace(/[^a-z0-9]/g, "");
      const a = await newUser(t, `core_a_${tag}`, prefix);
      const b = await newUser(t, `core_b_${tag}`, prefix);
      // Record the path of every request the two clients make.
      const paths: string[] = [];
      for (const u of [a, b]) {
        (u.client.http.opts as { fetchFn?: typeof fetch }).fetchFn = (input, init) => {
          paths.push(new URL(String(input instanceof Request ? input.url : input)).pathname);
          return fetch(input, init);
        };
      }
      const { room_id: rid } = await a.client.createRoom({ name: `Core ${prefix}`, preset: sdk.Preset.PrivateChat, invite: [b.userId] });
      expect((await b.client.joinRoom(rid)).roomId).toBe(rid);
      expect((await b.client.getJoinedRooms()).joined_rooms).toEqual([rid]);
      const order: string[] = [];
      for (let i = 0; i < 5; i++) {
        order.push((await a.client.sendTextMessage(rid, `a${i}`)).event_id);
        order.push((await b.client.sendMessage(rid, { msgtype: sdk.MsgType.Text, body: `b${i}` })).event_id);
      }
      const same1 = await a.client.sendEvent(rid, sdk.EventType.RoomMessage, { msgtype: sdk.MsgType.Text, body: "txn" }, `t-${tag}`);
      const same2 = await a.client.sendEvent(rid, sdk.EventType.RoomMessage, { msgtype: sdk.MsgType.Text, body: "txn" }, `t-${tag}`);
      expect(same2.event_id).toBe(same1.event_id);
      order.push(same1.event_id);
      for (const u of [a, b]) {
        const history = await fullHistory(u.client, rid, [1, 3, 100]);
        expect(ids(history.slice(-order.length))).toEqual(order);
        expect(bodies(history)).toEqual([...Array.from({ length: 5 }, (_, i) => [`a${i}`, `b${i}`]).flat(), "txn"]);
        expect(await u.client.getStateEvent(rid, "m.room.name", "")).toEqual({ name: `Core ${prefix}` });
        expect(((await u.client.fetchRoomEvent(rid, order[0]!)) as Ev).content).toMatchObject({ body: "a0" });
      }
      // Every request above went to this prefix.
      expect(paths.length).toBeGreaterThan(20);
      expect(paths.filter((p) => !p.startsWith(`${prefix}/`))).toEqual([]);
    });
  });
});
