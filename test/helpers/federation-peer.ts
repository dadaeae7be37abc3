// A tiny federation peer for tests: an HTTPS server named `127.0.0.1:PORT` with its own signing key that
// serves its key document and accepts PUT /_matrix/federation/v1/send/{txnId}, verifying each request's
// X-Matrix signature against the keys of the servers it was told to trust, and records every
// transaction (with how many were in flight at once). It can answer 503 ("failing"), or stop listening
// and start again on the same port, to play a destination that is down. Also: a user of the peer joins a
// room of a Weft server, the join event built and signed by the peer and received through Weft's real
// pipeline (what a send_join would hand it), so the room spans both servers. And media: the peer serves
// files of its own over GET /_matrix/federation/v1/media/download/{mediaId} (multipart/mixed, the file
// inline or behind a Location), or — playing a server from before spec v1.11 — only over the legacy
// /_matrix/media/v3/download/{origin}/{mediaId}.
import { createServer, type Server } from "node:https";
import type { Duplex } from "node:stream";
import type { IncomingMessage, ServerResponse } from "node:http";
import { expect } from "vitest";
import { generateSigningKey, type SigningKey } from "../../src/domain/signing-key.ts";
import { buildServerKeysResponse } from "../../src/domain/keys/server-keys.ts";
import { authenticateRequest } from "../../src/domain/federation/request-auth.ts";
import { buildEvent, type EventDraft } from "../../src/domain/rooms/build-event.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import type { Pdu } from "../../src/domain/events/types.ts";
import { freePort, type TestServer } from "./server.ts";
import { testCertificate } from "./tls.ts";
import { TestKeyRing } from "./dag.ts";

export interface RecordedTransaction {
  txnId: string;
  origin: string;
  pdus: Pdu[];
  edus: { edu_type: string; content: any }[];
}

