// Who writes what, and who runs which background work, as this process reads its config (src/config/
// workers.ts, Synapse's worker options): the one map on `Services` that every writer and every starter of
// background work asks. Shards are chosen as Synapse chooses them (synapse/config/_base.py
// `ShardedWorkerHandlingConfig`): the SHA-256 of the room id, read as a little-endian integer, modulo the
// number of instances. Background work is not sharded: each piece has its candidate instances and runs on
// one of them at a time (cluster/leased-work.ts). With no worker options every answer is "this process".
import { createHash } from "node:crypto";
import { DEFAULT_LEASE_MS, MAIN_PROCESS, WRITER_STREAMS, type WorkersConfig, type WriterStream } from "../../config/workers.ts";
import type { LeaseTiming } from "./leases.ts";

/** The pieces of background work the worker options place (cluster/leased-work.ts runs them). */
export type BackgroundDuty = "federation_sender" | "pushers" | "appservices" | "background_tasks" | "media_jobs";

/** The instance of `instances` that handles `key` (Synapse's sharding: sha256, little-endian, modulo). */
export function shardFor(instances: readonly string[], key: string): string {
  if (instances.length === 1) return instances[0]!;
  if (instances.length === 0) throw new Error("shardFor: no instances");
  const digest = createHash("sha256").update(key, "utf8").digest();
  let n = 0n;
  for (let i = digest.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(digest[i]!);
  return instances[Number(n % BigInt(instances.length))]!;
}

export class ClusterTopology {
  /** This process's instance name ("master" unless `worker_name` says otherwise). */
  readonly instanceName: string;
  /** The leases on background work with several candidates: their length, and how often they are renewed. */
  readonly leaseTiming: LeaseTiming;

  /**
   * Whether some stream is written by another instance, or instance_map names another instance (which
   * may forward its writes here: the master of workers that write nothing): only then are writes routed
   * (cluster/write-routes.ts) and forwarded requests taken. A single process, or a config naming only this
   * one, never looks a route up.
   */
  readonly distributed: boolean;

  constructor(private readonly c: WorkersConfig) {
    this.instanceName = c.worker_name;
    const name = (n: string) => (n === "main" ? "master" : n);
    this.distributed =
      WRITER_STREAMS.some((stream) => c.stream_writers[stream].some((w) => w !== c.worker_name)) ||
      Object.keys(c.instance_map).some((n) => name(n) !== name(c.worker_name));
    const leaseMs = c.worker_lease_duration ?? DEFAULT_LEASE_MS;
    this.leaseTiming = { leaseMs, renewMs: Math.max(100, Math.floor(leaseMs / 3)) };
  }

  /** The secret internal requests between processes carry (`worker_replication_secret`). */
  get replicationSecret(): string | undefined {
    return this.c.worker_replication_secret;
  }

  /** The instances that may run a piece of background work (one at a time: cluster/leased-work.ts). */
  candidatesFor(duty: BackgroundDuty): readonly string[] {
    switch (duty) {
      case "federation_sender":
        return this.c.federation_sender_instances;
      case "pushers":
        return this.c.pusher_instances;
      case "appservices":
        return this.c.notify_appservices_from_worker;
      case "background_tasks":
        return this.c.run_background_tasks_on;
      case "media_jobs":
        return this.c.media_instance_running_background_jobs;
    }
  }

  /** The default: one process that owns every writer and every piece of background work. */
  static single(): ClusterTopology {
    const writers = { events: [MAIN_PROCESS], typing: [MAIN_PROCESS], to_device: [MAIN_PROCESS], account_data: [MAIN_PROCESS], receipts: [MAIN_PROCESS], presence: [MAIN_PROCESS], push_rules: [MAIN_PROCESS], device_lists: [MAIN_PROCESS] };
    return new ClusterTopology({
      worker_name: MAIN_PROCESS,
      instance_map: {},
      stream_writers: writers,
      federation_sender_instances: [MAIN_PROCESS],
      pusher_instances: [MAIN_PROCESS],
      notify_appservices_from_worker: [MAIN_PROCESS],
      run_background_tasks_on: [MAIN_PROCESS],
      media_instance_running_background_jobs: [MAIN_PROCESS],
      worker_lease_duration: DEFAULT_LEASE_MS,
      redis: { enabled: false, host: "localhost", port: 6379, use_tls: false },
    });
  }

  /** The instances that write `stream`. */
  writersOf(stream: WriterStream): readonly string[] {
    return this.c.stream_writers[stream];
  }

  /** Whether this process is one of `stream`'s writers. */
  isWriter(stream: WriterStream): boolean {
    return this.c.stream_writers[stream].includes(this.instanceName);
  }

  /** The instance that writes a room's events (sharded by room id over the events writers). */
  eventWriterFor(roomId: string): string {
    return shardFor(this.c.stream_writers.events, roomId);
  }

  /** Whether this process writes a room's events. */
  writesRoom(roomId: string): boolean {
    return this.eventWriterFor(roomId) === this.instanceName;
  }

  /** Whether this process may run the federation sender (it is in `federation_sender_instances`). */
  get runsFederationSender(): boolean {
    return this.c.federation_sender_instances.includes(this.instanceName);
  }

  /** Whether this process may run pushers (it is in `pusher_instances`). */
  get runsPushers(): boolean {
    return this.c.pusher_instances.includes(this.instanceName);
  }

  /** Whether this process may send to application services (`notify_appservices_from_worker`). */
  get notifiesAppservices(): boolean {
    return this.c.notify_appservices_from_worker.includes(this.instanceName);
  }

  /** Whether this process may run the server-wide background tasks (`run_background_tasks_on`). */
  get runsBackgroundTasks(): boolean {
    return this.c.run_background_tasks_on.includes(this.instanceName);
  }

  /** Whether this process may run media retention (`media_instance_running_background_jobs`). */
  get runsMediaJobs(): boolean {
    return this.c.media_instance_running_background_jobs.includes(this.instanceName);
  }

  /** Where an instance listens for internal requests (undefined for this process with no instance_map). */
  locationOf(instance: string): WorkersConfig["instance_map"][string] | undefined {
    return this.c.instance_map[instance];
  }
}

/** The topology a config describes (a config made without the worker options: the single process). */
export function topologyOf(config: Partial<WorkersConfig>): ClusterTopology {
  return config.stream_writers ? new ClusterTopology(config as WorkersConfig) : ClusterTopology.single();
}
