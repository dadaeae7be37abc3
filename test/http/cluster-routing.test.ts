// Two Weft processes on one PostgreSQL database (README "Scaling out"): `master` and `worker1` share the
// events stream (rooms sharded by id over both), every other stream is master's. Any process answers any
// request: a write for a room or stream the other process writes is forwarded to it over the internal
// authenticated route and its answer returned as it came (domain/cluster/write-routes.ts, compat/cluster.ts).
// Without Redis replication (not part of this) the other process is not woken live, so everything is read
// through the writer or from the database (/messages, /state, account data).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { CLUSTER_SECRET as SECRET, startCluster, type Cluster } from "../helpers/cluster.ts";
import { ROUTED_WRITES } from "../../src/domain/cluster/write-routes.ts";
import { gql } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

// One database for several processes: PostgreSQL (skipped only where PostgreSQL tests are, as test/storage does).
const pgOnly = ["postgres" as const];
const clusterDescribe = describe.runIf(backends().includes("postgres"));

clusterDescribe.each(pgOnly)("two processes on one %s database", () => {
  let cluster: Cluster;
  let main: TestServer;
  let w1: TestServer;
  let alice: Session;
  let bob: Session;
  /** A room master writes, and one worker1 writes (each made through its writer). */
  let roomM: string;
  let roomW: string;
  let committed: Cluster["committed"];
  let sent: Cluster["sent"];
  let watch: Cluster["watch"];

  beforeAll(async () => {
    // msc3391: its account data deletions are routed writes too.
    cluster = await startCluster({ config: { experimental_features: { msc3391_enabled: true } } });
    ({ main, w1, committed, sent, watch } = cluster);
    alice = await registerUser(main, "alice");
    bob = await registerUser(w1, "bob");
    roomM = await createRoom(main, alice, { preset: "public_chat", room_alias_name: "on-master" });
    roomW = await createRoom(w1, alice, { preset: "public_chat", room_alias_name: "on-worker1" });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it("every routed write of the table is a route of the server", () => {
    for (const key of ROUTED_WRITES) {
      const [method, url] = key.split(" ") as [string, string];
      expect(main.hs.app.hasRoute({ method: method as "GET", url }), key).toBe(true);
    }
  });

  const bodies = async (t: TestServer, who: Session, roomId: string) => {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return (res.json.chunk as { type: string; content: { body?: string } }[]).filter((e) => e.type === "m.room.message").map((e) => e.content.body);
  };
  const stateOf = async (t: TestServer, who: Session, roomId: string, type: string, key = "") =>
    t.call("GET", `${V3}/rooms/${enc(roomId)}/state/${type}/${enc(key)}`, { token: who.access_token });

  it("createRoom on either process makes a room that process writes", () => {
    expect(main.hs.services.topology.eventWriterFor(roomM)).toBe("master");
    expect(w1.hs.services.topology.eventWriterFor(roomW)).toBe("worker1");
    // Both processes agree on who writes what.
    expect(w1.hs.services.topology.eventWriterFor(roomM)).toBe("master");
    expect(main.hs.services.topology.eventWriterFor(roomW)).toBe("worker1");
  });

  it("a send through the other process is persisted once by the room's writer, idempotent across processes", async () => {
    for (const [roomId, owner, other] of [[roomM, main, w1], [roomW, w1, main]] as const) {
      const ownerName = owner.hs.services.instanceName;
      const otherName = other.hs.services.instanceName;
      const path = `${V3}/rooms/${enc(roomId)}/send/m.room.message/txn-${ownerName}`;
      const first = await other.call("PUT", path, { token: alice.access_token, body: { msgtype: "m.text", body: `to ${ownerName}` } });
      expect(first.status, JSON.stringify(first.json)).toBe(200);
      const eventId = first.json.event_id as string;
      expect(committed[ownerName]).toContain(eventId);
      expect(committed[otherName]).not.toContain(eventId);
      expect(sent[otherName]).toContain(`${ownerName} /_weft/replication/forward${path}`);
      // The same transaction retried on the owner, and on the other process again: the same event.
      for (const t of [owner, other]) {
        const again = await t.call("PUT", path, { token: alice.access_token, body: { msgtype: "m.text", body: `to ${ownerName}` } });
        expect(again.status).toBe(200);
        expect(again.json.event_id).toBe(eventId);
      }
      // Once in the room's history (the writer's /messages: the other process learns of new positions
      // through replication, which is not part of this).
      expect((await bodies(owner, alice, roomId)).filter((b) => b === `to ${ownerName}`)).toEqual([`to ${ownerName}`]);
      const row = await owner.hs.services.storage.sql.get<{ n: number | string }>("SELECT COUNT(*) AS n FROM events WHERE event_id = ?", [eventId]);
      expect(Number(row!.n)).toBe(1);
    }
  });

  it("the owner's errors come back unchanged", async () => {
    // Not joined: the owner's 403, through the other process.
    const res = await main.call("PUT", `${V3}/rooms/${enc(roomW)}/send/m.room.message/nope`, { token: bob.access_token, body: { msgtype: "m.text", body: "x" } });
    expect(res.status).toBe(403);
    expect(res.json.errcode).toBe("M_FORBIDDEN");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const bad = await main.call("PUT", `${V3}/rooms/${enc(roomW)}/send/m.room.message/bad`, { token: "not-a-token", body: {} });
    expect(bad.status).toBe(401);
    expect(bad.json.errcode).toBe("M_UNKNOWN_TOKEN");
  });

  it("joins (by id and by alias), invites, state changes, kicks and bans through the process that does not write the room", async () => {
    // Bob joins master's room through worker1, by alias; worker1's room through master, by id.
    const j1 = await w1.call("POST", `${V3}/join/${enc("#on-master:weft.test")}`, { token: bob.access_token, body: {} });
    expect(j1.status, JSON.stringify(j1.json)).toBe(200);
    expect(j1.json.room_id).toBe(roomM);
    const j2 = await main.call("POST", `${V3}/rooms/${enc(roomW)}/join`, { token: bob.access_token, body: {} });
    expect(j2.status, JSON.stringify(j2.json)).toBe(200);
    expect(sent.worker1.some((p) => p.startsWith("master /_weft/replication/forward/_matrix/client/v3/join/"))).toBe(true);
    // Read through each room's writer (the other process's room cache is refreshed by replication).
    expect((await stateOf(main, alice, roomM, "m.room.member", bob.user_id)).json.membership).toBe("join");
    expect((await stateOf(w1, alice, roomW, "m.room.member", bob.user_id)).json.membership).toBe("join");
    // A name set on worker1's room through master.
    const named = await main.call("PUT", `${V3}/rooms/${enc(roomW)}/state/m.room.name`, { token: alice.access_token, body: { name: "Sharded" } });
    expect(named.status).toBe(200);
    expect(committed.worker1).toContain(named.json.event_id);
    expect((await stateOf(w1, alice, roomW, "m.room.name")).json.name).toBe("Sharded");
    // Invite, kick and ban of carol on master's room, through worker1.
    const carol = await registerUser(main, "carol");
    const inv = await w1.call("POST", `${V3}/rooms/${enc(roomM)}/invite`, { token: alice.access_token, body: { user_id: carol.user_id } });
    expect(inv.status, JSON.stringify(inv.json)).toBe(200);
    expect((await stateOf(main, alice, roomM, "m.room.member", carol.user_id)).json.membership).toBe("invite");
    const kick = await w1.call("POST", `${V3}/rooms/${enc(roomM)}/kick`, { token: alice.access_token, body: { user_id: carol.user_id } });
    expect(kick.status).toBe(200);
    const ban = await w1.call("POST", `${V3}/rooms/${enc(roomM)}/ban`, { token: alice.access_token, body: { user_id: carol.user_id } });
    expect(ban.status).toBe(200);
    expect((await stateOf(main, alice, roomM, "m.room.member", carol.user_id)).json.membership).toBe("ban");
    // Every membership event of these rooms was committed by its writer only.
    for (const id of committed.master) expect(committed.worker1).not.toContain(id);
  });

  it("receipts, typing, to-device and account data through worker1 go to master, their writer", async () => {
    // Master's room: master writes its events, its receipts and its typing, and its syncs show them.
    const msg = await w1.call("PUT", `${V3}/rooms/${enc(roomM)}/send/m.room.message/for-receipt`, { token: alice.access_token, body: { msgtype: "m.text", body: "read me" } });
    const eventId = msg.json.event_id as string;
    const receipt = await w1.call("POST", `${V3}/rooms/${enc(roomM)}/receipt/m.read/${enc(eventId)}`, { token: bob.access_token, body: {} });
    expect(receipt.status, JSON.stringify(receipt.json)).toBe(200);
    const typing = await w1.call("PUT", `${V3}/rooms/${enc(roomM)}/typing/${enc(bob.user_id)}`, { token: bob.access_token, body: { typing: true, timeout: 30_000 } });
    expect(typing.status).toBe(200);
    const toDevice = await w1.call("PUT", `${V3}/sendToDevice/m.test/td1`, { token: bob.access_token, body: { messages: { [alice.user_id]: { [alice.device_id]: { hello: "there" } } } } });
    expect(toDevice.status).toBe(200);
    const ad = await w1.call("PUT", `${V3}/user/${enc(bob.user_id)}/account_data/m.test.cluster`, { token: bob.access_token, body: { on: "master" } });
    expect(ad.status).toBe(200);
    const tag = await w1.call("PUT", `${V3}/user/${enc(bob.user_id)}/rooms/${enc(roomW)}/tags/u.work`, { token: bob.access_token, body: { order: 0.5 } });
    expect(tag.status).toBe(200);
    for (const p of ["/receipt/m.read/", "/typing/", "/sendToDevice/", "/account_data/m.test.cluster", "/tags/u.work"])
      expect(sent.worker1.some((x) => x.startsWith("master /_weft/replication/forward") && x.includes(p)), p).toBe(true);

    // Master holds typing in memory and wakes its own syncs: what it shows came through it.
    const sync = await main.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
    expect(sync.status).toBe(200);
    const ephemeral = sync.json.rooms.join[roomM].ephemeral.events as { type: string; content: any }[];
    expect(ephemeral.find((e) => e.type === "m.typing")?.content.user_ids).toEqual([bob.user_id]);
    expect(ephemeral.find((e) => e.type === "m.receipt")?.content[eventId]["m.read"][bob.user_id]).toBeDefined();
    expect(sync.json.to_device.events).toEqual([expect.objectContaining({ type: "m.test", sender: bob.user_id, content: { hello: "there" } })]);
    const read = await main.call("GET", `${V3}/user/${enc(bob.user_id)}/account_data/m.test.cluster`, { token: bob.access_token });
    expect(read.json).toEqual({ on: "master" });
  });

  it("the GraphQL face's typing, markRead and account data on worker1 run on master, their writer", async () => {
    const msg = await w1.call("PUT", `${V3}/rooms/${enc(roomM)}/send/m.room.message/for-gql`, { token: alice.access_token, body: { msgtype: "m.text", body: "gql" } });
    const eventId = msg.json.event_id as string;
    const before = sent.worker1.length;
    const typing = await gql(w1, `mutation ($roomId: String!) { setTyping(roomId: $roomId, typing: true, timeout: 30000) }`, { roomId: roomM }, alice.access_token);
    expect(typing.body.errors, JSON.stringify(typing.body)).toBeUndefined();
    const read = await gql(w1, `mutation ($roomId: String!, $eventId: String!) { markRead(roomId: $roomId, eventId: $eventId) }`, { roomId: roomM, eventId }, alice.access_token);
    expect(read.body.data.markRead).toBe(true);
    const ad = await gql(w1, `mutation { setAccountData(type: "org.example.gql.cluster", content: { via: "graphql" }) { type } }`, {}, alice.access_token);
    expect(ad.body.errors, JSON.stringify(ad.body)).toBeUndefined();
    expect(sent.worker1.slice(before).filter((p) => p === "master /_weft/replication/streams/op")).toHaveLength(3);
    const sync = await main.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
    const ephemeral = sync.json.rooms.join[roomM].ephemeral.events as { type: string; content: any }[];
    expect(ephemeral.find((e) => e.type === "m.typing")?.content.user_ids).toContain(alice.user_id);
    expect(ephemeral.find((e) => e.type === "m.receipt")?.content[eventId]["m.read"][alice.user_id]).toBeDefined();
    expect((await main.call("GET", `${V3}/user/${enc(alice.user_id)}/account_data/org.example.gql.cluster`, { token: alice.access_token })).json).toEqual({ via: "graphql" });
  });

  it("the GraphQL face's joins, invites and leaves on the process that does not write the room run on its writer", async () => {
    const dave = await registerUser(main, "dave");
    const before = sent.master.length;
    // worker1's room, through master's GraphQL face.
    const inv = await gql(main, `mutation ($r: String!, $u: String!) { invite(roomId: $r, userId: $u) { roomId } }`, { r: roomW, u: dave.user_id }, alice.access_token);
    expect(inv.body.errors, JSON.stringify(inv.body)).toBeUndefined();
    const join = await gql(main, `mutation ($id: String!) { joinRoom(roomIdOrAlias: $id) { roomId } }`, { id: "#on-worker1:weft.test" }, dave.access_token);
    expect(join.body.errors, JSON.stringify(join.body)).toBeUndefined();
    expect(join.body.data.joinRoom.roomId).toBe(roomW);
    expect((await stateOf(w1, alice, roomW, "m.room.member", dave.user_id)).json.membership).toBe("join");
    const leave = await gql(main, `mutation ($r: String!) { leaveRoom(roomId: $r) }`, { r: roomW }, dave.access_token);
    expect(leave.body.errors, JSON.stringify(leave.body)).toBeUndefined();
    const member = await w1.call("GET", `${V3}/rooms/${enc(roomW)}/state/m.room.member/${enc(dave.user_id)}?format=event`, { token: alice.access_token });
    expect(member.json.content.membership).toBe("leave");
    expect(committed.worker1).toContain(member.json.event_id);
    expect(sent.master.slice(before).filter((p) => p === "worker1 /_weft/replication/streams/op")).toHaveLength(3);
  });

  it("a profile change carried into every room: each room's member event is appended by its writer", async () => {
    const res = await main.call("PUT", `${V3}/profile/${enc(alice.user_id)}/displayname`, { token: alice.access_token, body: { displayname: "Alice Sharded" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    for (const [t, roomId, name] of [[main, roomM, "master"], [w1, roomW, "worker1"]] as const) {
      const member = await stateOf(t, alice, roomId, "m.room.member", alice.user_id);
      expect(member.json.displayname, roomId).toBe("Alice Sharded");
      const event = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(alice.user_id)}?format=event`, { token: alice.access_token });
      expect(committed[name]).toContain(event.json.event_id);
    }
    expect(sent.master).toContain("worker1 /_weft/replication/rooms/append");
  });

  it("an upgrade through the other process is made by the old room's writer, in a room it writes", async () => {
    const up = await w1.call("POST", `${V3}/rooms/${enc(roomM)}/upgrade`, { token: alice.access_token, body: { new_version: "10" } });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const replacement = up.json.replacement_room as string;
    expect(main.hs.services.topology.eventWriterFor(replacement)).toBe("master");
    expect(sent.worker1).toContain(`master /_weft/replication/forward${V3}/rooms/${enc(roomM)}/upgrade`);
    const tombstone = await main.call("GET", `${V3}/rooms/${enc(roomM)}/state/m.room.tombstone/`, { token: alice.access_token });
    expect(tombstone.json.replacement_room).toBe(replacement);
    expect(committed.worker1.length).toBeGreaterThan(0);
    const create = await main.call("GET", `${V3}/rooms/${enc(replacement)}/state/m.room.create/`, { token: alice.access_token, headers: {} });
    expect(create.json.predecessor.room_id).toBe(roomM);
  });

  it("internal routes refuse requests without the secret, or with a wrong one", async () => {
    for (const t of [main, w1]) {
      for (const auth of [undefined, "Bearer wrong-secret", `Bearer ${SECRET}x`, SECRET]) {
        const headers: Record<string, string> = auth ? { authorization: auth } : {};
        const pdus = await t.call("POST", "/_weft/replication/federation/pdus", { headers, body: { origin: "evil.test", pdus: [] } });
        expect(pdus.status).toBe(403);
        expect(pdus.json.errcode).toBe("M_FORBIDDEN");
        const fwd = await t.call("PUT", `/_weft/replication/forward${V3}/rooms/${enc(roomM)}/send/m.room.message/sneak`, { headers: { ...headers, "x-weft-authorization": `Bearer ${alice.access_token}` }, body: { msgtype: "m.text", body: "sneaky" } });
        expect(fwd.status).toBe(403);
        expect(fwd.json.errcode).toBe("M_FORBIDDEN");
      }
      // With the secret: served (an empty batch of PDUs).
      const ok = await t.call("POST", "/_weft/replication/federation/pdus", { headers: { authorization: `Bearer ${SECRET}` }, body: { origin: "peer.test", pdus: [] } });
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ pdus: {} });
    }
    expect((await bodies(main, alice, roomM)).includes("sneaky")).toBe(false);
  });

  it("a forwarded request that reaches a process that does not own it is refused, not forwarded again", async () => {
    const before = sent.master.length;
    const res = await main.call("PUT", `/_weft/replication/forward${V3}/rooms/${enc(roomW)}/send/m.room.message/looped`, {
      headers: { authorization: `Bearer ${SECRET}`, "x-weft-authorization": `Bearer ${alice.access_token}`, "x-weft-forwarded-by": "worker1" },
      body: { msgtype: "m.text", body: "looped" },
    });
    expect(res.status).toBe(500);
    expect(res.json.errcode).toBe("M_UNKNOWN");
    expect(res.json.error).toContain("stream_writers differ");
    expect(sent.master.length).toBe(before);
    expect((await bodies(w1, alice, roomW)).includes("looped")).toBe(false);
  });

  it("the writer stopped: a clean retryable error for its rooms, the other shard unaffected; back: works again", async () => {
    await w1.stop();
    const down = await main.call("PUT", `${V3}/rooms/${enc(roomW)}/send/m.room.message/while-down`, { token: alice.access_token, body: { msgtype: "m.text", body: "while down" } });
    expect(down.status).toBe(502);
    expect(down.json).toEqual({ errcode: "M_UNKNOWN", error: "Failed to talk to worker1 process" });
    expect(down.headers.get("retry-after")).toBe("1");
    // Master's own shard, and reads of worker1's rooms (from the database), still work.
    const mine = await main.call("PUT", `${V3}/rooms/${enc(roomM)}/send/m.room.message/during`, { token: alice.access_token, body: { msgtype: "m.text", body: "during" } });
    expect(mine.status).toBe(200);
    expect(await bodies(main, alice, roomM)).toContain("during");
    const created = await main.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: {} });
    expect(created.status).toBe(200);
    expect(main.hs.services.topology.eventWriterFor(created.json.room_id)).toBe("master");

    await w1.restart();
    watch(w1);
    // The client's retry of the same transaction: sent once.
    const retry = await main.call("PUT", `${V3}/rooms/${enc(roomW)}/send/m.room.message/while-down`, { token: alice.access_token, body: { msgtype: "m.text", body: "while down" } });
    expect(retry.status, JSON.stringify(retry.json)).toBe(200);
    expect(committed.worker1).toContain(retry.json.event_id);
    expect((await bodies(w1, alice, roomW)).filter((b) => b === "while down")).toEqual(["while down"]);
  }, 60_000);

  it("createRoom on a process that writes no events goes to an events writer", async () => {
    w1.config.stream_writers.events = ["master"];
    await w1.restart();
    watch(w1);
    try {
      for (const room_version of ["10", "12"]) {
        const res = await w1.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { room_version } });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        expect(main.hs.services.topology.eventWriterFor(res.json.room_id)).toBe("master");
        expect((await main.call("GET", `${V3}/rooms/${enc(res.json.room_id)}/state/m.room.create/`, { token: alice.access_token })).json.room_version).toBe(room_version);
      }
      expect(sent.worker1.filter((x) => x === `master /_weft/replication/forward${V3}/createRoom`)).toHaveLength(2);
      // The GraphQL face's createRoom: made by master too (a stream operation).
      const viaGql = await gql(w1, `mutation { createRoom(input: { name: "from graphql" }) { roomId } }`, {}, alice.access_token);
      expect(viaGql.body.errors, JSON.stringify(viaGql.body)).toBeUndefined();
      const gqlRoom = viaGql.body.data.createRoom.roomId as string;
      expect(main.hs.services.topology.eventWriterFor(gqlRoom)).toBe("master");
      expect(sent.worker1).toContain("master /_weft/replication/streams/op");
      expect((await main.call("GET", `${V3}/rooms/${enc(gqlRoom)}/state/m.room.name/`, { token: alice.access_token })).json.name).toBe("from graphql");
    } finally {
      w1.config.stream_writers.events = ["master", "worker1"];
      await w1.restart();
      watch(w1);
    }
  }, 60_000);

  it("room version 12 ids (the create event's hash) are drawn until the creator writes them", async () => {
    for (const [t, name] of [[main, "master"], [w1, "worker1"]] as const) {
      for (let i = 0; i < 3; i++) {
        const res = await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { room_version: "12" } });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        expect(t.hs.services.topology.eventWriterFor(res.json.room_id)).toBe(name);
      }
    }
  });

  it("a mis-configured pair (the writers listed in another order) refuses instead of looping", async () => {
    // worker1 now shards rooms over [worker1, master]: each process thinks the other writes every room.
    w1.config.stream_writers.events = ["worker1", "master"];
    await w1.restart();
    watch(w1);
    const before = sent.worker1.length;
    const res = await main.call("PUT", `${V3}/rooms/${enc(roomW)}/send/m.room.message/misconfigured`, { token: alice.access_token, body: { msgtype: "m.text", body: "misconfigured" } });
    expect(res.status).toBe(500);
    expect(res.json.errcode).toBe("M_UNKNOWN");
    expect(sent.worker1.length).toBe(before);
    expect((await bodies(main, alice, roomW)).includes("misconfigured")).toBe(false);
    w1.config.stream_writers.events = ["master", "worker1"];
    await w1.restart();
  }, 60_000);
});

clusterDescribe.each(pgOnly)("the writer's rate limit through the other process on %s", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ config: { rc_message: { per_second: 0.001, burst_count: 3 } } });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it("a 429 M_LIMIT_EXCEEDED comes back as the writer answered it, Retry-After included", async () => {
    const { main, w1 } = cluster;
    const alice = await registerUser(main, "alice");
    const roomW = await createRoom(w1, alice, {});
    const statuses: number[] = [];
    let limited: { status: number; json: any; headers: Headers } | undefined;
    for (let i = 0; i < 10 && !limited; i++) {
      const res = await main.call("PUT", `${V3}/rooms/${enc(roomW)}/send/m.room.message/rl-${i}`, { token: alice.access_token, body: { msgtype: "m.text", body: `m${i}` } });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(limited?.json.errcode).toBe("M_LIMIT_EXCEEDED");
    expect(limited!.json.retry_after_ms).toBeGreaterThan(0);
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(cluster.sent.master.filter((p) => p.includes(`/rooms/${enc(roomW)}/send/`))).toHaveLength(statuses.length);
  });
});