export interface RecordingPeer {
  serverName: string;
  port: number;
  signingKey: SigningKey;
  /** Accepted transactions, in the order they arrived. */
  transactions: RecordedTransaction[];
  /** Requests refused for their signature. */
  refused: number;
  /** The most /send requests in flight at the same time. */
  maxInFlight: number;
  /** "failing": every /send is answered 503 (and not recorded). */
  mode: "up" | "failing";
  /** How long each /send answer is held back (to make overlapping requests observable). */
  answerDelayMs: number;
  /** /send attempts, answered or not. */
  attempts: number;
  /** The txn id of each /send attempt, answered or not, in order. */
  attemptedTxnIds: string[];
  /** Files the peer serves, by media id: inline, or (`location`) behind a Location URL. */
  media: Map<string, { type: string; filename?: string; bytes: Buffer; location?: string }>;
  /** Plays a server without the federation media endpoint (404 M_UNRECOGNIZED): only the legacy one answers. */
  legacyMediaOnly: boolean;
  /** Media requests received, as "federation <id>" or "legacy <id>". */
  mediaRequests: string[];
  /** Verifies requests from `serverName` with `key`. */
  trust(serverName: string, key: SigningKey): void;
  user(localpart: string): string;
  /** Every PDU received, in order. */
  pdus(): Pdu[];
  /** Every EDU received, in order. */
  edus(): RecordedTransaction["edus"];
  /** Stops listening (connections refused). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startRecordingPeer(): Promise<RecordingPeer> {
  const port = await freePort();
  const serverName = `127.0.0.1:${port}`;
  const signingKey = generateSigningKey();
  const keyRing = new TestKeyRing();
  const cert = testCertificate();
  let inFlight = 0;

  const peer: RecordingPeer = {
    serverName,
    port,
    signingKey,
    transactions: [],
    refused: 0,
    maxInFlight: 0,
    mode: "up",
    answerDelayMs: 0,
    attempts: 0,
    attemptedTxnIds: [],
    media: new Map(),
    legacyMediaOnly: false,
    mediaRequests: [],
    trust: (name, key) => void keyRing.add(name, key),
    user: (localpart) => `@${localpart}:${serverName}`,
    pdus: () => peer.transactions.flatMap((t) => t.pdus),
    edus: () => peer.transactions.flatMap((t) => t.edus),
    stop: async () => {},
    start: async () => {},
    close: async () => {},
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    if (req.method === "GET" && url === "/_matrix/key/v2/server") {
      return reply(res, 200, buildServerKeysResponse({ serverName, keys: [signingKey], validityMs: 3600_000 }));
    }
    const media = /^\/_matrix\/federation\/v1\/media\/download\/([^/?]+)(?:\?.*)?$/.exec(url);
    if (req.method === "GET" && media) {
      try {
        await authenticateRequest({ serverName, keyRing, now: Date.now() }, { method: "GET", uri: url, authorization: req.headersDistinct.authorization ?? [] });
      } catch (err) {
        peer.refused++;
        return reply(res, 401, { errcode: "M_UNAUTHORIZED", error: (err as Error).message });
      }
      const id = decodeURIComponent(media[1]!);
      peer.mediaRequests.push(`federation ${id}`);
      if (peer.legacyMediaOnly) return reply(res, 404, { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" });
      const file = peer.media.get(id);
      if (!file) return reply(res, 404, { errcode: "M_NOT_FOUND", error: "Not found" });
      const boundary = "peerboundary42";
      const filePart = file.location
        ? `Location: ${file.location}\r\n\r\n`
        : `Content-Type: ${file.type}\r\n${file.filename ? `Content-Disposition: attachment; filename=${file.filename}\r\n` : ""}\r\n`;
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n{}\r\n--${boundary}\r\n${filePart}`),
        file.location ? Buffer.alloc(0) : file.bytes,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      res.writeHead(200, { "content-type": `multipart/mixed; boundary=${boundary}`, "content-length": body.length });
      return void res.end(body);
    }
    const legacy = /^\/_matrix\/media\/v3\/download\/([^/?]+)\/([^/?]+)\?(.*)$/.exec(url);
    if (req.method === "GET" && legacy) {
      const id = decodeURIComponent(legacy[2]!);
      peer.mediaRequests.push(`legacy ${id} ${legacy[3]}`);
      const file = peer.media.get(id);
      if (!file || decodeURIComponent(legacy[1]!) !== serverName) return reply(res, 404, { errcode: "M_NOT_FOUND", error: "Not found" });
      res.writeHead(200, { "content-type": file.type, "content-length": file.bytes.length, ...(file.filename ? { "content-disposition": `inline; filename=${file.filename}` } : {}) });
      return void res.end(file.bytes);
    }
    const send = /^\/_matrix\/federation\/v1\/send\/([^/?]+)$/.exec(url);
    if (req.method !== "PUT" || !send) return reply(res, 404, { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" });
    const text = await readBody(req);
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      return reply(res, 400, { errcode: "M_NOT_JSON", error: "Content not JSON." });
    }
    let origin: string;
    try {
      origin = await authenticateRequest({ serverName, keyRing, now: Date.now() }, { method: "PUT", uri: url, authorization: req.headersDistinct.authorization ?? [], content: body });
    } catch (err) {
      peer.refused++;
      return reply(res, 401, { errcode: "M_UNAUTHORIZED", error: (err as Error).message });
    }
    peer.attempts++;
    peer.attemptedTxnIds.push(decodeURIComponent(send[1]!));
    inFlight++;
    peer.maxInFlight = Math.max(peer.maxInFlight, inFlight);
    try {
      if (peer.answerDelayMs > 0) await new Promise((r) => setTimeout(r, peer.answerDelayMs));
      if (peer.mode === "failing") return reply(res, 503, { errcode: "M_UNKNOWN", error: "down for maintenance" });
      expect(body.origin).toBe(origin);
      peer.transactions.push({ txnId: decodeURIComponent(send[1]!), origin, pdus: body.pdus ?? [], edus: body.edus ?? [] });
      reply(res, 200, { pdus: Object.fromEntries((body.pdus ?? []).map((p: Pdu) => [p.event_id ?? "", {}])) });
    } finally {
      inFlight--;
    }
  }

  let server: Server | undefined;
  const sockets = new Set<Duplex>();
  peer.start = async () => {
    if (server) return;
    const srv = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      handle(req, res).catch((err: unknown) => reply(res, 500, { errcode: "M_UNKNOWN", error: String(err) }));
    });
    srv.on("connection", (sock) => {
      sockets.add(sock);
      sock.on("close", () => sockets.delete(sock));
    });
    await new Promise<void>((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(port, "127.0.0.1", () => resolve());
    });
    server = srv;
  };
  peer.stop = async () => {
    const srv = server;
    server = undefined;
    if (!srv) return;
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  };
  peer.close = peer.stop;
  await peer.start();
  return peer;
}

/**
 * A user of the peer joins `roomId` on Weft server `t` (a public room): the join is built on the room's
 * current state and extremities, signed by the peer, and received through Weft's remote pipeline — its
 * signature checked with the key Weft fetches from the peer.
 */
export function joinFromPeer(t: TestServer, peer: RecordingPeer, roomId: string, userId: string, content: Record<string, unknown> = {}): Promise<string> {
  return joinAsRemote(t, { serverName: peer.serverName, key: peer.signingKey }, roomId, userId, content);
}

/** As joinFromPeer, for a user of any server whose key the test holds (another Weft server's). */
export async function joinAsRemote(t: TestServer, signer: { serverName: string; key: SigningKey }, roomId: string, userId: string, content: Record<string, unknown> = {}): Promise<string> {
  const s = t.hs.services;
  const room = (await loadRoom(s, roomId))!;
  const draft: EventDraft = { type: "m.room.member", stateKey: userId, sender: userId, content: { membership: "join", ...content } };
  const built = await buildEvent(s, { roomId, version: room.version, state: room.state, extremities: room.extremities, maxDepth: room.maxDepth }, draft, Date.now(), signer);
  const [outcome] = await receiveRemoteEvents(s, roomId, [{ pdu: built.pdu }]);
  expect(outcome).toMatchObject({ status: "accepted" });
  return built.eventId;
}

/** Waits until `check` returns a value (not undefined/false), polling; fails after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
