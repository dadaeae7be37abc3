// The `weft` command line: generate-config (a commented homeserver.yaml and signing key), start (run the
// homeserver until SIGINT/SIGTERM), register-user (Synapse's register_new_matrix_user over the
// shared-secret registration admin API) and media-upload (local media copied to the configured S3
// buckets, as synapse-s3-storage-provider's s3_media_upload). Run as `tsx src/cli.ts ...`, `npm start`
// or `npx weft ...`.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline/promises";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, loadConfig, type Config } from "./config/config.ts";
import { GenerateConfigError, generateConfig } from "./config/generate.ts";
import { sharedSecretMac, USER_TYPES } from "./domain/admin/shared-secret-registration.ts";
import { setFlagsFromString } from "node:v8";

/** A wrong command line: printed with a hint to --help, exit status 2. */
class UsageError extends Error {}
/** A failure to report in one line, without a stack trace: exit status 1. */
class CliError extends Error {}

const DEFAULT_CONFIG = "homeserver.yaml";
/** The checkout (or installed package) this command runs from: src/cli.ts and dist/cli.js sit one below it. */
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * How to run `weft` again from the current folder, for the hints printed after a command: `npx weft`
 * inside the checkout (the package's own bin), `weft` where it was reached as a linked command, else the
 * launcher through node.
 */
function weftCommand(): string {
  const rel = path.relative(PACKAGE_ROOT, process.cwd());
  if (!rel.startsWith("..") && !path.isAbsolute(rel)) return "npx weft";
  const launcher = process.argv[1] ?? "";
  return path.basename(launcher) === "weft" ? "weft" : `node ${path.relative(process.cwd(), launcher) || launcher}`;
}

/** A path as the hints show it: relative to the current folder when below it. */
function shown(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

const MAIN_HELP = `Usage: weft <command> [options]

Commands:
  generate-config   write a new homeserver.yaml and signing key
  start             run the homeserver
  register-user     create an account with the shared secret (like Synapse's register_new_matrix_user)
  media-upload      copy the media on local disk to the configured S3 buckets (like s3_media_upload)

Run "weft <command> --help" for a command's options.
`;

const GENERATE_HELP = `Usage: weft generate-config --server-name NAME --config FILE [options]

Writes a commented homeserver.yaml (Synapse's option names) and creates the signing key it names.
An existing config file is never overwritten.

Options:
  -H, --server-name NAME     the server name: the domain part of user ids (required)
  -c, --config FILE          where to write the config (required)
      --data-dir DIR         folder for the SQLite database and the signing key
                             (default: "data" beside the config file)
      --port N               HTTP listener port (default 8008)
      --database-url URL     use PostgreSQL at this postgresql:// URL instead of SQLite
  -h, --help                 show this help
`;

const START_HELP = `Usage: weft start [--config FILE] [--auto]

Loads and checks the config, then runs the homeserver until SIGINT or SIGTERM.

Options:
  -c, --config FILE   the config file (default: $WEFT_CONFIG, else ./${DEFAULT_CONFIG})
      --auto          if the config file does not exist, first generate one for server name
                      "localhost", port 8008, data in "data" beside it (what \`npm start\` does)
  -h, --help          show this help
`;

const REGISTER_HELP = `Usage: weft register-user [options] [SERVER_URL]

Creates an account through the shared-secret registration admin API
(POST /_synapse/admin/v1/register) and prints its user id.

Arguments:
  SERVER_URL                the homeserver's URL (default: the config's public_baseurl,
                            else http://localhost:8008)

Options:
  -u, --user USER           localpart of the new user
  -p, --password PASSWORD   its password (visible to other local users: prefer the prompt or
                            --password-file)
      --password-file FILE  read the password from the first line of FILE
  -t, --user-type TYPE      user type: ${USER_TYPES.join(" or ")}
  -a, --admin               make the user a server admin
      --no-admin            do not make the user a server admin
  -c, --config FILE         read registration_shared_secret (and the URL) from this config
                            (default: $WEFT_CONFIG, else ./${DEFAULT_CONFIG} when it exists)
  -k, --shared-secret KEY   the shared secret, instead of reading a config
      --exists-ok           succeed if the user already exists
  -h, --help                show this help

Missing values are asked for when stdin is a terminal; otherwise they are an error
(admin defaults to no).
`;

function parse<T extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: "boolean", short: "h" } }, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function requireString(v: string | boolean | undefined, flag: string): string {
  if (typeof v !== "string" || v === "") throw new UsageError(`${flag} is required`);
  return v;
}

