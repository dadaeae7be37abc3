// Synapse's worker options (src/config/workers.ts) and the topology read from them
// (src/domain/cluster/topology.ts): defaults, Synapse's validation messages, and its sharding.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../../src/config/config.ts";
import { ClusterTopology, shardFor, topologyOf } from "../../../src/domain/cluster/topology.ts";
import { capabilities } from "../../../src/main.ts";
import { federationSending } from "../../../src/federation/sender/sender.ts";
import { federationSenderConsumer } from "../../../src/federation/sender/consumer.ts";
import { pushGateways } from "../../../src/domain/push/install.ts";
import { appServiceSenders } from "../../../src/domain/appservices/install.ts";
import { appServiceEphemeral } from "../../../src/domain/appservices/ephemeral.ts";
import { startMediaRetention } from "../../../src/domain/media/retention.ts";
import { renewalMailJob } from "../../../src/domain/accounts/account-validity.ts";
import { typingNotices } from "../../../src/domain/ephemeral/tasks.ts";
import { resumePartialStateRooms } from "../../../src/domain/federation/partial-state/resync.ts";

// Several processes need PostgreSQL (SQLite is refused with them: see the test at the end).
const postgres = { name: "psycopg2", args: { url: "postgresql://weft@localhost/weft" } };
const parse = (extra: Record<string, unknown>) => parseConfig({ server_name: "example.org", database: postgres, ...extra }, "/srv/weft");

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

const twoWriters = {
  instance_map: { main: { host: "127.0.0.1", port: 9093 }, event_persister1: { host: "127.0.0.1", port: 9094, tls: true }, event_persister2: { host: "127.0.0.1", port: 9095 } },
  redis: { enabled: true },
  worker_replication_secret: "a shared secret",
  stream_writers: { events: ["event_persister1", "event_persister2"], typing: "event_persister1" },
};

