// `weft generate-config`: writes a commented homeserver.yaml (Synapse's option names, as Synapse's
// --generate-config does) with a random registration_shared_secret, and creates the signing key it names.
// An existing config is never overwritten; the written file is checked with parseConfig before it is kept.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseConfig } from "./config.ts";
import { loadOrCreateSigningKeys } from "../domain/signing-key.ts";
import YAML from "yaml";

/** A problem with what generate-config was asked to do (bad option, existing file). */
export class GenerateConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GenerateConfigError";
  }
}

export interface GenerateOptions {
  serverName: string;
  /** Where to write homeserver.yaml. */
  configPath: string;
  /** Folder for the SQLite file and the signing key; default: `data` beside the config file. */
  dataDir?: string;
  /** The HTTP listener's port; default 8008. */
  port?: number;
  /** A postgresql:// URL: use PostgreSQL instead of SQLite. */
  databaseUrl?: string;
}

export interface GeneratedConfig {
  configPath: string;
  dataDir: string;
  signingKeyPath: string;
  registrationSharedSecret: string;
  publicBaseurl: string;
}

const SERVER_NAME = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]{1,255})(?::\d{1,5})?$/;

/** Host part of a server name: `example.org:8448` → `example.org`, `[::1]:8448` → `[::1]`. */
function hostOf(serverName: string): string {
  return serverName.startsWith("[") ? serverName.slice(0, serverName.indexOf("]") + 1) : serverName.split(":")[0]!;
}

/** A path as written into the config: relative to the config's folder when inside it, else absolute. */
function configRelative(configDir: string, p: string): string {
  const rel = path.relative(configDir, p);
  return rel === "" ? "." : rel.startsWith("..") || path.isAbsolute(rel) ? p : rel.split(path.sep).join("/");
}

const q = (v: string) => JSON.stringify(v); // a JSON string is a valid double-quoted YAML scalar

export interface RenderOptions {
  serverName: string;
  port: number;
  publicBaseurl: string;
  database: { sqlitePath: string } | { url: string };
  signingKeyPath: string;
  registrationSharedSecret: string;
  mediaStorePath: string;
}

/** The text of a new homeserver.yaml. Paths are written as given. */
export function renderConfig(o: RenderOptions): string {
  const database =
    "url" in o.database
      ? `database:\n  name: psycopg2\n  args:\n    url: ${q(o.database.url)}\n`
      : `database:\n  name: sqlite3\n  args:\n    database: ${q(o.database.sqlitePath)}\n`;
  return `# Weft homeserver configuration, written by \`weft generate-config\` on ${new Date().toISOString().slice(0, 10)}.
# Options use Synapse's names and meanings; relative paths resolve against this file's folder.
# Weft checks every option at start and names the one that is wrong.

# The domain part of this server's user ids (@alice:${o.serverName}). It cannot change once users exist.
server_name: ${q(o.serverName)}

# The URL clients use to reach this server.
public_baseurl: ${q(o.publicBaseurl)}

# Where the server listens for client and federation traffic. Every http listener is served, on each of
# its bind_addresses ("::" and "0.0.0.0" for every interface), answering only its resources' paths
# (client, federation, keys, media, static, openid, metrics; /health on all): e.g. add a listener with
# port 8448, tls: true (tls_certificate_path, tls_private_key_path) and names [federation] for other
# servers. Set x_forwarded: true on a listener behind a reverse proxy that sends X-Forwarded-For.
# To change the port, change \`port\` here AND the port in public_baseurl above (or write a new config
# with \`weft generate-config --port N\`).
listeners:
  - port: ${o.port}
    type: http
    bind_addresses: ["127.0.0.1"]
    x_forwarded: false
    resources:
      - names: [client, federation]

# Storage. SQLite needs no setup. For PostgreSQL, replace this section with
#   database:
#     name: psycopg2
#     args: {user: weft, password: weft, database: weft, host: localhost, port: 5432}
# (or args: {url: "postgresql://user:password@host:5432/database"}).
${database}
# The server's Ed25519 signing key (Synapse's key file format), created if missing.
signing_key_path: ${q(o.signingKeyPath)}

# Registration through the client API is closed; create accounts with \`npx weft register-user\`.
# To open it, set enable_registration: true (and registration_requires_token: true to require tokens
# made with the registration tokens admin API).
enable_registration: false
registration_requires_token: false

# The secret of shared-secret registration (\`weft register-user\`, POST /_synapse/admin/v1/register).
# Whoever knows it can create admin accounts: keep this file private.
registration_shared_secret: ${q(o.registrationSharedSecret)}

# To leave logins and registration to an OAuth 2.0 / OpenID server (MSC3861, as Synapse), add
#   experimental_features:
#     msc3861: {enabled: true, issuer: "https://auth.example.com/", client_id: weft,
#               client_auth_method: client_secret_basic, client_secret: "...", admin_token: "..."}
# and remove password_config.enabled below (delegation turns passwords off; README "Delegated authentication").

# Password hashing cost (scrypt, 2^scrypt_log_n) and an optional password policy.
password_config:
  enabled: true
  scrypt_log_n: 15
  policy:
    enabled: false

# Largest request body and upload accepted.
max_request_body_size: "10M"
max_upload_size: "50M"

# Media (uploads, thumbnails, URL previews): files live under media_store_path; media uploaded while
# enable_authenticated_media is true is served only by the authenticated /_matrix/client/v1/media API.
# URL previews are off; to turn them on, set url_preview_enabled: true and list the address ranges previews
# must never reach in url_preview_ip_range_blacklist (Synapse's list of private ranges is a good start).
media_store_path: ${q(o.mediaStorePath)}
enable_authenticated_media: true
url_preview_enabled: false
# Cached remote media and idle local media can be dropped after a while, e.g.
#   media_retention: {remote_media_lifetime: 90d}
# Media can live in an S3-compatible bucket (AWS S3, MinIO, Ceph, Garage, R2 ...) instead of on this
# machine's disk; media_store_path then only holds files being received or rendered:
#   media_store:
#     backend: s3                 # "local" (the default): files under media_store_path
#     bucket: my-media
#     region: us-east-1
#     endpoint_url: https://minio.example.com:9000   # leave out for AWS itself
#     access_key_id: ...          # leave both out to use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile
#     secret_access_key: ...
#     prefix: media/              # prepended to every object key as given
#     force_path_style: true      # bucket in the URL path (default: true when endpoint_url is set)
#     storage_class: STANDARD
# Or keep local disk and copy media to a bucket as synapse-s3-storage-provider does (the same options;
# files gone from local disk are then served from the bucket):
#   media_storage_providers:
#     - module: s3_storage_provider.S3StorageProviderBackend
#       store_local: true         # copy this server's uploads (default false)
#       store_remote: true        # copy cached remote media too (default false)
#       store_synchronous: true   # copy before answering the upload (default false: in the background)
#       config: {bucket: my-media, region_name: us-east-1, endpoint_url: ..., access_key_id: ..., secret_access_key: ..., prefix: ...}

# Rate limits (Synapse's rc_* options). Logging in is limited per client address and per account, so
# trying several clients in a row can be refused with M_LIMIT_EXCEEDED ("Too Many Requests"); raise the
# limits while you experiment, e.g.
#   rc_login:
#     address: {per_second: 1, burst_count: 20}
#     account: {per_second: 1, burst_count: 20}
#     failed_attempts: {per_second: 1, burst_count: 20}
# (defaults: address and account 0.003/s with a burst of 5; failed_attempts 0.17/s with a burst of 3).
# rc_registration and rc_message work the same way.

# Prometheus metrics. With enable_metrics: true, add a listener of its own
#   - port: 9000
#     type: metrics
#     bind_addresses: ["127.0.0.1"]
# (scrape http://127.0.0.1:9000/metrics), or add "metrics" to the names above to serve /_synapse/metrics
# on the main port. /health answers "OK" either way.
enable_metrics: false

# fatal, error, warn, info, debug, trace or silent. At info, every request is logged in one line (method,
# path, status, time, user), each line as JSON with the request's id (reqId).
log_level: info
# Give every line written while a request is handled its reqId, not only the request's own line and its
# errors (the context is carried through every async call: ~15-25% more CPU per request on Node 20).
# Default: on at log_level debug and trace, off otherwise.
#log_request_context: false

# Synapse's worker options (worker_name, instance_map, stream_writers, federation_sender_instances,
# pusher_instances, notify_appservices_from_worker, run_background_tasks_on,
# media_instance_running_background_jobs, redis) are read and checked with Synapse's defaults: a process
# runs only the background work they give it; naming several instances for a piece of it makes them
# candidates, one running it at a time under a lease (worker_lease_duration, default 60s), another taking
# over when it dies. Several Weft processes share one PostgreSQL database with redis.enabled (replication
# between them; not on SQLite), each write forwarded to its writer (README "Scaling out"): leave them out
# and this one process does everything.
`;
}

