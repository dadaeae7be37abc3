// Synapse's worker options, in its vocabulary, so an existing deployment's homeserver.yaml translates:
// `worker_name`, `instance_map`, `stream_writers`, `federation_sender_instances`, `pusher_instances`,
// `notify_appservices_from_worker`, `run_background_tasks_on`, `media_instance_running_background_jobs`,
// `worker_replication_secret` (or `_path`) and the `redis` section — read with Synapse's defaults
// (everything on "master") and its validation messages (synapse/config/workers.py, redis.py). What a
// process does with them is decided in src/domain/cluster/topology.ts; which request goes to which writer
// in src/domain/cluster/write-routes.ts; replication between processes (redis.enabled) in src/domain/
// cluster/replication.ts (README "Scaling out"). Weft's extension: each option naming who
// runs background work may name several instances, the candidates of a lease (src/domain/cluster/
// leased-work.ts): one of them runs the work at a time, another takes over when its holder dies;
// `worker_lease_duration` sets the lease time.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";

/** How long a lease on background work lasts unrenewed by default (renewed every third of it). */
export const DEFAULT_LEASE_MS = 60_000;

/** Synapse's name for the main process; `main` in `instance_map` names it too. */
export const MAIN_PROCESS = "master";

export interface InstanceLocation {
  host: string;
  port: number;
  tls: boolean;
}

/** The streams Synapse lets `stream_writers` name (thread subscriptions and quarantined media are Synapse's own). */
export const WRITER_STREAMS = ["events", "typing", "to_device", "account_data", "receipts", "presence", "push_rules", "device_lists"] as const;
export type WriterStream = (typeof WRITER_STREAMS)[number];

/** Synapse: one writer each for these; the others may be a list. */
const SINGLE_WRITER: Partial<Record<WriterStream, string>> = {
  typing: "Must only specify one instance to handle `typing` messages.",
  to_device: "Must only specify one instance to handle `to_device` messages.",
  account_data: "Must only specify one instance to handle `account_data` messages.",
  presence: "Must only specify one instance to handle `presence` messages.",
  push_rules: "Must only specify one instance to handle `push` messages.",
};
const AT_LEAST_ONE: Partial<Record<WriterStream, string>> = {
  events: "Must specify at least one instance to handle `events`.",
  receipts: "Must specify at least one instance to handle `receipts` messages.",
  device_lists: "Must specify at least one instance to handle `device_lists` messages.",
};

export interface RedisConfig {
  enabled: boolean;
  host: string;
  port: number;
  path?: string;
  password?: string;
  dbid?: number;
  use_tls: boolean;
}

export interface WorkersConfig {
  /** This process's instance name: `worker_name`, "master" without it. */
  worker_name: string;
  /** Instance name → where its HTTP replication listener is (`main` is read as "master"). */
  instance_map: Record<string, InstanceLocation>;
  stream_writers: Record<WriterStream, string[]>;
  /**
   * The candidates for each piece of background work (one: it runs there; several: on the one holding
   * its lease). Synapse shards destinations and users over several federation senders and pushers; Weft
   * runs all of it on the holder and keeps the others in standby.
   */
  federation_sender_instances: string[];
  pusher_instances: string[];
  /** Synapse: one instance name; Weft also takes a list of candidates. */
  notify_appservices_from_worker: string[];
  run_background_tasks_on: string[];
  /** Media retention and other media jobs (Synapse: unset means the main process). */
  media_instance_running_background_jobs: string[];
  /** How long a lease on background work lasts unrenewed (ms): a killed holder's work waits this long. */
  worker_lease_duration: number;
  redis: RedisConfig;
  /**
   * The shared secret internal requests between processes carry (`worker_replication_secret`, or a file
   * named by `worker_replication_secret_path`); required when instance_map names more than one instance.
   */
  worker_replication_secret?: string;
}

function names(r: Reader, key: string, def: string[], prefix = ""): string[] {
  if (!r.has(key)) return def;
  const v = r.value(key);
  const list = typeof v === "string" ? [v] : v;
  if (!Array.isArray(list) || list.some((n) => typeof n !== "string" || n.length === 0)) throw new ConfigError(prefix + key, "must be an instance name or a list of instance names");
  return list as string[];
}

function instanceName(r: Reader, key: string): string {
  const v = r.value(key);
  if (v === undefined || v === null || v === "") return MAIN_PROCESS;
  if (typeof v !== "string") throw new ConfigError(key, "must be an instance name");
  return v;
}

/** An option naming one instance (Synapse) or several candidates for a lease (Weft): never none. */
function candidates(r: Reader, key: string): string[] {
  const v = r.value(key);
  if (!Array.isArray(v)) return [instanceName(r, key)];
  const list = names(r, key, [MAIN_PROCESS]);
  if (list.length === 0) throw new ConfigError(key, "must name at least one instance");
  return list;
}

function readInstanceMap(r: Reader): Record<string, InstanceLocation> {
  const map = r.section("instance_map").open();
  const out: Record<string, InstanceLocation> = {};
  for (const name of Object.keys((r.value("instance_map") as Record<string, unknown> | undefined) ?? {})) {
    const v = map.value(name);
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ConfigError(`instance_map.${name}`, "must be a mapping with host and port");
    const loc = map.child(v as Record<string, unknown>, `instance_map.${name}.`);
    const location: InstanceLocation = { host: loc.string("host"), port: loc.number("port", NaN, { min: 1, max: 65535, integer: true }), tls: loc.bool("tls", false) };
    if (Number.isNaN(location.port)) throw new ConfigError(`instance_map.${name}.port`, "is required");
    if (loc.has("path")) throw new ConfigError(`instance_map.${name}.path`, "(a UNIX socket) is not supported: give host and port");
    out[name === "main" ? MAIN_PROCESS : name] = location;
  }
  return out;
}

