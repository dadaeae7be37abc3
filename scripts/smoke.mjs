// The smoke run .ci/run gives every supported Node besides the one the whole suite runs on: what a new
// user does first, through the real launcher, on whichever `node` runs this script. Generates a config,
// starts the server as `npm start` does (its node flags), registers a user with `weft register-user`, logs
// in, creates a room, sends, sees the message in /sync (initial, then a long poll woken by a second send),
// asks GraphQL for it, and stops the server with SIGTERM. Any warning the server's Node prints fails it.
// Plain JavaScript with no dependency, so it runs before and apart from the test tooling.
// Usage: node scripts/smoke.mjs   (prints one line per step; exit status 1 on the first failure)
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LAUNCHER = path.join(ROOT, "bin", "weft.js");
/** `npm start`'s node flags, read from package.json so the smoke run starts the server exactly so. */
const START_FLAGS = (() => {
  const script = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.start;
  const m = /^node((?: --[^ ]+)*) bin\/weft\.js start/.exec(script);
  if (!m) throw new Error(`package.json's start script is not "node [flags] bin/weft.js start ...": ${script}`);
  return m[1].trim().split(" ").filter(Boolean);
})();

const dir = mkdtempSync(path.join(tmpdir(), "weft-smoke-"));
const config = path.join(dir, "homeserver.yaml");
let server;
let serverOutput = "";
let steps = 0;
const started = Date.now();

function fail(message) {
  process.stderr.write(`smoke: FAILED on Node ${process.version}: ${message}\n`);
  if (serverOutput) process.stderr.write(`--- the server's output ---\n${serverOutput.slice(-4000)}\n`);
  server?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
}

async function step(name, fn) {
  const t = Date.now();
  let detail;
  try {
    detail = await fn();
  } catch (err) {
    fail(`${name}: ${err.message}`);
  }
  steps++;
  console.log(`smoke: ${name}: ok (${Date.now() - t} ms)${detail ? ` ${detail}` : ""}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function weft(args) {
  const r = spawnSync(process.execPath, [LAUNCHER, ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) throw new Error(`weft ${args[0]} exited ${r.status ?? r.signal}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

let base;
async function call(method, urlPath, { token, body } = {}) {
  const res = await fetch(base + urlPath, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const port = await freePort();
base = `http://127.0.0.1:${port}`;

await step("generate-config", () => {
  weft(["generate-config", "--server-name", "localhost", "--config", config, "--port", String(port)]);
});

await step("start", async () => {
  server = spawn(process.execPath, [...START_FLAGS, LAUNCHER, "start", "--config", config], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  server.stdout.on("data", (d) => (serverOutput += d));
  server.stderr.on("data", (d) => (serverOutput += d));
  const exited = new Promise((resolve) => server.once("exit", (code, signal) => resolve(`${code ?? signal}`)));
  // Wait for the listener: /versions answers, or the process ends (then fail with its output).
  for (let wait = 50; ; wait = Math.min(wait * 2, 500)) {
    const answered = await fetch(`${base}/_matrix/client/versions`).then((r) => r.ok, () => false);
    if (answered) break;
    const code = await Promise.race([exited, new Promise((r) => setTimeout(r, wait))]);
    if (code !== undefined) throw new Error(`the server exited (${code}) before answering`);
  }
  return `(server pid ${server.pid})`;
});

let userId;
await step("register-user", () => {
  userId = weft(["register-user", "-c", config, "-u", "alice", "-p", "smoke-password", "--no-admin"]).trim().split("\n").pop();
  if (!/^@alice:localhost/.test(userId)) throw new Error(`register-user printed ${JSON.stringify(userId)}`);
  return userId;
});

let token;
await step("login", async () => {
  const r = await call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "smoke-password" } });
  if (r.user_id !== "@alice:localhost" || !r.access_token) throw new Error(`login answered ${JSON.stringify(r)}`);
  token = r.access_token;
});

let roomId;
await step("createRoom", async () => {
  roomId = (await call("POST", "/_matrix/client/v3/createRoom", { token, body: { name: "smoke" } })).room_id;
  if (!/^!/.test(roomId ?? "")) throw new Error(`no room_id`);
  return roomId;
});

const send = (body, txn) => call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txn}`, { token, body: { msgtype: "m.text", body } });
const bodiesIn = (sync) => (sync.rooms?.join?.[roomId]?.timeline?.events ?? []).map((e) => e.content?.body).filter(Boolean);

let since;
await step("send + initial sync", async () => {
  const { event_id } = await send("first", "t1");
  const sync = await call("GET", "/_matrix/client/v3/sync?timeout=0", { token });
  if (!bodiesIn(sync).includes("first")) throw new Error(`the initial sync's timeline lacks the message ${event_id}`);
  since = sync.next_batch;
});

await step("long-polling sync woken by a send", async () => {
  const poll = call("GET", `/_matrix/client/v3/sync?timeout=20000&since=${encodeURIComponent(since)}`, { token });
  await send("second", "t2");
  const sync = await poll;
  if (!bodiesIn(sync).includes("second")) throw new Error(`the long poll answered without the message: ${JSON.stringify(sync.rooms ?? {})}`);
});

await step("GraphQL query", async () => {
  const query = `query($room: String!) { viewer { userId } room(roomId: $room) { timeline(last: 5) { edges { node { body } } } } }`;
  const r = await call("POST", "/graphql", { token, body: { query, variables: { room: roomId } } });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  if (r.data.viewer.userId !== userId) throw new Error(`viewer is ${r.data.viewer.userId}`);
  const bodies = r.data.room.timeline.edges.map((e) => e.node.body);
  if (!bodies.includes("first") || !bodies.includes("second")) throw new Error(`timeline bodies ${JSON.stringify(bodies)}`);
});

await step("SIGTERM", async () => {
  const exited = new Promise((resolve) => server.once("exit", (code, signal) => resolve(code ?? signal)));
  server.kill("SIGTERM");
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running after 30 s"), 30_000))]);
  if (code !== 0) throw new Error(`exit ${code}`);
  server = undefined;
});

await step("no warnings from Node", () => {
  // Node prints its warnings as "(node:PID) XxxWarning: ..." (deprecations, experimental features).
  const warnings = serverOutput.split("\n").filter((l) => /^\(node:\d+\) /.test(l));
  if (warnings.length) throw new Error(warnings.join("\n"));
});

rmSync(dir, { recursive: true, force: true });
console.log(`smoke: Node ${process.version}: ${steps} steps passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
