// Rooms spanning two and three Weft servers over TLS on loopback (SQLite and PostgreSQL), driven only
// through the client API as real clients would: joins both ways, messages both ways reaching the other
// servers' users' /sync, an invite from a server that is not the room's creator, leaves, kicks and bans
// seen everywhere, backfill for a user of a server that joins late, typing and receipts reaching the other
// servers' /sync, a server restarted while the others send (nothing lost), and concurrent state changes
// on two servers converging to identical current state on all three.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { sendMessages } from "../helpers/by-hand.ts";
import { SyncClient, type SyncEvent } from "../helpers/sync-client.ts";
import { leaveRemoteRoom } from "../../src/domain/federation/membership/leave-remote.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

type ClientEvent = SyncEvent;

describe.each(backends())("rooms across three Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let c: FederatedServer;
  let alice: Session;
  let bob: Session;
  let carol: Session;

  beforeAll(async () => {
    // Retries come fast (Weft's default backoff starts at a minute): the restart test waits on them.
    const config = { federation: { destination_min_retry_interval: 100, destination_max_retry_interval: 500 } };
    [a, b, c] = await Promise.all([startFederatedServer({ backend, config }), startFederatedServer({ backend, config }), startFederatedServer({ backend, config })]);
    [alice, bob, carol] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob"), registerUser(c, "carol")]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), c?.close()]);
  });

  const join = async (t: FederatedServer, who: Session, roomId: string, via: FederatedServer) => {
    const res = await t.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(via.serverName)}`, { token: who.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", "/_matrix/client/v3/join/{roomIdOrAlias}");
  };
  const say = async (t: FederatedServer, who: Session, roomId: string, body: string) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${enc(body)}-${Date.now()}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const membershipOn = async (t: FederatedServer, who: Session, roomId: string, userId: string) => {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: who.access_token });
    return res.status === 200 ? (res.json.membership as string) : undefined;
  };
  /** The room's current state on `t` as `who` reads it: (type|state_key) → event id. */
  const stateIds = async (t: FederatedServer, who: Session, roomId: string) => {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return Object.fromEntries((res.json as ClientEvent[]).map((e) => [`${e.type}|${e.state_key}`, e.event_id]));
  };
  /** All three servers in one public room of `creator`'s. */
  async function sharedRoom(name: string, extra: Record<string, unknown> = {}): Promise<string> {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name, ...extra });
    await join(b, bob, roomId, a);
    // B joined with partial state and refuses make_join until its resync ends (as Synapse): the member
    // list waits for the full state, so once it answers B can relay carol's join.
    const members = await b.call("GET", `${V3}/rooms/${enc(roomId)}/members`, { token: bob.access_token });
    expect(members.status, JSON.stringify(members.json)).toBe(200);
    await join(c, carol, roomId, b);
    // A hears of carol's join from C's sender: until then A's own events go to B only (the servers in the
    // room as A knows it), as Synapse's would.
    await eventually(() => membershipOn(a, alice, roomId, carol.user_id).then((m) => m === "join" || undefined), "carol joined on A");
    return roomId;
  }

  /** Sets a state event through the client API; its event id. */
  async function putState(t: FederatedServer, who: Session, roomId: string, type: string, body: unknown): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}`, { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id;
  }
  /** alice gives bob and carol power 100, and waits until B and C have that change; the new content. */
  async function raisePowers(roomId: string): Promise<Record<string, any>> {
    const pl = (await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels`, { token: alice.access_token })).json;
    const raised = { ...pl, users: { ...pl.users, [bob.user_id]: 100, [carol.user_id]: 100 } };
    const id = await putState(a, alice, roomId, "m.room.power_levels", raised);
    for (const [t, who] of [[b, bob], [c, carol]] as const) {
      await eventually(async () => (await t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(id)}`, { token: who.access_token })).status === 200 || undefined, `the raised power levels on ${t.serverName}`);
    }
    return raised;
  }
  const everyone = () => [[a, alice], [b, bob], [c, carol]] as const;
  /** Waits until every server serves each of `ids` to its user. */
  async function everyServerHas(roomId: string, ids: string[], ms = 20_000): Promise<void> {
    for (const [t, who] of everyone()) {
      await eventually(async () => {
        const res = await Promise.all(ids.map((id) => t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(id)}`, { token: who.access_token })));
        return res.every((r) => r.status === 200) || undefined;
      }, `${ids.length} events on ${t.serverName}`, ms);
    }
  }
  /** A message from each server (merging its forward extremities), then waits for identical current state everywhere. */
  async function mergeAndConverge(roomId: string): Promise<{ final: Record<string, string>; merges: string[] }> {
    const merges: string[] = [];
    for (const [t, who] of everyone()) merges.push(await say(t, who, roomId, `merge from ${t.serverName}`));
    const final = await eventually(async () => {
      const [sa, sb, sc] = await Promise.all(everyone().map(([t, who]) => stateIds(t, who, roomId)));
      const canon = (x: Record<string, string>) => JSON.stringify(Object.entries(x).sort());
      return canon(sa!) === canon(sb!) && canon(sb!) === canon(sc!) ? sa : undefined;
    }, "identical state on A, B and C", 30_000);
    return { final, merges };
  }

  it("joins both ways; messages both ways reach the other servers' users' /sync, in order", async () => {
    // A room of A that bob of B joins, and a room of B that alice of A joins.
    const onA = await createRoom(a, alice, { preset: "public_chat", name: "On A" });
    const onB = await createRoom(b, bob, { preset: "public_chat", name: "On B" });
    const [aliceSync, bobSync] = [new SyncClient(a, alice), new SyncClient(b, bob)];
    await Promise.all([aliceSync.sync(), bobSync.sync()]);
    await join(b, bob, onA, a);
    await join(a, alice, onB, b);
    // Each server's sender told the resident server's users of the join.
    await aliceSync.until(() => (aliceSync.timeline.get(onA) ?? []).some((e) => e.type === "m.room.member" && e.state_key === bob.user_id), "bob's join");
    await bobSync.until(() => (bobSync.timeline.get(onB) ?? []).some((e) => e.type === "m.room.member" && e.state_key === alice.user_id), "alice's join");

    for (const roomId of [onA, onB]) {
      await say(a, alice, roomId, "from alice 1");
      await say(b, bob, roomId, "from bob 1");
      await say(a, alice, roomId, "from alice 2");
    }
    for (const [client, roomId] of [[aliceSync, onA], [aliceSync, onB], [bobSync, onA], [bobSync, onB]] as const) {
      const bodies = await client.until(() => {
        const got = client.bodies(roomId);
        return got.length >= 3 && got;
      }, `three messages in ${roomId}`);
      // Each side's own messages in the order sent; the other side's too.
      expect(bodies.filter((x) => x.startsWith("from alice"))).toEqual(["from alice 1", "from alice 2"]);
      expect(bodies.filter((x) => x.startsWith("from bob"))).toEqual(["from bob 1"]);
      // The remote server's event arrives whole: the sender, the content.
      const fromOther = client.timeline.get(roomId)!.find((e) => e.content.body === (client === aliceSync ? "from bob 1" : "from alice 1"))!;
      expect(fromOther.sender).toBe(client === aliceSync ? bob.user_id : alice.user_id);
    }
    // Both servers hold the same current state of each room.
    for (const roomId of [onA, onB]) expect(await stateIds(b, bob, roomId)).toEqual(await stateIds(a, alice, roomId));
  }, 60_000);

  it("three servers: a message from each reaches the users of the two others", async () => {
    const roomId = await sharedRoom("Three");
    const clients = [new SyncClient(a, alice), new SyncClient(b, bob), new SyncClient(c, carol)];
    await Promise.all(clients.map((x) => x.sync()));
    const ids = [await say(a, alice, roomId, "a says"), await say(b, bob, roomId, "b says"), await say(c, carol, roomId, "c says")];
    for (const client of clients) {
      await client.until(() => ids.every((id) => client.has(roomId, id)), "the three messages");
      expect(client.bodies(roomId).sort()).toEqual(["a says", "b says", "c says"]);
    }
    const [sa, sb, sc] = await Promise.all([stateIds(a, alice, roomId), stateIds(b, bob, roomId), stateIds(c, carol, roomId)]);
    expect(sb).toEqual(sa);
    expect(sc).toEqual(sa);
  }, 60_000);

  it("the resident server passes a join and a leave it accepted on to the room's other servers (the joiner's server sending nothing)", async () => {
    const roomId = await sharedRoom("Relayed");
    // D sends nothing of its own (send_federation: false): A can only hear of dan from B, where he joins.
    const d = await startFederatedServer({ backend, config: { send_federation: false } });
    try {
      const dan = await registerUser(d, "dan");
      const aliceSync = new SyncClient(a, alice);
      await aliceSync.sync();
      await join(d, dan, roomId, b);
      await aliceSync.until(() => (aliceSync.timeline.get(roomId) ?? []).find((e) => e.type === "m.room.member" && e.state_key === dan.user_id && e.content.membership === "join"), "dan's join on A");
      await eventually(() => membershipOn(c, carol, roomId, dan.user_id).then((m) => m === "join" || undefined), "dan's join on C");
      // dan leaves through a resident server (make_leave / send_leave to B, as when rejecting an invite):
      // A and C hear of it from B.
      await leaveRemoteRoom(d.hs.services, roomId, dan.user_id, [b.serverName], { membership: "leave" });
      await aliceSync.until(() => (aliceSync.timeline.get(roomId) ?? []).find((e) => e.type === "m.room.member" && e.state_key === dan.user_id && e.content.membership === "leave"), "dan's leave on A");
      await eventually(() => membershipOn(c, carol, roomId, dan.user_id).then((m) => m === "leave" || undefined), "dan's leave on C");
    } finally {
      await d.close();
    }
  }, 90_000);

  it("invites from a server other than the creator's, leaves, kicks and bans are seen on every server", async () => {
    const roomId = await createRoom(a, alice, { preset: "private_chat", name: "Members only" });
    const invite = (t: FederatedServer, who: Session, userId: string) => t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: who.access_token, body: { user_id: userId } });
    // alice invites bob (A → B); bob accepts, through A.
    const bobSync = new SyncClient(b, bob);
    await bobSync.sync();
    expect((await invite(a, alice, bob.user_id)).status).toBe(200);
    const stripped = await bobSync.until(() => bobSync.invites.get(roomId), "the invite to bob");
    expect(stripped.find((e) => e.type === "m.room.name")?.content.name).toBe("Members only");
    expect((await b.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: bob.access_token, body: {} })).status).toBe(200);
    // alice makes bob a moderator; bob (on B) invites carol (on C): the invite goes from B to C.
    const pl = (await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels`, { token: alice.access_token })).json;
    const plRes = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels`, { token: alice.access_token, body: { ...pl, users: { ...pl.users, [bob.user_id]: 50 } } });
    expect(plRes.status).toBe(200);
    await eventually(async () => (await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels`, { token: bob.access_token })).json.users?.[bob.user_id] === 50, "bob's power on B");
    const carolSync = new SyncClient(c, carol);
    await carolSync.sync();
    const inv = await invite(b, bob, carol.user_id);
    expect(inv.status, JSON.stringify(inv.json)).toBe(200);
    const carolInvite = await carolSync.until(() => carolSync.invites.get(roomId), "the invite to carol");
    expect(carolInvite.find((e) => e.type === "m.room.member" && e.state_key === carol.user_id)).toMatchObject({ sender: bob.user_id, content: { membership: "invite" } });
    await eventually(() => membershipOn(a, alice, roomId, carol.user_id).then((m) => m === "invite" || undefined), "carol invited on A");
    // carol accepts: C joins through B (the inviter's server).
    const accepted = await c.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: carol.access_token, body: {} });
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
    await eventually(() => membershipOn(a, alice, roomId, carol.user_id).then((m) => m === "join" || undefined), "carol joined on A");

    // bob kicks carol (B's moderator, C's user): A and C see it; carol's /sync shows the room left.
    const aliceSync = new SyncClient(a, alice);
    await aliceSync.sync();
    await carolSync.sync();
    const kick = await b.call("POST", `${V3}/rooms/${enc(roomId)}/kick`, { token: bob.access_token, body: { user_id: carol.user_id, reason: "out" } });
    expect(kick.status, JSON.stringify(kick.json)).toBe(200);
    const kickId = (await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(carol.user_id)}?format=event`, { token: bob.access_token })).json.event_id;
    await aliceSync.until(() => aliceSync.has(roomId, kickId), "the kick on A");
    await carolSync.until(() => carolSync.has(roomId, kickId), "the kick in carol's left room");
    expect(await membershipOn(c, carol, roomId, carol.user_id)).toBe("leave");

    // alice bans carol: seen on B, and carol's join is refused by every resident server.
    const ban = await a.call("POST", `${V3}/rooms/${enc(roomId)}/ban`, { token: alice.access_token, body: { user_id: carol.user_id, reason: "enough" } });
    expect(ban.status).toBe(200);
    await eventually(() => membershipOn(b, bob, roomId, carol.user_id).then((m) => m === "ban" || undefined), "the ban on B");
    // C, with no member left in the room, ignores what is sent for it (as Synapse does): carol stays "leave" there.
    for (const via of [a, b]) {
      const refused = await c.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(via.serverName)}`, { token: carol.access_token, body: {} });
      expect([refused.status, refused.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    }
    expect(await membershipOn(c, carol, roomId, carol.user_id)).toBe("leave");
    // bob leaves: his leave reaches A's /sync, and B's /sync shows the room left.
    await bobSync.sync();
    const leave = await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: bob.access_token, body: { reason: "bye" } });
    expect(leave.status, JSON.stringify(leave.json)).toBe(200);
    const leaveEvent = await aliceSync.until(() => (aliceSync.timeline.get(roomId) ?? []).find((e) => e.type === "m.room.member" && e.state_key === bob.user_id && e.content.membership === "leave"), "bob's leave on A");
    expect(leaveEvent.content.reason).toBe("bye");
    await bobSync.until(() => bobSync.has(roomId, leaveEvent.event_id), "bob's own leave on B");
  }, 90_000);

  it("backfill from a late join: a user of B joining after thirty messages reads them all back through /messages", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "History", initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "shared" } }] });
    await sendMessages(a, alice.access_token, roomId, "old", 30);
    const late = await registerUser(b, "late");
    await join(b, late, roomId, a);
    const events: ClientEvent[] = [];
    let from: string | undefined;
    for (let page = 0; page < 30; page++) {
      const res = await b.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=8${from ? `&from=${enc(from)}` : ""}`, { token: late.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "GET", `${V3}/rooms/x/messages`);
      events.push(...res.json.chunk);
      if (res.json.end === undefined) break;
      from = res.json.end;
    }
    const ids = events.map((e) => e.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.filter((e) => e.type === "m.room.message").map((e) => e.content.body)).toEqual(Array.from({ length: 30 }, (_, i) => `old${30 - i}`));
    expect(events.at(-1)!.type).toBe("m.room.create");
    expect(events[0]).toMatchObject({ type: "m.room.member", state_key: late.user_id });
  }, 60_000);

  it("typing and read receipts reach the other servers' users' /sync", async () => {
    const roomId = await sharedRoom("Ephemeral");
    const msg = await say(a, alice, roomId, "read me");
    const [bobSync, carolSync] = [new SyncClient(b, bob), new SyncClient(c, carol)];
    await Promise.all([bobSync.until(() => bobSync.has(roomId, msg), "the message on B"), carolSync.until(() => carolSync.has(roomId, msg), "the message on C")]);

    const typing = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, body: { typing: true, timeout: 30000 } });
    expect(typing.status).toBe(200);
    for (const x of [bobSync, carolSync]) await x.until(() => x.typing(roomId)?.includes(alice.user_id), "alice typing");
    await a.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, body: { typing: false } });
    for (const x of [bobSync, carolSync]) await x.until(() => x.typing(roomId)?.length === 0, "alice stopped typing");

    // bob (B) reads alice's message: alice on A and carol on C see the receipt.
    const receipt = await b.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(msg)}`, { token: bob.access_token, body: {} });
    expect(receipt.status).toBe(200);
    const aliceSync = new SyncClient(a, alice);
    for (const x of [aliceSync, carolSync]) {
      const r = await x.until(() => x.receipt(roomId, msg, bob.user_id), "bob's receipt");
      expect(r.ts).toEqual(expect.any(Number));
    }
  }, 60_000);

  it("a server restarted while the others send loses nothing: everything arrives once it is back", async () => {
    const roomId = await sharedRoom("Restart");
    const bobSync = new SyncClient(b, bob);
    const warm = await say(a, alice, roomId, "before");
    await bobSync.until(() => bobSync.has(roomId, warm), "the first message on B");
    await b.stop();
    const sent: string[] = [];
    for (let i = 1; i <= 4; i++) {
      sent.push(await say(a, alice, roomId, `a while B is down ${i}`));
      sent.push(await say(c, carol, roomId, `c while B is down ${i}`));
    }
    await b.restart();
    // B's /sync (from before the restart) shows every message, each once.
    await bobSync.until(() => sent.every((id) => bobSync.has(roomId, id)), "every message sent while B was down", 60_000);
    const bodies = bobSync.bodies(roomId);
    expect(bodies.filter((x) => x.includes("while B is down")).sort()).toEqual([...Array(4).keys()].flatMap((i) => [`a while B is down ${i + 1}`, `c while B is down ${i + 1}`]).sort());
    expect(new Set(bodies).size).toBe(bodies.length);
    // A's and C's messages each in their own order.
    expect(bodies.filter((x) => x.startsWith("a while"))).toEqual([1, 2, 3, 4].map((i) => `a while B is down ${i}`));
    expect(bodies.filter((x) => x.startsWith("c while"))).toEqual([1, 2, 3, 4].map((i) => `c while B is down ${i}`));
    // And B takes part again: its message reaches A and C.
    const back = await say(b, bob, roomId, "B is back");
    for (const x of [new SyncClient(a, alice), new SyncClient(c, carol)]) await x.until(() => x.has(roomId, back), "B's message after the restart");
  }, 120_000);

  it("concurrent state changes on two servers converge to identical current state on every server", async () => {
    const roomId = await sharedRoom("Contested");
    const raised = await raisePowers(roomId);

    // At the same moment: B and C each set the topic; A and C each change the power levels.
    const ours = await Promise.all([
      putState(b, bob, roomId, "m.room.topic", { topic: "bob's topic" }),
      putState(c, carol, roomId, "m.room.topic", { topic: "carol's topic" }),
      putState(a, alice, roomId, "m.room.power_levels", { ...raised, events_default: 10 }),
      putState(c, carol, roomId, "m.room.power_levels", { ...raised, state_default: 60 }),
    ]);

    // Every server received every one of them; a message from each merges the forks; then the three
    // current states are identical.
    await everyServerHas(roomId, ours);
    const { final } = await mergeAndConverge(roomId);
    // The winners are among the concurrent changes, and their content is the same everywhere.
    expect([ours[0], ours[1]]).toContain(final["m.room.topic|"]);
    expect([ours[2], ours[3]]).toContain(final["m.room.power_levels|"]);
    const topics = await Promise.all(everyone().map(([t, who]) => t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.topic`, { token: who.access_token })));
    expect(new Set(topics.map((r) => r.json.topic)).size).toBe(1);
  }, 120_000);

  it("changes made on both sides of a partition (a certain fork) resolve to identical current state on every server", async () => {
    const roomId = await sharedRoom("Partitioned");
    const raised = await raisePowers(roomId);
    const put = (t: FederatedServer, who: Session, type: string, body: unknown) => putState(t, who, roomId, type, body);

    // B is down while C changes the topic and the power levels (A hears of them; B cannot).
    await b.stop();
    const fromC = [await put(c, carol, "m.room.topic", { topic: "carol's topic" }), await put(c, carol, "m.room.power_levels", { ...raised, events_default: 10 })];
    await eventually(async () => (await a.hs.services.rooms.events.getMany(fromC)).size === 2 || undefined, "C's changes on A");
    // Then C is down while B, back, changes them too — knowing nothing of C's changes (A forwards none).
    await c.stop();
    await b.restart();
    const fromB = [await put(b, bob, "m.room.topic", { topic: "bob's topic" }), await put(b, bob, "m.room.power_levels", { ...raised, state_default: 60 })];
    await c.restart();

    // Every server ends up with all four, and the same current state.
    await everyServerHas(roomId, [...fromB, ...fromC], 60_000);
    const { final, merges } = await mergeAndConverge(roomId);
    // A's merge joins the two branches.
    expect((await a.hs.services.rooms.events.get(merges[0]!))!.pdu.prev_events.length).toBeGreaterThan(1);
    expect([fromB[0], fromC[0]]).toContain(final["m.room.topic|"]);
    expect([fromB[1], fromC[1]]).toContain(final["m.room.power_levels|"]);
    // And the room goes on: a message from B reaches A's and C's users.
    const after = await say(b, bob, roomId, "after the partition");
    for (const x of [new SyncClient(a, alice), new SyncClient(c, carol)]) await x.until(() => x.has(roomId, after), "B's message after the partition");
  }, 180_000);
});