function readRedis(r: Reader, baseDir: string): RedisConfig {
  const x = r.section("redis");
  let password = x.optString("password");
  const passwordPath = x.optString("password_path");
  if (passwordPath !== undefined) {
    if (password !== undefined) throw new ConfigError("redis.password_path", "You have configured both `redis.password` and `redis.password_path`. These are mutually incompatible.");
    const file = path.resolve(baseDir, passwordPath);
    try {
      password = readFileSync(file, "utf8").trim();
    } catch (err) {
      throw new ConfigError("redis.password_path", `cannot read ${file}: ${(err as Error).message}`);
    }
  }
  const dbid = x.has("dbid") ? x.number("dbid", 0, { min: 0, integer: true }) : undefined;
  return {
    enabled: x.bool("enabled", false),
    host: x.string("host", "localhost"),
    port: x.number("port", 6379, { min: 1, max: 65535, integer: true }),
    path: x.optString("path"),
    password,
    ...(dbid !== undefined ? { dbid } : {}),
    use_tls: x.bool("use_tls", false),
  };
}

function readReplicationSecret(r: Reader, baseDir: string): string | undefined {
  const secret = r.optString("worker_replication_secret");
  const secretPath = r.optString("worker_replication_secret_path");
  if (secretPath === undefined) return secret;
  if (secret !== undefined) throw new ConfigError("worker_replication_secret_path", "You have configured both `worker_replication_secret` and `worker_replication_secret_path`. These are mutually incompatible.");
  const file = path.resolve(baseDir, secretPath);
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new ConfigError("worker_replication_secret_path", `cannot read ${file}: ${(err as Error).message}`);
  }
  if (text === "") throw new ConfigError("worker_replication_secret_path", `${file} is empty`);
  return text;
}

export function readWorkersConfig(r: Reader, baseDir: string): WorkersConfig {
  const worker_name = instanceName(r, "worker_name");
  const instance_map = readInstanceMap(r);
  const known = (n: string) => n === MAIN_PROCESS || n in instance_map;
  const sw = r.section("stream_writers");
  const stream_writers = {} as Record<WriterStream, string[]>;
  for (const stream of WRITER_STREAMS) {
    const writers = names(sw, stream, [MAIN_PROCESS], "stream_writers.");
    for (const w of writers) if (!known(w)) throw new ConfigError(`stream_writers.${stream}`, `Instance '${w}' is configured to write ${stream} but does not appear in \`instance_map\` config.`);
    if (SINGLE_WRITER[stream] && writers.length !== 1) throw new ConfigError(`stream_writers.${stream}`, SINGLE_WRITER[stream]);
    if (AT_LEAST_ONE[stream] && writers.length === 0) throw new ConfigError(`stream_writers.${stream}`, AT_LEAST_ONE[stream]);
    if (new Set(writers).size !== writers.length) throw new ConfigError(`stream_writers.${stream}`, "names an instance twice");
    stream_writers[stream] = writers;
  }
  // Synapse: unset means the main process; an empty list means "no instance here".
  const federation_sender_instances = names(r, "federation_sender_instances", [MAIN_PROCESS]);
  const pusher_instances = names(r, "pusher_instances", [MAIN_PROCESS]);
  const redis = readRedis(r, baseDir);
  const config: WorkersConfig = {
    worker_name,
    instance_map,
    stream_writers,
    federation_sender_instances,
    pusher_instances,
    notify_appservices_from_worker: candidates(r, "notify_appservices_from_worker"),
    run_background_tasks_on: candidates(r, "run_background_tasks_on"),
    media_instance_running_background_jobs: candidates(r, "media_instance_running_background_jobs"),
    worker_lease_duration: r.duration("worker_lease_duration", DEFAULT_LEASE_MS)!,
    redis,
  };
  const secret = readReplicationSecret(r, baseDir);
  if (secret !== undefined) config.worker_replication_secret = secret;
  if (config.worker_lease_duration < 300) throw new ConfigError("worker_lease_duration", "must be at least 300ms");
  for (const key of ["federation_sender_instances", "pusher_instances", "notify_appservices_from_worker", "run_background_tasks_on", "media_instance_running_background_jobs"] as const)
    if (new Set(config[key]).size !== config[key].length) throw new ConfigError(key, "names an instance twice");
  if (worker_name !== MAIN_PROCESS && !(MAIN_PROCESS in instance_map))
    throw new ConfigError("instance_map", "Missing data for a worker to connect to main process. Please include 'main' in the `instance_map`.");
  if (Object.keys(instance_map).length > 1 && !redis.enabled)
    throw new ConfigError("redis.enabled", "must be true when instance_map names more than one instance (Redis carries replication between them)");
  if (Object.keys(instance_map).length > 1 && !config.worker_replication_secret)
    throw new ConfigError("worker_replication_secret", "is required when instance_map names more than one instance (internal requests between processes carry it)");
  return config;
}
