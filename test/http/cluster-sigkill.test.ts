// A room shard's writer killed with SIGKILL during sends (README "Scaling out"): master runs in the test
// process, worker1 as operators run it (`weft start`, its own process), both on one PostgreSQL database.
// Sends into worker1's room go through master: while worker1 is gone each gets a clean retryable error
// (502 M_UNKNOWN with Retry-After, never a 500 without errcode), master's own room goes on working; once
// worker1 is back, every send retried with its transaction id lands, and nothing acknowledged is lost or
// doubled.
import { writeFileSync } from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TEST_DEFAULTS, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { clusterConfig, clusterLayout, type ClusterLayout } from "../helpers/cluster.ts";
import { WeftProcess } from "../helpers/cluster-processes.ts";
import { topologyOf } from "../../src/domain/cluster/topology.ts";
import { parseConfig } from "../../src/config/config.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;


// One database for several processes: PostgreSQL (skipped only where PostgreSQL tests are, as test/storage does).
const pgOnly = ["postgres" as const];
const clusterDescribe = describe.runIf(backends().includes("postgres"));

clusterDescribe.each(pgOnly)("the writer of a shard killed during sends, on %s", () => {
  let layout: ClusterLayout & { drop(): Promise<void> };
  let main: TestServer;
  let worker: WeftProcess;
  let configPath: string;
  let alice: Session;

  const send = (roomId: string, txn: string, body: string) =>
    main.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });

  beforeAll(async () => {
    layout = await clusterLayout();
    main = await startTestServer({ backend: "postgres", port: layout.ports.master, config: clusterConfig(layout, "master") });
    const w1Config = {
      ...TEST_DEFAULTS,
      server_name: "weft.test",
      listeners: [{ port: layout.ports.worker1, bind_addresses: ["127.0.0.1"], type: "http", resources: [{ names: ["client", "federation"] }] }],
      media_store_path: path.join(layout.keyDir, "media"),
      ...clusterConfig(layout, "worker1"),
    };
    configPath = path.join(layout.keyDir, "worker1.yaml");
    writeFileSync(configPath, YAML.stringify(w1Config));
    // worker1 is a real process (node itself, tsx as its loader), so the SIGKILL reaches the server.
    worker = new WeftProcess("worker1", layout.ports.worker1, configPath);
    await worker.start();
    alice = await registerUser(main, "alice");
  }, 180_000);
  afterAll(async () => {
    await worker?.kill("SIGKILL");
    await main?.close();
    await layout?.drop();
  });

  it("clean retryable errors while it is gone, the other shard unaffected, nothing acknowledged lost once it is back", { timeout: 240_000 }, async () => {
    // worker1's room, made through worker1 (its id is one worker1 writes), and master's.
    const w1 = worker.client();
    const created = await w1.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "public_chat" } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const roomW = created.json.room_id as string;
    expect(topologyOf(parseConfig({ server_name: "weft.test", ...clusterConfig(layout, "worker1") }, layout.keyDir)).eventWriterFor(roomW)).toBe("worker1");
    const roomM = await createRoom(main, alice, { preset: "public_chat" });
    expect(main.hs.services.topology.eventWriterFor(roomM)).toBe("master");

    // A burst of sends into worker1's room through master; worker1 killed once the first are answered.
    const N = 40;
    const answers: ({ status: number; json: any; retryAfter: string | null } | undefined)[] = new Array(N);
    let answered = 0;
    let killed: Promise<unknown> | undefined;
    const sends = Array.from({ length: N }, (_, i) =>
      send(roomW, `burst-${i}`, `burst ${i}`).then((res) => {
        answers[i] = { status: res.status, json: res.json, retryAfter: res.headers.get("retry-after") };
        if (++answered === 5) {
          killed = worker.kill("SIGKILL");
        }
      }),
    );
    await Promise.all(sends);
    await killed;
    expect(answers.filter((a) => a!.status === 200).length).toBeGreaterThanOrEqual(5);
    for (const a of answers) {
      expect([200, 502], JSON.stringify(a)).toContain(a!.status);
      if (a!.status === 502) {
        expect(a!.json).toEqual({ errcode: "M_UNKNOWN", error: "Failed to talk to worker1 process" });
        expect(a!.retryAfter).toBe("1");
      }
    }
    // Gone: worker1's room answers the retryable error, master's room works.
    const down = await send(roomW, "while-down", "while down");
    expect(down.status).toBe(502);
    expect(down.json.errcode).toBe("M_UNKNOWN");
    expect(down.headers.get("retry-after")).toBe("1");
    const mine = await send(roomM, "during", "during");
    expect(mine.status).toBe(200);
    // Readers on master are not held back by the dead writer's last position: once its liveness lock is
    // gone (PostgreSQL closed its connection), master's own room reads and syncs on (cluster/liveness.ts).
    const stored = (await main.hs.services.rooms.events.getMany([mine.json.event_id as string])).get(mine.json.event_id as string)!;
    const covered = new Promise<boolean>((resolve) => main.hs.services.rooms.events.streamIds.whenPersisted(stored.streamOrdering, () => resolve(true)));
    const deadline = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000).unref());
    expect(await Promise.race([covered, deadline]), "master's position passes its own event while worker1 is dead").toBe(true);
    const page = await main.call("GET", `${V3}/rooms/${enc(roomM)}/messages?dir=b&limit=5`, { token: alice.access_token });
    expect((page.json.chunk as { event_id: string }[]).map((e) => e.event_id)).toContain(mine.json.event_id);
    const synced = await main.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
    expect(JSON.stringify(synced.json.rooms?.join?.[roomM]?.timeline ?? {})).toContain(mine.json.event_id as string);
    const joined = await main.call("GET", `${V3}/joined_rooms`, { token: alice.access_token });
    expect(joined.status).toBe(200);

    // Back: each send retried with its transaction id answers; the acknowledged ones with their first event.
    await worker.start();
    const ids = new Map<string, string>();
    for (let i = 0; i < N; i++) {
      const again = await send(roomW, `burst-${i}`, `burst ${i}`);
      expect(again.status, JSON.stringify(again.json)).toBe(200);
      if (answers[i]!.status === 200) expect(again.json.event_id).toBe(answers[i]!.json.event_id);
      ids.set(`burst ${i}`, again.json.event_id);
    }
    expect((await send(roomW, "while-down", "while down")).status).toBe(200);
    const res = await w1.call("GET", `${V3}/rooms/${enc(roomW)}/messages?dir=b&limit=200`, { token: alice.access_token });
    expect(res.status).toBe(200);
    const bodies = (res.json.chunk as { type: string; event_id: string; content: { body: string } }[]).filter((e) => e.type === "m.room.message");
    for (let i = 0; i < N; i++) expect(bodies.filter((e) => e.content.body === `burst ${i}`).map((e) => e.event_id)).toEqual([ids.get(`burst ${i}`)]);
    expect(bodies.filter((e) => e.content.body === "while down")).toHaveLength(1);
  });
});
