// The outbound federation client against small HTTPS servers on loopback: what reaches the wire (the Host
// header, SNI, the X-Matrix signature over path and query), IP range refusals before any connection (DNS
// answers checked, the checked address used), certificate checks on by default, .well-known delegation
// and redirects, and every way a remote answer can fail (status + errcode, not JSON, too large, too slow).
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FederationClient, type FederationClientOptions } from "../../src/federation/client.ts";
import { FederationError } from "../../src/federation/errors.ts";
import type { Dns } from "../../src/federation/transport.ts";
import { authenticateRequest } from "../../src/domain/federation/request-auth.ts";
import { LocalKeyRing } from "../../src/domain/keys/key-ring.ts";
import { DEFAULT_IP_RANGE_BLACKLIST, parseCidrList } from "../../src/domain/net/ip-ranges.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";
import { testCertificate } from "../helpers/tls.ts";

interface Seen {
  method: string;
  url: string;
  host: string | undefined;
  sni: string | false | undefined;
  authorization: string | undefined;
  body: string;
}

interface Peer {
  port: number;
  seen: Seen[];
  connections: number;
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  server: Server;
}

async function peer(): Promise<Peer> {
  const { cert, key } = testCertificate();
  const p: Peer = { port: 0, seen: [], connections: 0, handler: (_q, res) => res.end("{}"), server: undefined as unknown as Server };
  p.server = createServer({ cert, key }, (req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      p.seen.push({ method: req.method!, url: req.url!, host: req.headers.host, sni: (req.socket as TLSSocket & { servername?: string | false }).servername, authorization: req.headers.authorization, body });
      p.handler(req, res, body);
    });
  });
  p.server.on("connection", () => p.connections++);
  await new Promise<void>((r) => p.server.listen(0, "127.0.0.1", r));
  p.port = (p.server.address() as { port: number }).port;
  return p;
}

const key = generateSigningKey();
const loopbackOk = { blacklist: parseCidrList(DEFAULT_IP_RANGE_BLACKLIST), whitelist: parseCidrList(["127.0.0.0/8", "::1/128"]) };
const clients: FederationClient[] = [];

function client(o: Partial<FederationClientOptions> = {}): FederationClient {
  const c = new FederationClient({
    serverName: "us.test", signingKeys: [key], ipRanges: loopbackOk, verifyCertificates: false, log: pino({ level: "silent" }),
    dns: { resolveSrv: async () => [], lookup: async () => { throw new Error("no DNS in this test"); } },
    ...o,
  });
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<FederationError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FederationError);
    return err as FederationError;
  }
  throw new Error("expected a FederationError");
}

let a: Peer;
let b: Peer;
beforeAll(async () => {
  [a, b] = await Promise.all([peer(), peer()]);
});
afterEach(() => {
  a.seen.length = 0;
  b.seen.length = 0;
  a.handler = (_q, res) => res.end("{}");
  b.handler = (_q, res) => res.end("{}");
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  for (const p of [a, b]) {
    p.server.closeAllConnections();
    await new Promise((r) => p.server.close(r));
  }
});

describe("what goes on the wire", () => {
  it("signs path and query (X-Matrix), sends the server name as Host, no SNI for an IP literal", async () => {
    a.handler = (_q, res) => res.setHeader("content-type", "application/json").end(JSON.stringify({ ok: true }));
    const dest = `127.0.0.1:${a.port}`;
    const out = await client().getJson(dest, "/_matrix/federation/v1/query/profile", { user_id: "@x y:a.b", field: "displayname" });
    expect(out).toEqual({ ok: true });
    const [seen] = a.seen;
    expect(seen!.url).toBe("/_matrix/federation/v1/query/profile?user_id=%40x%20y%3Aa.b&field=displayname");
    expect(seen!.host).toBe(dest);
    expect(seen!.sni).toBe(false);
    const origin = await authenticateRequest(
      { serverName: dest, keyRing: new LocalKeyRing("us.test", [key]), now: Date.now() },
      { method: "GET", uri: seen!.url, authorization: [seen!.authorization!] },
    );
    expect(origin).toBe("us.test");
  });

  it("sends a JSON body and signs its content", async () => {
    const dest = `127.0.0.1:${a.port}`;
    await client().putJson(dest, "/_matrix/federation/v1/send/t1", { pdus: [], edus: [{ x: "é" }] });
    const [seen] = a.seen;
    expect(seen!.method).toBe("PUT");
    expect(JSON.parse(seen!.body)).toEqual({ pdus: [], edus: [{ x: "é" }] });
    await authenticateRequest(
      { serverName: dest, keyRing: new LocalKeyRing("us.test", [key]), now: Date.now() },
      { method: "PUT", uri: seen!.url, authorization: [seen!.authorization!], content: JSON.parse(seen!.body) },
    );
  });

  it("a DNS name with a port: every resolved address is checked, the connection goes to an allowed one, SNI and Host name it", async () => {
    const dns: Dns = { resolveSrv: async () => [], lookup: async (h) => (h === "fed.test" ? ["10.1.2.3", "127.0.0.1"] : []) };
    await client({ dns }).getJson(`fed.test:${a.port}`, "/x");
    expect(a.seen[0]).toMatchObject({ host: `fed.test:${a.port}`, sni: "fed.test" });
  });
});

