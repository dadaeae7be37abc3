// A room shard's writer killed with SIGKILL during sends (README "Scaling out"): master runs in the test
// process, worker1 as operators run it (`weft start`, its own process), both on one PostgreSQL database.
// Sends into worker1's room go through master: while worker1 is gone each gets a clean retryable error
// (502 M_UNKNOWN with Retry-After, never a 500 without errcode), master's own room goes on working; once
// worker1 is back, every send retried with its transaction id lands, and nothing acknowledged is lost or
// doubled.
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TEST_DEFAULTS, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { clusterConfig, clusterLayout, type ClusterLayout } from "../helpers/cluster.ts";
import { topologyOf } from "../../src/domain/cluster/topology.ts";
import { parseConfig } from "../../src/config/config.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CLI = path.join(ROOT, "src/cli.ts");
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

interface Running {
  child: ChildProcess;
  exited: Promise<unknown>;
}

// One database for several processes: PostgreSQL (skipped only where PostgreSQL tests are, as test/storage does).
const pgOnly = ["postgres" as const];
const clusterDescribe = describe.runIf(backends().includes("postgres"));

clusterDescribe.each(pgOnly)("the writer of a shard killed during sends, on %s", () => {
  let layout: ClusterLayout & { drop(): Promise<void> };
  let main: TestServer;
  let worker: Running | undefined;
  let configPath: string;
  let alice: Session;
  const w1Base = () => `http://127.0.0.1:${layout.ports.worker1}`;

  const startWorker = async (): Promise<Running> => {
    // node itself runs the server (tsx as its loader), so the SIGKILL reaches the server.
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "start", "-c", configPath], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
    const running = { child, exited: new Promise((resolve) => child.once("exit", resolve)) };
    let gone = false;
    void running.exited.then(() => (gone = true));
    for (const deadline = Date.now() + 90_000; ; ) {
      if (gone) throw new Error("worker1 exited before answering");
      if (Date.now() > deadline) throw new Error("worker1 did not answer /versions");
      const ok = await fetch(`${w1Base()}/_matrix/client/versions`).then((r) => r.ok, () => false);
      if (ok) return running;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
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
    worker = await startWorker();
    alice = await registerUser(main, "alice");
  }, 180_000);
  afterAll(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill("SIGKILL");
      await worker.exited;
    }
    await main?.close();
    await layout?.drop();
  });

  it("clean retryable errors while it is gone, the other shard unaffected, nothing acknowledged lost once it is back", { timeout: 240_000 }, async () => {
    // worker1's room, made through worker1 (its id is one worker1 writes), and master's.
    const w1 = { call: (method: string, p: string, o: { token?: string; body?: unknown }) => fetch(`${w1Base()}${p}`, { method, headers: { authorization: `Bearer ${o.token}`, "content-type": "application/json" }, body: JSON.stringify(o.body) }).then(async (r) => ({ status: r.status, json: (await r.json()) as any })) };
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
          worker!.child.kill("SIGKILL");
          killed = worker!.exited;
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
    const joined = await main.call("GET", `${V3}/joined_rooms`, { token: alice.access_token });
    expect(joined.status).toBe(200);

    // Back: each send retried with its transaction id answers; the acknowledged ones with their first event.
    worker = await startWorker();
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