/** Writes homeserver.yaml and the signing key. Throws GenerateConfigError for bad options or an existing file. */
export async function generateConfig(o: GenerateOptions): Promise<GeneratedConfig> {
  if (!SERVER_NAME.test(o.serverName)) throw new GenerateConfigError(`--server-name: "${o.serverName}" is not a valid server name`);
  const port = o.port ?? 8008;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new GenerateConfigError(`--port: must be an integer between 1 and 65535`);
  if (o.databaseUrl !== undefined && !/^postgres(?:ql)?:\/\/./.test(o.databaseUrl))
    throw new GenerateConfigError(`--database-url: must be a postgresql:// URL`);
  const configPath = path.resolve(o.configPath);
  if (existsSync(configPath)) throw new GenerateConfigError(`${configPath} already exists: refusing to overwrite it`);
  const configDir = path.dirname(configPath);
  const dataDir = path.resolve(o.dataDir ?? path.join(configDir, "data"));
  const signingKeyPath = path.join(dataDir, `${o.serverName.replace(/[^A-Za-z0-9.-]/g, "_")}.signing.key`);
  // Hex, not base64url: a secret that begins with "-" reads as an option on `weft register-user -k SECRET`.
  const registrationSharedSecret = randomBytes(32).toString("hex");
  const publicBaseurl = `http://${hostOf(o.serverName)}:${port}/`;

  const text = renderConfig({
    serverName: o.serverName,
    port,
    publicBaseurl,
    database: o.databaseUrl !== undefined ? { url: o.databaseUrl } : { sqlitePath: configRelative(configDir, path.join(dataDir, "homeserver.db")) },
    signingKeyPath: configRelative(configDir, signingKeyPath),
    registrationSharedSecret,
    mediaStorePath: configRelative(configDir, path.join(dataDir, "media_store")),
  });
  parseConfig(YAML.parse(text), configDir); // what we write must load

  mkdirSync(configDir, { recursive: true });
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(configPath, text, { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new GenerateConfigError(`${configPath} already exists: refusing to overwrite it`);
    throw err;
  }
  await loadOrCreateSigningKeys(signingKeyPath);
  return { configPath, dataDir, signingKeyPath, registrationSharedSecret, publicBaseurl };
}