function parsePort(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--port: "${v}" is not a port number`);
  return Number(v);
}

// ---- generate-config ----

async function generateConfigCommand(args: string[]): Promise<number> {
  const { values } = parse(args, {
    "server-name": { type: "string", short: "H" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
    port: { type: "string" },
    "database-url": { type: "string" },
  });
  if (values.help) return help(GENERATE_HELP);
  const out = await generateConfig({
    serverName: requireString(values["server-name"], "--server-name"),
    configPath: requireString(values.config, "--config"),
    dataDir: values["data-dir"],
    port: parsePort(values.port),
    databaseUrl: values["database-url"],
  });
  console.log(`Wrote ${out.configPath}`);
  console.log(`Signing key: ${out.signingKeyPath}`);
  const npmStart = path.resolve(out.configPath) === path.join(PACKAGE_ROOT, DEFAULT_CONFIG) && weftCommand() === "npx weft";
  console.log(`Start the server with: ${weftCommand()} start --config ${shown(out.configPath)}${npmStart ? " (or npm start)" : ""}`);
  return 0;
}

// ---- start ----

function configFileFrom(flag: string | undefined): string {
  return path.resolve(flag ?? process.env.WEFT_CONFIG ?? DEFAULT_CONFIG);
}

function loadConfigOrFail(file: string): Config {
  try {
    return loadConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${file}: ${err.message}`);
    throw err;
  }
}

async function startCommand(args: string[]): Promise<number> {
  const { values } = parse(args, { config: { type: "string", short: "c" }, auto: { type: "boolean" } });
  if (values.help) return help(START_HELP);
  const file = configFileFrom(values.config);
  if (values.auto && !existsSync(file)) {
    const out = await generateConfig({ serverName: "localhost", configPath: file, dataDir: path.join(path.dirname(file), "data"), port: 8008 });
    process.stderr.write(
      `weft: no config found, so generated ${out.configPath} (server name "localhost", data in ${out.dataDir}).\n` +
        `      Create a user with: ${weftCommand()} register-user -c ${shown(out.configPath)}\n`,
    );
  }
  const config = loadConfigOrFail(file);

  // WebAssembly runs only Prisma's query compiler here, once per query shape (its plans are cached):
  // Liftoff's baseline code is enough, and not tiering it up to TurboFan saves ~50 MB of RSS. Set before
  // the compiler's module is compiled (it is, when storage opens).
  setFlagsFromString("--liftoff-only");
  const { startHomeserver } = await import("./main.ts"); // loaded only here: the other commands stay light
  let hs: Awaited<ReturnType<typeof startHomeserver>>;
  try {
    hs = await startHomeserver(config);
  } catch (err) {
    throw new CliError(`could not start: ${(err as Error).message}`);
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`weft: ${signal} again, exiting now\n`);
        resolve(1);
        return;
      }
      stopping = true;
      hs.services.log.info({ signal }, "shutting down");
      const timer = setTimeout(() => {
        process.stderr.write("weft: shutdown took longer than 30 s, exiting\n");
        resolve(1);
      }, 30_000);
      timer.unref();
      hs.close().then(
        () => resolve(0),
        (err: unknown) => {
          process.stderr.write(`weft: error while shutting down: ${(err as Error).message}\n`);
          resolve(1);
        },
      );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

// ---- register-user ----

/** Asks on the terminal (stderr, so stdout carries only results); `hidden` echoes nothing. */
async function ask(question: string, hidden = false): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const pending = rl.question(question); // writes the prompt at once; typing is echoed after it
    muted = hidden;
    const answer = await pending;
    if (hidden) process.stderr.write("\n");
    return answer;
  } finally {
    muted = false;
    rl.close();
  }
}

const interactive = () => process.stdin.isTTY === true;