describe("refusals before connecting", () => {
  it("refuses loopback without ip_range_whitelist: no connection is made", async () => {
    const before = a.connections;
    const e = await failure(client({ ipRanges: { blacklist: parseCidrList(DEFAULT_IP_RANGE_BLACKLIST), whitelist: [] } }).getJson(`127.0.0.1:${a.port}`, "/x"));
    expect(e.kind).toBe("blocked");
    expect([e.httpStatus, e.errcode]).toEqual([502, "M_UNKNOWN"]);
    expect(a.connections).toBe(before);
  });

  it("refuses a name whose every address is blacklisted (a rebinding answer cannot slip through)", async () => {
    const dns: Dns = { resolveSrv: async () => [], lookup: async () => ["127.0.0.1", "10.0.0.1"] };
    const before = a.connections;
    const strict = { blacklist: parseCidrList(DEFAULT_IP_RANGE_BLACKLIST), whitelist: [] };
    expect((await failure(client({ dns, ipRanges: strict }).getJson(`evil.test:${a.port}`, "/x"))).kind).toBe("blocked");
    expect((await failure(client({ dns, ipRanges: strict }).getJson("[::1]:8448", "/x"))).kind).toBe("blocked");
    expect((await failure(client({ dns, ipRanges: { blacklist: [], whitelist: [] } }).getJson("0.0.0.0:8448", "/x"))).kind).toBe("blocked");
    expect(a.connections).toBe(before);
  });
});

describe("certificates", () => {
  it("are checked by default: a self-signed certificate is refused", async () => {
    const e = await failure(client({ verifyCertificates: true }).getJson(`127.0.0.1:${a.port}`, "/x"));
    expect(e.kind).toBe("unreachable");
    expect(a.seen).toEqual([]);
  });

  it("federation_certificate_verification_whitelist skips the check for matching names only", async () => {
    const dns: Dns = { resolveSrv: async () => [], lookup: async () => ["127.0.0.1"] };
    const c = client({ verifyCertificates: true, certificateWhitelist: ["*.lab.test"], dns });
    await c.getJson(`fed.lab.test:${a.port}`, "/x");
    expect(a.seen).toHaveLength(1);
    expect((await failure(c.getJson(`fed.prod.test:${a.port}`, "/x"))).kind).toBe("unreachable");
  });
});

describe(".well-known delegation over HTTPS", () => {
  it("follows m.server (and a redirect) to the delegated server, with the delegated Host header", async () => {
    const dns: Dns = { resolveSrv: async () => [], lookup: async (h) => (h === "deleg.test" ? ["127.0.0.1"] : []) };
    a.handler = (req, res) => {
      if (req.url === "/.well-known/matrix/server") res.writeHead(302, { location: "/elsewhere" }).end();
      else if (req.url === "/elsewhere") res.setHeader("cache-control", "max-age=600").end(JSON.stringify({ "m.server": `127.0.0.1:${b.port}` }));
      else res.writeHead(404).end();
    };
    b.handler = (_q, res) => res.end(JSON.stringify({ from: "b" }));
    const c = client({ dns, wellKnownPort: a.port });
    expect(await c.getJson("deleg.test", "/_matrix/federation/v1/version")).toEqual({ from: "b" });
    expect(a.seen.map((s) => [s.url, s.host, s.sni])).toEqual([
      // (Host carries the port only because this test serves .well-known on another port than 443.)
      ["/.well-known/matrix/server", `deleg.test:${a.port}`, "deleg.test"],
      ["/elsewhere", `deleg.test:${a.port}`, "deleg.test"],
    ]);
    expect(b.seen.map((s) => [s.url, s.host])).toEqual([["/_matrix/federation/v1/version", `127.0.0.1:${b.port}`]]);
    // Cached: the second request asks .well-known nothing.
    await c.getJson("deleg.test", "/_matrix/federation/v1/version");
    expect(a.seen).toHaveLength(2);
  });
});

describe("remote answers", () => {
  const dest = () => `127.0.0.1:${a.port}`;

  it("an error status becomes a FederationError with the remote status and errcode (never ours)", async () => {
    a.handler = (_q, res) => res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ errcode: "M_FORBIDDEN", error: "no" }));
    const e = await failure(client().getJson(dest(), "/x"));
    expect([e.kind, e.remoteStatus, e.remoteErrcode, e.remoteError, e.is(403, "M_FORBIDDEN")]).toEqual(["remote", 403, "M_FORBIDDEN", "no", true]);
    expect([e.httpStatus, e.errcode]).toEqual([502, "M_UNKNOWN"]);
    a.handler = (_q, res) => res.writeHead(500).end(JSON.stringify({ errcode: "not an errcode <script>", error: 12 }));
    const odd = await failure(client().getJson(dest(), "/x"));
    expect([odd.remoteStatus, odd.remoteErrcode, odd.remoteError]).toEqual([500, undefined, undefined]);
  });

  it("a 2xx that is not JSON is an invalid response", async () => {
    a.handler = (_q, res) => res.end("<html>");
    expect((await failure(client().getJson(dest(), "/x"))).kind).toBe("invalid_response");
  });

  it("answers over the size cap are cut off, announced or streamed", async () => {
    a.handler = (_q, res) => res.end(JSON.stringify({ big: "x".repeat(5000) }));
    expect((await failure(client().getJson(dest(), "/x", undefined, { maxBytes: 1000 }))).kind).toBe("too_large");
    a.handler = (_q, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"big":"${"x".repeat(3000)}`);
      res.end(`${"y".repeat(3000)}"}`);
    };
    expect((await failure(client().getJson(dest(), "/x", undefined, { maxBytes: 4000 }))).kind).toBe("too_large");
    expect(await client().getJson(dest(), "/x", undefined, { maxBytes: 10_000 })).toMatchObject({ big: expect.any(String) });
  });

  it("a server that does not answer times out", async () => {
    a.handler = () => {};
    const e = await failure(client().getJson(dest(), "/x", undefined, { timeoutMs: 300 }));
    expect(e.kind).toBe("timeout");
  });

  it("nothing listening is unreachable", async () => {
    expect((await failure(client().getJson("127.0.0.1:1", "/x"))).kind).toBe("unreachable");
  });
});
