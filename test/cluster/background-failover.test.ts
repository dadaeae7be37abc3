// Exactly-once background work across processes (src/domain/cluster/leased-work.ts): two real Weft
// processes (`node src/cli.ts start`, each its own config) on one PostgreSQL database, both candidates
// for the pushers, the application-service senders, the server-wide tasks, the media jobs and the
// federation sender (`pusher_instances: [master, w2]` ...), with a lease of 2 s. Counted from the outside,
// at a real push gateway, a real application service and a federation peer (test/helpers):
//  - only the holder of each lease runs its work: every notification and transaction comes from one
//    process, none twice;
//  - SIGKILL of the holder while messages flow: the other takes every lease over once it expired and
//    resumes from the stored positions — every acknowledged message reaches the application service and
//    the federation peer exactly once (their transactions keep their txn id on every retry, and a
//    receiver dedupes by it, as the spec says)
//    and the push gateway at least once, at most the one notification in flight at the kill twice (a
//    gateway has no txn id to dedupe on: README "Scaling out");
//  - the killed process restarted does not take the leases back while the other holds them, and nothing
//    is delivered again; a clean stop hands them over at once;
//  - a holder whose leases were taken behind its back stops, and resumes when it takes them back.
// Sends go to the process that holds the leases: without replication (Redis, another change) a process
// wakes its pushers only for its own commits; the stored positions are what this test is about.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, freePort, makePgDatabase, TEST_DEFAULTS } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { RedisServer } from "../helpers/redis.ts";
import { WeftProcess } from "../helpers/cluster-processes.ts";
import { createRoom } from "../helpers/rooms.ts";
import { RecordingGateway } from "../helpers/push-gateway.ts";
import { RecordingAppService, writeRegistration } from "../helpers/appservice.ts";
import { eventually, startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { signedCall, signPdu } from "../helpers/by-hand.ts";
import { loadOrCreateSigningKeys } from "../../src/domain/signing-key.ts";
import type { Pdu } from "../../src/domain/events/types.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const LEASES = ["appservices", "background_tasks", "federation_sender", "media_jobs", "pushers"];
const LEASE_MS = 2000;

for (const backend of backends().filter((b) => b === "postgres")) {
  describe(`background work on two processes sharing ${backend}`, () => {
    let dir: string;
    let db: { url: string; drop(): Promise<void> };
    let pgc: pg.Client;
    let gateway: RecordingGateway;
    let service: RecordingAppService;
    let peer: RecordingPeer;
    let redis: RedisServer;
    let main: WeftProcess;
    let w2: WeftProcess;
    let alice: Session;
    let bob: Session;
    /** Rooms sharded over both processes (each writes the events of its own): sends through a process go to
     *  its room, so they still land while the other process is down. */
    let roomA: string;
    let roomB: string;
    /** Every message acknowledged to its sender: event id → body. */
    const acknowledged = new Map<string, string>();
    /** The room of each acknowledged message. */
    const ackRoom = new Map<string, string>();

    const holders = async () => {
      const r = await pgc.query<{ name: string; holder_instance: string }>("SELECT name, holder_instance FROM worker_leases ORDER BY name");
      return Object.fromEntries(r.rows.map((x) => [x.name, x.holder_instance]));
    };
    const allHeldBy = (instance: string) => Object.fromEntries(LEASES.map((n) => [n, instance]));
    /** Notifications received per event id (of the acknowledged messages). */
    const pushCounts = () => {
      const counts = new Map<string, number>();
      for (const n of gateway.events()) if (acknowledged.has(n.event_id)) counts.set(n.event_id, (counts.get(n.event_id) ?? 0) + 1);
      return counts;
    };
    /** Events the application service accepted per event id, over its distinct transactions. */
    const serviceCounts = () => {
      const counts = new Map<string, number>();
      for (const e of service.events()) if (acknowledged.has(e.event_id)) counts.set(e.event_id, (counts.get(e.event_id) ?? 0) + 1);
      return counts;
    };
    /** PDUs the federation peer accepted per event id, over its distinct txn ids (a receiver dedupes by them). */
    const federationCounts = () => {
      const counts = new Map<string, number>();
      const seen = new Set<string>();
      for (const t of peer.transactions) {
        if (seen.has(t.txnId)) continue;
        seen.add(t.txnId);
        for (const p of t.pdus) {
          const id = pduIds.get(p) ?? "";
          if (acknowledged.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
        }
      }
      return counts;
    };
    /** The event ids of the PDUs the peer received (room version 10 rooms: computed from the PDU). */
    const pduIds = new WeakMap<Pdu, string>();
    const delivered = () => {
      for (const t of peer.transactions) for (const p of t.pdus) if (!pduIds.has(p)) pduIds.set(p, eventIdOf(p, roomVersion));
      const fed = federationCounts();
      return [...acknowledged.keys()].every((id) => pushCounts().has(id) && serviceCounts().has(id) && fed.has(id));
    };
    let roomVersion = "10";

    async function send(via: WeftProcess, body: string): Promise<string | undefined> {
      const roomId = via === main ? roomA : roomB;
      const res = await via.client().call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${enc(body)}`, { token: bob.access_token, body: { msgtype: "m.text", body } }).catch(() => undefined);
      if (res?.status !== 200) return undefined;
      acknowledged.set(res.json.event_id as string, body);
      ackRoom.set(res.json.event_id as string, roomId);
      return res.json.event_id as string;
    }

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "weft-leases-"));
      db = await makePgDatabase();
      pgc = new pg.Client({ connectionString: db.url });
      await pgc.connect();
      gateway = await new RecordingGateway().start();
      service = await new RecordingAppService("bridge-hs").start();
      peer = await startRecordingPeer();
      const registration = writeRegistration(service.registration({ id: "bridge", as_token: "bridge-as", sender_localpart: "bridgebot", namespaces: { rooms: [{ exclusive: false, regex: ".*" }] } }));
      const [mainPort, w2Port] = [await freePort(), await freePort()];
      // Replication between the two (a real redis-server): each holder is woken by the other's commits too.
      redis = await RedisServer.start();
      const redisPort = redis.port;
      const candidates = ["master", "w2"];
      const config = (port: number, extra: Record<string, unknown>) => ({
        ...TEST_DEFAULTS,
        log_level: "info",
        server_name: "cluster.test",
        public_baseurl: `http://127.0.0.1:${mainPort}/`,
        database: { name: "psycopg2", args: { url: db.url } },
        signing_key_path: path.join(dir, "signing.key"),
        listeners: [{ port, type: "http", bind_addresses: ["127.0.0.1"], resources: [{ names: ["client", "federation"] }] }],
        // The federation peer: an IP literal on loopback, with a self-signed certificate.
        ip_range_whitelist: ["127.0.0.0/8"],
        federation_verify_certificates: false,
        trusted_key_servers: [],
        app_service_config_files: [registration],
        instance_map: { main: { host: "127.0.0.1", port: mainPort }, w2: { host: "127.0.0.1", port: w2Port } },
        stream_writers: { events: candidates },
        worker_replication_secret: "failover-test-secret",
        redis: { enabled: true, host: "127.0.0.1", port: redisPort },
        pusher_instances: candidates,
        notify_appservices_from_worker: candidates,
        run_background_tasks_on: candidates,
        media_instance_running_background_jobs: candidates,
        federation_sender_instances: candidates,
        worker_lease_duration: `${LEASE_MS}ms`,
        // Delayed events (MSC4140): a server-wide task whose sends are seen from the outside.
        max_event_delay_duration: "1h",
        experimental_features: { msc4140_max_delayed_events_per_user: 10 },
        rc_delayed_event_mgmt: { per_second: 1000, burst_count: 1000 },
        ...extra,
      });
      // JSON is YAML: each process reads its own homeserver.yaml.
      const write = (name: string, c: object) => {
        const file = path.join(dir, `${name}.yaml`);
        writeFileSync(file, JSON.stringify(c, null, 2));
        return file;
      };
      main = new WeftProcess("master", mainPort, write("master", config(mainPort, {})));
      w2 = new WeftProcess("w2", w2Port, write("w2", config(w2Port, { worker_name: "w2" })));
      // The first one makes the signing key and takes every lease; the second finds them held.
      await main.start();
      await w2.start();
      alice = await registerUser(main.client(), "alice");
      bob = await registerUser(main.client(), "bob");
      // Each process makes the room it writes (an events writer draws room ids it owns).
      roomA = await createRoom(main.client(), alice, { preset: "public_chat" });
      roomB = await createRoom(w2.client(), alice, { preset: "public_chat" });
      for (const [via, roomId] of [[main, roomA], [w2, roomB]] as const)
        expect((await via.client().call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
      // A user of the federation peer joins through make_join / send_join: the room's events go to the peer.
      peer.trust("cluster.test", (await loadOrCreateSigningKeys(path.join(dir, "signing.key")))[0]!);
      const signer = { serverName: peer.serverName, key: peer.signingKey };
      const to = { baseUrl: main.base, serverName: "cluster.test" };
      const pat = peer.user("pat");
      for (const roomId of [roomA, roomB]) {
        const made = await signedCall(signer, to, "GET", `/_matrix/federation/v1/make_join/${enc(roomId)}/${enc(pat)}?ver=10&ver=11`);
        expect(made.status, JSON.stringify(made.json)).toBe(200);
        roomVersion = made.json.room_version as string;
        const join = signPdu({ ...made.json.event, origin_server_ts: Date.now() } as Pdu, roomVersion, signer);
        const joined = await signedCall(signer, to, "PUT", `/_matrix/federation/v2/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu);
        expect(joined.status, JSON.stringify(joined.json)).toBe(200);
      }
      const pusher = await main.client().call("POST", `${V3}/pushers/set`, {
        token: alice.access_token,
        body: { kind: "http", app_id: "cluster.test.app", pushkey: "alice-key", app_display_name: "App", device_display_name: "Phone", lang: "en", data: { url: gateway.url } },
      });
      expect(pusher.status, JSON.stringify(pusher.json)).toBe(200);
    }, 240_000);

    afterAll(async () => {
      for (const p of [main, w2]) if (p?.running) await p.kill("SIGKILL");
      await pgc?.end();
      await db?.drop();
      await redis?.kill();
      await gateway?.stop();
      await service?.stop();
      await peer?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("only the holder of each lease runs its work: each message pushed, sent to the service and to the peer once", async () => {
      expect(await holders()).toEqual(allHeldBy("master"));
      for (let i = 0; i < 10; i++) expect(await send(main, `before ${i}`)).toBeDefined();
      await eventually(delivered, "the first messages at the gateway and the service", 30_000);
      expect([...pushCounts().values()].every((n) => n === 1)).toBe(true);
      expect([...serviceCounts().values()].every((n) => n === 1)).toBe(true);
      expect(pushCounts().size).toBe(10);
      expect([...federationCounts().values()]).toEqual(Array(10).fill(1));
      // w2 started no work and kept trying: its renewal interval passed several times meanwhile.
      expect(w2.log).not.toContain("lease acquired");
      expect(main.log.match(/lease acquired/g)?.length).toBe(LEASES.length);
      expect(await holders()).toEqual(allHeldBy("master"));
      expect(gateway.invalid).toEqual([]);
      expect(service.invalid).toEqual([]);
    }, 60_000);

    it("SIGKILL of the holder while messages flow: the other takes over after expiry and misses nothing", async () => {
      // Delayed messages due after the kill: the server-wide tasks' new holder sends them, once each.
      for (let i = 0; i < 3; i++) {
        const r = await w2.client().call("PUT", `${V3}/rooms/${enc(roomB)}/send/m.room.message/delayed-${i}?org.matrix.msc4140.delay=6000`, { token: alice.access_token, body: { msgtype: "m.text", body: `delayed ${i}` } });
        expect(r.status, JSON.stringify(r.json)).toBe(200);
      }
      // Messages keep going to the holder; the kill lands while they do.
      const flowing = (async () => {
        for (let i = 0; ; i++) if (!(await send(main, `during ${i}`))) return i;
      })();
      await eventually(() => gateway.events().filter((n) => acknowledged.get(n.event_id)?.startsWith("during")).length >= 5, "pushes of the flowing messages", 30_000);
      const killedAt = Date.now();
      await main.kill("SIGKILL");
      await flowing;
      expect(acknowledged.size).toBeGreaterThanOrEqual(15); // 10 before, at least 5 pushed before the kill
      // Taken over once the lease expired (never before: no release on a kill).
      await eventually(async () => JSON.stringify(await holders()) === JSON.stringify(allHeldBy("w2")), "w2 to hold every lease", 30_000);
      // (The lease was last renewed up to a third of its time before the kill.)
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_MS / 2);
      await eventually(() => w2.log.match(/lease acquired/g)?.length === LEASES.length, "w2's log of its acquisitions", 10_000);
      // Messages now go to w2; what the killed holder left undone is done from the stored positions.
      for (let i = 0; i < 10; i++) expect(await send(w2, `after ${i}`)).toBeDefined();
      await eventually(delivered, "every acknowledged message at the gateway and the service", 60_000);
      // The application service: every message exactly once (a resent transaction keeps its txn id).
      const sc = serviceCounts();
      expect(sc.size).toBe(acknowledged.size);
      expect([...sc.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      // The federation peer: every message once over its distinct txn ids (a retry keeps its txn id).
      const fc = federationCounts();
      expect(fc.size).toBe(acknowledged.size);
      expect([...fc.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      // The push gateway: none skipped; sent twice at most the one notification in flight at the kill.
      const pc = pushCounts();
      expect(pc.size).toBe(acknowledged.size);
      expect([...pc.values()].filter((n) => n > 2)).toEqual([]);
      expect([...pc.values()].filter((n) => n === 2).length).toBeLessThanOrEqual(1);
      // In order at the service, as sent (a message the killed process committed without answering its
      // sender may be there too: acknowledged or not, none is lost).
      const ackBodies = new Set(acknowledged.values());
      for (const roomId of [roomA, roomB])
        expect(service.bodies(roomId).filter((b) => ackBodies.has(b))).toEqual([...acknowledged].filter(([id]) => ackRoom.get(id) === roomId).map(([, b]) => b));
      // The delayed messages, sent by w2 once they fell due: once each.
      await service.until(() => [0, 1, 2].every((i) => service.bodies(roomB).includes(`delayed ${i}`)), 30_000, "the delayed messages");
      expect(service.bodies(roomB).filter((b) => b.startsWith("delayed "))).toEqual(["delayed 0", "delayed 1", "delayed 2"]);
    }, 120_000);

    it("the killed process restarted does not take the leases back, and nothing is delivered again", async () => {
      const pushesBefore = gateway.received.length;
      const serviceBefore = service.transactions.length;
      const federationBefore = peer.attempts;
      const countsBefore = pushCounts();
      await main.start();
      const restartedAt = (await pgc.query<{ t: string }>("SELECT (FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000))::bigint AS t")).rows[0]!.t;
      // Two lease times of renewals by w2 later, still w2's.
      await eventually(async () => (await pgc.query("SELECT 1 FROM worker_leases WHERE name = 'pushers' AND renewed_at > $1::bigint + $2::bigint", [restartedAt, 2 * LEASE_MS])).rowCount === 1, "w2's renewals past two lease times", 30_000);
      expect(await holders()).toEqual(allHeldBy("w2"));
      expect(main.log).not.toContain("lease acquired");
      expect(gateway.received.length).toBe(pushesBefore);
      expect(service.transactions.length).toBe(serviceBefore);
      expect(peer.attempts).toBe(federationBefore);
      // New messages through the holder: each delivered once, and the old ones not again.
      for (let i = 0; i < 5; i++) expect(await send(w2, `restarted ${i}`)).toBeDefined();
      await eventually(delivered, "the new messages", 30_000);
      const pc = pushCounts();
      for (const [id, n] of countsBefore) expect(pc.get(id)).toBe(n);
      expect([...pc.entries()].filter(([id]) => acknowledged.get(id)!.startsWith("restarted")).map(([, n]) => n)).toEqual([1, 1, 1, 1, 1]);
      expect([...serviceCounts().values()].every((n) => n === 1)).toBe(true);
      expect([...federationCounts().values()].every((n) => n === 1)).toBe(true);
      expect(service.bodies(roomB).filter((b) => b.startsWith("delayed "))).toEqual(["delayed 0", "delayed 1", "delayed 2"]);
      // A clean stop of the holder releases its leases: the restarted process takes them at its next try.
      await w2.kill("SIGTERM");
      expect((await w2.exited).code).toBe(0);
      await eventually(async () => JSON.stringify(await holders()) === JSON.stringify(allHeldBy("master")), "master to take the released leases", 30_000);
      for (let i = 0; i < 3; i++) expect(await send(main, `handed back ${i}`)).toBeDefined();
      await eventually(delivered, "the messages after the hand-back", 30_000);
      expect([...serviceCounts().values()].every((n) => n === 1)).toBe(true);
      expect([...pushCounts().entries()].filter(([id]) => acknowledged.get(id)!.startsWith("handed back")).map(([, n]) => n)).toEqual([1, 1, 1]);
    }, 180_000);

    it("a holder whose leases were taken behind its back stops the work, and starts it again when it takes them back", async () => {
      expect(await holders()).toEqual(allHeldBy("master"));
      const acquiredBefore = main.log.match(/lease acquired/g)?.length ?? 0;
      // Another holder (as after an expiry while master was paused), for one lease time.
      await pgc.query("UPDATE worker_leases SET holder_instance = 'elsewhere', token = 'stolen', expires_at = (FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000))::bigint + $1::bigint", [LEASE_MS]);
      await eventually(() => (main.log.match(/lease lost/g)?.length ?? 0) === LEASES.length, "master to stop every piece", 20_000);
      const pushesBefore = gateway.received.length;
      const id = await send(main, "while stolen");
      expect(id).toBeDefined();
      // Back to master once the other lease expired: its work starts again and catches up, once.
      await eventually(() => (main.log.match(/lease acquired/g)?.length ?? 0) === acquiredBefore + LEASES.length, "master to take every lease again", 20_000);
      expect(await holders()).toEqual(allHeldBy("master"));
      for (let i = 0; i < 3; i++) expect(await send(main, `taken back ${i}`)).toBeDefined();
      await eventually(delivered, "the messages sent while and after the leases were away", 30_000);
      expect(gateway.received.length).toBeGreaterThan(pushesBefore);
      expect([...pushCounts().entries()].filter(([eid]) => /^(while stolen|taken back)/.test(acknowledged.get(eid)!)).map(([, n]) => n)).toEqual([1, 1, 1, 1]);
      expect([...serviceCounts().values()].every((n) => n === 1)).toBe(true);
      await main.kill("SIGTERM");
      expect((await main.exited).code).toBe(0);
    }, 120_000);
  });
}