describe("worker options", () => {
  it("default to one process named master that does everything, with no warnings", () => {
    const c = parse({});
    expect(c.worker_name).toBe("master");
    expect(c.instance_map).toEqual({});
    for (const w of Object.values(c.stream_writers)) expect(w).toEqual(["master"]);
    expect(c.federation_sender_instances).toEqual(["master"]);
    expect(c.pusher_instances).toEqual(["master"]);
    expect(c.notify_appservices_from_worker).toEqual(["master"]);
    expect(c.run_background_tasks_on).toEqual(["master"]);
    expect(c.media_instance_running_background_jobs).toEqual(["master"]);
    expect(c.worker_lease_duration).toBe(60_000);
    expect(c.redis).toEqual({ enabled: false, host: "localhost", port: 6379, path: undefined, password: undefined, use_tls: false });
    expect(c.warnings).toEqual([]);
    const t = topologyOf(c);
    expect(t.instanceName).toBe("master");
    expect([t.runsBackgroundTasks, t.runsPushers, t.notifiesAppservices, t.runsFederationSender, t.runsMediaJobs, t.isWriter("events"), t.isWriter("typing")]).toEqual([true, true, true, true, true, true, true]);
    expect(t.eventWriterFor("!a:example.org")).toBe("master");
  });

  it("read instance_map (main as master), stream writers (a name or a list) and redis", () => {
    const c = parse({ ...twoWriters, worker_name: "event_persister1", redis: { enabled: true, host: "redis.internal", port: 6380, password: "pw", dbid: 2, use_tls: true } });
    expect(c.instance_map).toEqual({ master: { host: "127.0.0.1", port: 9093, tls: false }, event_persister1: { host: "127.0.0.1", port: 9094, tls: true }, event_persister2: { host: "127.0.0.1", port: 9095, tls: false } });
    expect(c.stream_writers.events).toEqual(["event_persister1", "event_persister2"]);
    expect(c.stream_writers.typing).toEqual(["event_persister1"]);
    expect(c.stream_writers.receipts).toEqual(["master"]);
    expect(c.redis).toEqual({ enabled: true, host: "redis.internal", port: 6380, path: undefined, password: "pw", dbid: 2, use_tls: true });
    expect(c.warnings).toEqual([]);
    const t = topologyOf(c);
    expect(t.instanceName).toBe("event_persister1");
    expect(t.isWriter("events")).toBe(true);
    expect(t.isWriter("typing")).toBe(true);
    expect(t.isWriter("receipts")).toBe(false);
    // Not the owner of the main process's duties.
    expect([t.runsBackgroundTasks, t.runsPushers, t.notifiesAppservices, t.runsFederationSender, t.runsMediaJobs]).toEqual([false, false, false, false, false]);
  });

  it("name the duties' instances", () => {
    const c = parse({
      ...twoWriters,
      worker_name: "worker1",
      instance_map: { ...twoWriters.instance_map, worker1: { host: "127.0.0.1", port: 9096 } },
      federation_sender_instances: ["worker1", "event_persister2"],
      pusher_instances: "worker1",
      notify_appservices_from_worker: "worker1",
      run_background_tasks_on: "worker1",
      media_instance_running_background_jobs: "worker1",
    });
    const t = topologyOf(c);
    expect([t.runsBackgroundTasks, t.runsPushers, t.notifiesAppservices, t.runsFederationSender, t.runsMediaJobs]).toEqual([true, true, true, true, true]);
    expect(t.isWriter("events")).toBe(false);
    // Several senders are candidates for one lease (Weft), not shards of the destinations (Synapse).
    expect(t.candidatesFor("federation_sender")).toEqual(["worker1", "event_persister2"]);
    expect(t.candidatesFor("pushers")).toEqual(["worker1"]);
  });

  it("take several candidates for the single-instance options, and the lease time", () => {
    const map = { ...twoWriters.instance_map, w1: { host: "127.0.0.1", port: 9101 } };
    const c = parse({ ...twoWriters, instance_map: map, run_background_tasks_on: ["w1", "event_persister1"], notify_appservices_from_worker: ["w1"], media_instance_running_background_jobs: "w1", worker_lease_duration: "5s" });
    expect([c.run_background_tasks_on, c.notify_appservices_from_worker, c.media_instance_running_background_jobs]).toEqual([["w1", "event_persister1"], ["w1"], ["w1"]]);
    expect(topologyOf(c).leaseTiming).toEqual({ leaseMs: 5000, renewMs: 1666 });
    expect(configError(() => parse({ run_background_tasks_on: [] })).message).toContain("run_background_tasks_on");
    expect(configError(() => parse({ pusher_instances: ["master", "master"] })).message).toContain("names an instance twice");
    expect(configError(() => parse({ worker_lease_duration: 10 })).message).toContain("worker_lease_duration");
  });

  it("refuse what Synapse refuses, naming the option", () => {
    let e = configError(() => parse({ stream_writers: { events: ["persister"] } }));
    expect(e.message).toContain("stream_writers.events");
    expect(e.message).toContain("Instance 'persister' is configured to write events but does not appear in `instance_map` config.");
    e = configError(() => parse({ ...twoWriters, stream_writers: { typing: ["event_persister1", "event_persister2"] } }));
    expect(e.message).toContain("Must only specify one instance to handle `typing` messages.");
    e = configError(() => parse({ stream_writers: { events: [] } }));
    expect(e.message).toContain("Must specify at least one instance to handle `events`.");
    e = configError(() => parse({ stream_writers: { push_rules: [] } }));
    expect(e.message).toContain("Must only specify one instance to handle `push` messages.");
    e = configError(() => parse({ stream_writers: { receipts: 3 } }));
    expect(e.message).toContain("stream_writers.receipts");
    e = configError(() => parse({ ...twoWriters, redis: { enabled: false } }));
    expect(e.message).toContain("redis.enabled");
    e = configError(() => parse({ worker_name: "worker1", instance_map: { worker1: { host: "127.0.0.1", port: 9096 } } }));
    expect(e.message).toContain("Please include 'main' in the `instance_map`");
    e = configError(() => parse({ instance_map: { main: { host: "127.0.0.1" } } }));
    expect(e.message).toContain("instance_map.main.port");
    e = configError(() => parse({ redis: { port: "x" } }));
    expect(e.message).toContain("redis.port");
  });

  it("require worker_replication_secret (or a file of it) when instance_map names more than one instance", () => {
    const { worker_replication_secret: _secret, ...noSecret } = twoWriters;
    let e = configError(() => parse(noSecret));
    expect(e.message).toContain("worker_replication_secret");
    expect(parse(twoWriters).worker_replication_secret).toBe("a shared secret");
    expect(topologyOf(parse(twoWriters)).replicationSecret).toBe("a shared secret");
    // One instance: no secret needed, and nothing is routed.
    expect(topologyOf(parse({ instance_map: { main: { host: "127.0.0.1", port: 9093 } } })).distributed).toBe(false);
    expect(topologyOf(parse(twoWriters)).distributed).toBe(true);
    const dir = mkdtempSync(path.join(tmpdir(), "weft-secret-"));
    try {
      writeFileSync(path.join(dir, "replication.secret"), "from a file\n");
      expect(parseConfig({ server_name: "example.org", ...noSecret, worker_replication_secret_path: "replication.secret" }, dir).worker_replication_secret).toBe("from a file");
      e = configError(() => parseConfig({ server_name: "example.org", ...twoWriters, worker_replication_secret_path: "replication.secret" }, dir));
      expect(e.message).toContain("mutually incompatible");
      e = configError(() => parseConfig({ server_name: "example.org", ...noSecret, worker_replication_secret_path: "missing.secret" }, dir));
      expect(e.message).toContain("worker_replication_secret_path");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("read redis.password_path (relative to the config's folder), not beside redis.password", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "weft-redis-"));
    try {
      writeFileSync(path.join(dir, "redis.pw"), "s3cret\n");
      expect(parseConfig({ server_name: "example.org", database: postgres, redis: { enabled: true, password_path: "redis.pw" } }, dir).redis.password).toBe("s3cret");
      let e = configError(() => parseConfig({ server_name: "example.org", redis: { password: "x", password_path: "redis.pw" } }, dir));
      expect(e.message).toContain("You have configured both `redis.password` and `redis.password_path`.");
      e = configError(() => parseConfig({ server_name: "example.org", redis: { password_path: "missing.pw" } }, dir));
      expect(e.message).toContain("redis.password_path");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("warn of unknown keys in their sections", () => {
    const c = parse({ redis: { enabled: false, hots: "x" }, stream_writers: { event: "master" } });
    expect(c.warnings.join("\n")).toContain("redis.hots");
    expect(c.warnings.join("\n")).toContain("stream_writers.event");
  });
});

describe("sharding", () => {
  it("is Synapse's: sha256 of the key, little-endian, modulo the instances", () => {
    const instances = ["a", "b", "c"];
    for (const key of ["!room:example.org", "remote.example", "", "ü"]) {
      const n = BigInt("0x" + Buffer.from(createHash("sha256").update(key).digest()).reverse().toString("hex"));
      expect(shardFor(instances, key)).toBe(instances[Number(n % 3n)]);
    }
  });

  it("is stable and uses every events writer", () => {
    const c = parse({ ...twoWriters, instance_map: { ...twoWriters.instance_map, event_persister3: { host: "127.0.0.1", port: 9097 } }, stream_writers: { events: ["event_persister1", "event_persister2", "event_persister3"] } });
    const t = topologyOf(c);
    const again = topologyOf(parse({ ...twoWriters, instance_map: { ...twoWriters.instance_map, event_persister3: { host: "127.0.0.1", port: 9097 } }, stream_writers: { events: ["event_persister1", "event_persister2", "event_persister3"] } }));
    const counts = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const room = `!room${i}:example.org`;
      const w = t.eventWriterFor(room);
      expect(again.eventWriterFor(room)).toBe(w);
      counts.set(w, (counts.get(w) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(["event_persister1", "event_persister2", "event_persister3"]);
    for (const n of counts.values()) expect(n).toBeGreaterThan(50);
  });

  it("with one instance, answers it without hashing", () => {
    expect(shardFor(["only"], "anything")).toBe("only");
    expect(ClusterTopology.single().eventWriterFor("!x:y")).toBe("master");
    expect(() => shardFor([], "k")).toThrow();
  });
});

describe("background work starts only on its configured owner", () => {
  const duties = { federationSending, pushGateways, appServiceSenders, appServiceEphemeral, startMediaRetention, renewalMailJob, typingNotices };
  const started = (c: ReturnType<typeof parse>) => {
    const ext = capabilities({ config: c });
    const background = [...ext.background, ...ext.leased.flatMap((w) => w.background)];
    const consumers = [...ext.consumers, ...ext.leased.flatMap((w) => w.consumers)];
    return { tasks: Object.entries(duties).filter(([, task]) => background.includes(task)).map(([name]) => name), federationConsumer: consumers.includes(federationSenderConsumer), resume: background.includes(resumePartialStateRooms) };
  };

  it("all of it in the single process (no worker options), as before", () => {
    expect(started(parse({}))).toEqual({ tasks: Object.keys(duties), federationConsumer: true, resume: true });
    const none = capabilities({});
    const all = [...none.background, ...none.leased.flatMap((w) => w.background)];
    expect(Object.values(duties).every((task) => all.includes(task))).toBe(true);
    // One candidate each (this process): held without a lease.
    expect(none.leased.map((w) => [w.name, w.candidates])).toEqual([["federation_sender", ["master"]], ["pushers", ["master"]], ["media_jobs", ["master"]], ["background_tasks", ["master"]], ["appservices", ["master"]]]);
  });

  it("none of it on an instance the options do not name", () => {
    expect(started(parse({ ...twoWriters, worker_name: "event_persister2" }))).toEqual({ tasks: [], federationConsumer: false, resume: true });
  });

  it("each piece on the instance named for it", () => {
    const map = { ...twoWriters.instance_map, w1: { host: "127.0.0.1", port: 9101 } };
    const options = { ...twoWriters, instance_map: map, worker_name: "w1" };
    expect(started(parse({ ...options, pusher_instances: ["w1"] })).tasks).toEqual(["pushGateways"]);
    expect(started(parse({ ...options, federation_sender_instances: ["w1"] }))).toMatchObject({ tasks: ["federationSending"], federationConsumer: true });
    expect(started(parse({ ...options, notify_appservices_from_worker: "w1" })).tasks).toEqual(["appServiceSenders", "appServiceEphemeral"]);
    expect(started(parse({ ...options, media_instance_running_background_jobs: "w1" })).tasks).toEqual(["startMediaRetention"]);
    expect(started(parse({ ...options, run_background_tasks_on: "w1" })).tasks).toEqual(["renewalMailJob"]);
    expect(started(parse({ ...options, stream_writers: { ...twoWriters.stream_writers, typing: "w1" } })).tasks).toEqual(["typingNotices"]);
    // The main process gives up what it hands over.
    expect(started(parse({ ...options, worker_name: undefined, pusher_instances: ["w1"], federation_sender_instances: [] })).tasks).not.toContain("pushGateways");
    expect(started(parse({ ...options, worker_name: undefined, federation_sender_instances: [] })).federationConsumer).toBe(false);
  });

  it("refuse several processes on SQLite (one file, one process), with a message naming PostgreSQL", () => {
    const sqlite = { name: "sqlite3", args: { database: "weft.db" } };
    let e = configError(() => parseConfig({ server_name: "example.org", database: sqlite, redis: { enabled: true } }, "/srv/weft"));
    expect(e.message).toContain("redis.enabled");
    expect(e.message).toContain("PostgreSQL");
    e = configError(() => parseConfig({ server_name: "example.org", database: sqlite, ...twoWriters }, "/srv/weft"));
    expect(e.message).toContain("PostgreSQL");
    e = configError(() => parseConfig({ server_name: "example.org", database: sqlite, worker_name: "worker1", instance_map: { main: { host: "127.0.0.1", port: 9100 } }, redis: { enabled: false } }, "/srv/weft"));
    expect(e.message).toContain("PostgreSQL");
    // One process on SQLite stays as it was.
    expect(parseConfig({ server_name: "example.org", database: sqlite }, "/srv/weft").redis.enabled).toBe(false);
  });
});
