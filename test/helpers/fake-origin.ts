// A stand-in federation server for tests: an HTTPS listener on loopback named `127.0.0.1:PORT`, with its
// own signing key, that serves its key document (so a Weft server can verify what it signs) and answers
// every other request from the test's handler — honest answers built from a hand-made DAG, or hostile
// ones. It checks no signature and records every request it gets. Also: its identity, to sign events
// (test/helpers/dag.ts) and requests (federation.ts `signedBy`) as this server.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { generateSigningKey, type SigningKey } from "../../src/domain/signing-key.ts";
import { buildServerKeysResponse } from "../../src/domain/keys/server-keys.ts";
import { testCertificate } from "./tls.ts";
import { remoteServer, type TestServerIdentity } from "./dag.ts";
import { freePort } from "./server.ts";

export interface FakeRequest {
  method: string;
  /** The path, decoded segment by segment, without the query. */
  path: string;
  query: URLSearchParams;
  body: unknown;
  /** The Authorization header (an X-Matrix signature), as sent. */
  authorization?: string;
}

/**
 * An answer: a status and a JSON body; undefined means 404 M_UNRECOGNIZED. `dripMs`: the body is sent a
 * byte at a time, one every `dripMs` (a server answering slowly forever), until the client gives up.
 * `body`: the JSON already serialised (a huge answer made once, not on each request's turn); `json` ignored.
 */
export type FakeAnswer = { status: number; json: unknown; dripMs?: number; body?: string } | undefined;
export type FakeHandler = (req: FakeRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeOrigin extends TestServerIdentity {
  port: number;
  key: SigningKey;
  /** Every request received (key requests left out), in order. */
  requests: FakeRequest[];
  /** The answer to each request; replace it at will. */
  handler: FakeHandler;
  /** The key document served instead of the one of `key` (a key rotation, say). */
  keyDocument?: () => unknown;
  close(): Promise<void>;
}

function drip(res: import("node:http").ServerResponse, body: string, ms: number): void {
  let at = 0;
  const step = () => {
    if (res.destroyed) return;
    if (at >= body.length) return void res.end();
    res.write(body[at++]);
    setTimeout(step, ms).unref();
  };
  res.on("error", () => {});
  step();
}

export async function startFakeOrigin(handler: FakeHandler = () => undefined): Promise<FakeOrigin> {
  const cert = testCertificate();
  const port = await freePort();
  const serverName = `127.0.0.1:${port}`;
  const key = generateSigningKey();
  const origin: FakeOrigin = { ...remoteServer(serverName, key), port, key, requests: [], handler, close: async () => {} };
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const url = new URL(req.url ?? "/", `https://${serverName}`);
        const path = url.pathname.split("/").map(decodeURIComponent).join("/");
        let answer: FakeAnswer;
        if (path === "/_matrix/key/v2/server") {
          answer = { status: 200, json: origin.keyDocument?.() ?? buildServerKeysResponse({ serverName, keys: [key], validityMs: 3600_000 }) };
        } else {
          const text = Buffer.concat(chunks).toString("utf8");
          const fake: FakeRequest = { method: req.method ?? "GET", path, query: url.searchParams, body: text ? JSON.parse(text) : undefined, authorization: req.headers.authorization };
          origin.requests.push(fake);
          try {
            answer = await origin.handler(fake);
          } catch (err) {
            answer = { status: 500, json: { errcode: "M_UNKNOWN", error: String(err) } };
          }
        }
        const body = answer?.body ?? JSON.stringify(answer?.json ?? { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" });
        if (answer?.dripMs) return drip(res.writeHead(answer.status, { "content-type": "application/json" }), body, answer.dripMs);
        res.writeHead(answer?.status ?? 404, { "content-type": "application/json" }).end(body);
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  origin.port = (server.address() as AddressInfo).port;
  origin.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return origin;
}
