// A hostile federation server for tests of Weft's outbound side: an HTTPS listener named `127.0.0.1:PORT`
// with a signing key, whose every answer — its key document included, when the test says so — is whatever
// the test's `answer` function plans: any status, headers and raw body bytes (not JSON, wrong types,
// huge, deep), a connection closed before or in the middle of a body, an answer that never comes or
// drips. Records each request. Unlike fake-origin.ts it never assumes its requests or its answers are
// well formed.
import { createServer, type Server } from "node:https";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { AddressInfo } from "node:net";
import { generateSigningKey, type SigningKey } from "../../src/domain/signing-key.ts";
import { buildServerKeysResponse } from "../../src/domain/keys/server-keys.ts";
import { testCertificate } from "./tls.ts";
import { freePort } from "./server.ts";

export interface HostileRequest {
  method: string;
  /** The path, without the query, as sent (not decoded). */
  path: string;
  query: URLSearchParams;
  /** The raw body text. */
  body: string;
}

/** What the peer does with one request. */
export type HostilePlan =
  /** An answer: status, headers (content-type defaults to JSON) and body bytes, sent at once or dripped. */
  | { kind: "answer"; status: number; headers?: Record<string, string>; body: string | Buffer; dripMs?: number }
  /** Headers and the first bytes of a body, then the connection is cut (or left hanging). */
  | { kind: "partial"; status: number; headers?: Record<string, string>; head: string | Buffer; then: "close" | "hang" }
  /** The connection is cut before any answer. */
  | { kind: "close" }
  /** No answer at all: the request hangs until the caller gives up. */
  | { kind: "hang" };

export interface HostilePeer {
  serverName: string;
  port: number;
  key: SigningKey;
  requests: HostileRequest[];
  /** The plan for each request; the key document (GET /_matrix/key/v2/server) is honest unless `keys` says otherwise. */
  answer: (req: HostileRequest) => HostilePlan;
  /** Plans the key document (undefined: the honest one). */
  keys: ((req: HostileRequest) => HostilePlan | undefined) | undefined;
  /** The honest key document, to start hostile variants from. */
  keyDocument(): Record<string, unknown>;
  close(): Promise<void>;
}

export const json = (status: number, body: unknown): HostilePlan => ({ kind: "answer", status, body: JSON.stringify(body) });

/** `tls: false` plays a plain-HTTP service (an application service, a push gateway) at `url`. */
export async function startHostilePeer(
  answer: HostilePeer["answer"] = () => json(404, { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" }),
  opts: { tls?: boolean } = {},
): Promise<HostilePeer & { url: string }> {
  const cert = testCertificate();
  const port = await freePort();
  const serverName = `127.0.0.1:${port}`;
  const key = generateSigningKey();
  const sockets = new Set<Duplex>();
  const timers = new Set<NodeJS.Timeout>();
  const tls = opts.tls ?? true;
  const peer: HostilePeer & { url: string } = {
    url: `${tls ? "https" : "http"}://${serverName}`,
    serverName,
    port,
    key,
    requests: [],
    answer,
    keys: undefined,
    keyDocument: () => buildServerKeysResponse({ serverName, keys: [key], validityMs: 3600_000 }) as unknown as Record<string, unknown>,
    close: async () => {},
  };

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  function carry(res: ServerResponse, plan: HostilePlan): void {
    res.on("error", () => {});
    switch (plan.kind) {
      case "close":
        res.socket?.destroy();
        return;
      case "hang":
        return;
      case "partial": {
        res.writeHead(plan.status, { "content-type": "application/json", ...plan.headers });
        res.write(plan.head);
        if (plan.then === "close") later(20, () => res.socket?.destroy());
        return;
      }
      case "answer": {
        const body = Buffer.isBuffer(plan.body) ? plan.body : Buffer.from(plan.body);
        const headers = { "content-type": "application/json", ...plan.headers };
        if (!plan.dripMs) {
          res.writeHead(plan.status, { "content-length": String(body.length), ...headers }).end(body);
          return;
        }
        res.writeHead(plan.status, headers);
        let at = 0;
        const step = () => {
          if (res.destroyed) return;
          if (at >= body.length) return void res.end();
          res.write(body.subarray(at, at + 16));
          at += 16;
          later(plan.dripMs!, step);
        };
        step();
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? "/", `https://${serverName}`);
    const r: HostileRequest = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, body: Buffer.concat(chunks).toString("utf8") };
    if (r.path === "/_matrix/key/v2/server" || r.path.startsWith("/_matrix/key/v2/server/")) {
      return carry(res, peer.keys?.(r) ?? json(200, peer.keyDocument()));
    }
    peer.requests.push(r);
    carry(res, peer.answer(r));
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => void handle(req, res).catch(() => res.socket?.destroy());
  const server: Server | import("node:http").Server = tls ? createServer({ cert: cert.cert, key: cert.key }, onRequest) : createHttpServer(onRequest);
  server.on("connection", (sock) => {
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
  });
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  peer.port = (server.address() as AddressInfo).port;
  peer.close = () =>
    new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      // Stop accepting first, then cut every connection (kept-alive ones included): nothing left to wait for.
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
    });
  return peer;
}

/** A multipart/mixed media answer (the spec's two parts), whole or cut after `cutAt` bytes of the file. */
export function mediaMultipart(file: Buffer, type = "application/octet-stream"): { headers: Record<string, string>; body: Buffer } {
  const boundary = "hostileboundary7";
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n{}\r\n--${boundary}\r\nContent-Type: ${type}\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { headers: { "content-type": `multipart/mixed; boundary=${boundary}`, "content-length": String(body.length) }, body };
}
