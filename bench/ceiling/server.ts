// The send ceiling of this machine (issue 17): a server that does only what the protocol requires of a
// message send and nothing else — no framework, no authentication, no rate limit, no caches, consumers,
// push, search or federation — so that its figure bounds what any homeserver can reach here. Per request:
// read the JSON body; in one SQLite transaction per event-loop turn (a group commit, as Weft's), look up
// the transaction id, build the PDU on the room's tip, its content hash and its event id (the reference
// hash of the redacted form, room version 11), and write what Weft's send path writes (the event row, the
// transaction id, the forward extremity) into Weft's own schema (its migrations, WAL, synchronous =
// NORMAL); answer {"event_id"} after COMMIT. No signature: in a room no other server is in, nothing
// requires it before the event leaves the server, and Weft makes it then (src/domain/rooms/own-signature.ts).
// Canonical JSON is Weft's own, so the difference to Weft is everything a real homeserver does around it.
// Started by bench/send-vs-peer.ts: node [Weft's node flags] --import tsx bench/ceiling/server.ts FILE PORT
import http from "node:http";
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { migrateSqlite } from "../../src/storage/migrate.ts";
import { SQLITE_CONNECTION_PRAGMAS } from "../../src/storage/sql.ts";
import { base64Unpadded, base64UrlUnpadded, canonicalJson } from "../../src/domain/canonical-json.ts";

const [file, port] = process.argv.slice(2);
if (!file || !port) throw new Error("usage: server.ts DB_FILE PORT");
migrateSqlite(file);
const db = new Database(file);
db.pragma("journal_mode = WAL");
for (const p of SQLITE_CONNECTION_PRAGMAS) db.pragma(p);

const SERVER = "ceiling.local";
const ROOM = `!ceiling:${SERVER}`;
const SENDER = `@bencher:${SERVER}`;
const AUTH = ["$create", "$power_levels", "$member"];
db.prepare(`INSERT INTO rooms (room_id, room_version, creator, created_ts) VALUES (?, '11', ?, ?)`).run(ROOM, SENDER, Date.now());

const begin = db.prepare("BEGIN IMMEDIATE");
const commit = db.prepare("COMMIT");
const findTxn = db.prepare(`SELECT event_id FROM event_txn_ids WHERE user_id = ? AND device_key = ? AND txn_id = ?`);
const insertEvent = db.prepare(
  `INSERT INTO events (stream_ordering, event_id, room_id, type, state_key, sender, depth, origin_server_ts, json, replaces_state, state_group, outlier, rejected_reason, soft_failed, contains_url, txn_device_key, txn_id)
   VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, NULL, 1, 0, NULL, 0, 0, 'DEVICE', ?)`,
);
const insertTxn = db.prepare(`INSERT INTO event_txn_ids (user_id, device_key, txn_id, request_hash, event_id, room_id, created_ts) VALUES (?, 'DEVICE', ?, ?, ?, ?, ?)`);
const addTip = db.prepare(`INSERT INTO forward_extremities (room_id, event_id) VALUES (?, ?)`);
const dropTip = db.prepare(`DELETE FROM forward_extremities WHERE room_id = ? AND event_id = ?`);

let position = 0;
let depth = 0;
let tip = "$create";
let queue: { txnId: string; body: string; res: http.ServerResponse }[] = [];

function commitQueued(): void {
  const batch = queue;
  queue = [];
  const answers: [http.ServerResponse, string][] = [];
  begin.run();
  for (const { txnId, body, res } of batch) {
    const seen = findTxn.get(SENDER, "DEVICE", txnId) as { event_id: string } | undefined;
    if (seen) {
      answers.push([res, seen.event_id]);
      continue;
    }
    const content = JSON.parse(body) as Record<string, unknown>;
    const now = Date.now();
    const pdu: Record<string, unknown> = { auth_events: AUTH, content, depth: ++depth, origin_server_ts: now, prev_events: [tip], room_id: ROOM, sender: SENDER, type: "m.room.message" };
    pdu.hashes = { sha256: base64Unpadded(createHash("sha256").update(canonicalJson(pdu)).digest()) };
    // The redacted form (v11: a message keeps no content), which the reference hash covers.
    const redacted = { auth_events: AUTH, content: {}, depth, hashes: pdu.hashes, origin_server_ts: now, prev_events: pdu.prev_events, room_id: ROOM, sender: SENDER, type: "m.room.message" };
    const eventId = "$" + base64UrlUnpadded(createHash("sha256").update(canonicalJson(redacted)).digest());
    pdu.signatures = {};
    insertEvent.run(++position, eventId, ROOM, "m.room.message", SENDER, depth, now, JSON.stringify(pdu), txnId);
    insertTxn.run(SENDER, txnId, createHash("sha256").update(body).digest("base64"), eventId, ROOM, now);
    addTip.run(ROOM, eventId);
    dropTip.run(ROOM, tip);
    tip = eventId;
    answers.push([res, eventId]);
  }
  commit.run();
  for (const [res, eventId] of answers) {
    const out = JSON.stringify({ event_id: eventId });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) });
    res.end(out);
  }
}

http
  .createServer((req, res) => {
    // /versions answers the harness's readiness probe; everything else is a send.
    if (req.url?.endsWith("/versions")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"versions":["v1.11"]}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = req.url ?? "";
      queue.push({ txnId: decodeURIComponent(url.slice(url.lastIndexOf("/") + 1)), body: Buffer.concat(chunks).toString("utf8"), res });
      if (queue.length === 1) setImmediate(commitQueued);
    });
  })
  .listen(Number(port), "127.0.0.1");