async function registerUserCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      user: { type: "string", short: "u" },
      password: { type: "string", short: "p" },
      "password-file": { type: "string" },
      "user-type": { type: "string", short: "t" },
      admin: { type: "boolean", short: "a" },
      "no-admin": { type: "boolean" },
      config: { type: "string", short: "c" },
      "shared-secret": { type: "string", short: "k" },
      "exists-ok": { type: "boolean" },
    },
    true,
  );
  if (values.help) return help(REGISTER_HELP);
  if (positionals.length > 1) throw new UsageError(`unexpected arguments: ${positionals.slice(1).join(" ")}`);
  if (values.admin && values["no-admin"]) throw new UsageError("--admin and --no-admin exclude each other");
  if (values.password !== undefined && values["password-file"] !== undefined)
    throw new UsageError("--password and --password-file exclude each other");
  const userType = values["user-type"];
  if (userType !== undefined && !(USER_TYPES as readonly string[]).includes(userType))
    throw new UsageError(`--user-type must be ${USER_TYPES.join(" or ")}`);

  // The shared secret: -k, else the config's registration_shared_secret.
  let secret = values["shared-secret"];
  let config: Config | undefined;
  const configFlag = values.config ?? process.env.WEFT_CONFIG;
  if (configFlag !== undefined || (secret === undefined && existsSync(DEFAULT_CONFIG))) {
    const file = path.resolve(configFlag ?? DEFAULT_CONFIG);
    config = loadConfigOrFail(file);
    if (secret === undefined) {
      secret = config.registration_shared_secret;
      if (!secret) throw new CliError(`${file}: registration_shared_secret is not set, so shared-secret registration is disabled`);
    }
  }
  if (!secret) throw new UsageError(`give -c CONFIG (with registration_shared_secret) or -k SHARED_SECRET`);
  const serverUrl = (positionals[0] ?? config?.public_baseurl ?? "http://localhost:8008").replace(/\/+$/, "");

  let user = values.user;
  if (user === undefined) {
    if (!interactive()) throw new CliError("-u USER is required when stdin is not a terminal");
    const fallback = process.env.USER && /^[a-z0-9._=\-/+]+$/.test(process.env.USER) ? process.env.USER : "";
    user = (await ask(`New user localpart${fallback ? ` [${fallback}]` : ""}: `)).trim() || fallback;
  }
  if (!user) throw new CliError("the user localpart cannot be empty");

  let password = values.password;
  if (values["password-file"] !== undefined) {
    try {
      password = readFileSync(values["password-file"], "utf8").split(/\r?\n/)[0];
    } catch (err) {
      throw new CliError(`--password-file: ${(err as Error).message}`);
    }
  }
  if (password === undefined) {
    if (!interactive()) throw new CliError("-p PASSWORD (or --password-file) is required when stdin is not a terminal");
    password = await ask("Password: ", true);
    if (password !== (await ask("Confirm password: ", true))) throw new CliError("passwords do not match");
  }
  if (!password) throw new CliError("the password cannot be empty");

  let admin: boolean;
  if (values.admin) admin = true;
  else if (values["no-admin"] || !interactive()) admin = false;
  else admin = /^y(es)?$/i.test((await ask("Make admin [no]: ")).trim());

  const endpoint = `${serverUrl}/_synapse/admin/v1/register`;
  const nonceRes = await request("GET", endpoint);
  const nonce = (nonceRes.body as { nonce?: unknown }).nonce;
  if (typeof nonce !== "string") throw new CliError(`${endpoint} did not return a nonce`);
  const mac = sharedSecretMac(secret, { nonce, username: user, password, admin, userType });
  const body = { nonce, username: user, password, admin, mac, ...(userType ? { user_type: userType } : {}) };
  const res = await request("POST", endpoint, body, values["exists-ok"] ? ["M_USER_IN_USE"] : []);
  if (res.status !== 200) {
    process.stderr.write(`User ${user} already exists\n`);
    return 0;
  }
  console.log((res.body as { user_id: string }).user_id);
  return 0;
}

/** One JSON request; a non-2xx answer is a CliError unless its errcode is in `allowed`. */
async function request(method: string, url: string, body?: unknown, allowed: string[] = []): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new CliError(`cannot reach ${url}: ${cause ?? (err as Error).message}`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (res.ok) return { status: res.status, body: json ?? {} };
  const e = (json ?? {}) as { errcode?: string; error?: string };
  if (e.errcode && allowed.includes(e.errcode)) return { status: res.status, body: json };
  throw new CliError(`${method} ${url} failed: ${res.status} ${e.errcode ?? res.statusText}${e.error ? `: ${e.error}` : ""}`);
}

// ---- media-upload ----

const MEDIA_UPLOAD_HELP = `Usage: weft media-upload [--config FILE] [--delete-local]

Copies every media file under media_store_path (content and thumbnails, local and cached remote) to
the S3 buckets the config names: media_store (backend: s3), and media_storage_providers with store_local
or store_remote. Files a bucket already holds (same size) are skipped, so it can run again after an
interruption, beside a running server.

Options:
  -c, --config FILE   the homeserver.yaml (default: as "weft start")
  --delete-local      remove each file from local disk once every bucket holds it
`;

async function mediaUploadCommand(args: string[]): Promise<number> {
  const { values } = parse(args, { config: { type: "string", short: "c" }, "delete-local": { type: "boolean" } });
  if (values.help) return help(MEDIA_UPLOAD_HELP);
  const config = loadConfigOrFail(configFileFrom(values.config));
  const { copyLocalMediaToBuckets } = await import("./domain/media/copy-to-buckets.ts");
  const { default: pino } = await import("pino");
  try {
    const r = await copyLocalMediaToBuckets(config, pino({ level: "warn" }, process.stderr), { deleteLocal: values["delete-local"] === true });
    process.stdout.write(`uploaded ${r.uploaded}, already there ${r.present}, removed from local disk ${r.deleted}\n`);
    return 0;
  } catch (err) {
    throw new CliError(`media-upload: ${(err as Error).message}`);
  }
}

// ---- dispatch ----

function help(text: string): number {
  process.stdout.write(text);
  return 0;
}

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  "generate-config": generateConfigCommand,
  start: startCommand,
  "register-user": registerUserCommand,
  "media-upload": mediaUploadCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    process.stderr.write(MAIN_HELP);
    return 2;
  }
  if (command === "--help" || command === "-h" || command === "help") return help(MAIN_HELP);
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command "${command}"`);
  try {
    return await run(rest);
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`${command}: ${err.message}`);
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`weft: ${err.message}\nRun "weft --help" for usage.\n`);
      process.exit(2);
    }
    if (err instanceof CliError || err instanceof ConfigError || err instanceof GenerateConfigError) {
      process.stderr.write(`weft: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`weft: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
