// Every http listener is served (issue 34 item 2; src/compat/listeners.ts): a client listener on plain
// HTTP beside a TLS federation listener, each answering only its own resources as Synapse's do; several
// bind addresses, Synapse's generated `['::', '0.0.0.0']` among them; X-Forwarded-For trusted only on a
// listener with x_forwarded; WebSocket upgrades (GraphQL subscriptions) on a listener other than the first.
import { Writable } from "node:stream";
import pino from "pino";
import { fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { freePort, insecureAgent, readJsonResponse, startTestServer, type TestServer } from "../helpers/server.ts";
import { testCertificate } from "../helpers/tls.ts";
import { registerUser } from "../helpers/users.ts";

async function get(url: string, headers: Record<string, string> = {}) {
  return readJsonResponse(await undiciFetch(url, { headers, dispatcher: insecureAgent }));
}

describe("a client listener and a TLS federation listener", () => {
  let t: TestServer;
  let client: string;
  let federation: string;
  let second: string;
  const lines: { msg?: string; ip?: string; path?: string }[] = [];

  beforeAll(async () => {
    const [fedPort, secondPort] = [await freePort(), await freePort()];
    const cert = testCertificate();
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const text of String(chunk).split("\n")) if (text) lines.push(JSON.parse(text));
        done();
      },
    });
    t = await startTestServer({
      log: pino({ level: "info" }, sink),
      config: {
        log_level: "info",
        tls_certificate_path: cert.certPath,
        tls_private_key_path: cert.keyPath,
        listeners: [
          { port: 0, type: "http", x_forwarded: true, bind_addresses: ["127.0.0.1"], resources: [{ names: ["client"] }] },
          { port: fedPort, type: "http", tls: true, bind_addresses: ["127.0.0.1"], resources: [{ names: ["federation"] }] },
          // Synapse's generated default: [::] is dual-stack here, so 0.0.0.0 is covered by it.
          { port: secondPort, type: "http", bind_addresses: ["::", "0.0.0.0"], resources: [{ names: ["client"] }] },
        ],
      },
    });
    client = t.baseUrl;
    federation = `https://127.0.0.1:${fedPort}`;
    second = `http://127.0.0.1:${secondPort}`;
  });
  afterAll(() => t?.close());

  it("lists every listener and address it serves", () => {
    expect(t.hs.urls).toHaveLength(3);
    expect(t.hs.urls[1]).toBe(federation);
    expect(t.hs.urls[2]).toMatch(/^http:\/\/\[::\]:\d+$/);
  });

  it("serves the client API on the client listener only", async () => {
    expect((await get(`${client}/_matrix/client/versions`)).status).toBe(200);
    expect((await get(`${second}/_matrix/client/versions`)).status).toBe(200);
    const onFederation = await get(`${federation}/_matrix/client/versions`);
    expect(onFederation.status).toBe(404);
    expect(onFederation.json).toEqual({ errcode: "M_UNRECOGNIZED", error: "Unrecognized request" });
  });

  it("serves federation and server keys over TLS on the federation listener only", async () => {
    const version = await get(`${federation}/_matrix/federation/v1/version`);
    expect(version.status).toBe(200);
    expect(version.json.server.name).toBe("Weft");
    const keys = await get(`${federation}/_matrix/key/v2/server`);
    expect(keys.status).toBe(200);
    expect(keys.json.server_name).toBe("weft.test");
    for (const p of ["/_matrix/federation/v1/version", "/_matrix/key/v2/server"]) {
      const r = await get(client + p);
      expect([p, r.status, r.json.errcode]).toEqual([p, 404, "M_UNRECOGNIZED"]);
    }
  });

  it("answers /health on every listener", async () => {
    for (const base of [client, federation, second]) {
      const res = await undiciFetch(`${base}/health`, { dispatcher: insecureAgent });
      expect([base, res.status, await res.text()]).toEqual([base, 200, "OK"]);
    }
  });

  it("answers on the IPv6 address of a [::] listener too", async () => {
    expect((await get(second.replace("127.0.0.1", "[::1]") + "/_matrix/client/versions")).status).toBe(200);
  });

  it("trusts X-Forwarded-For on the x_forwarded listener only", async () => {
    const headers = { "x-forwarded-for": "203.0.113.9" };
    await get(`${client}/_matrix/client/versions?from=proxied`, headers);
    await get(`${second}/_matrix/client/versions?from=direct`, headers);
    const ipOf = (marker: string) => lines.find((l) => l.path?.includes(marker))?.ip;
    await expect.poll(() => ipOf("proxied")).toBe("203.0.113.9");
    await expect.poll(() => ipOf("direct")).toMatch(/127\.0\.0\.1$/);
  });

  it("takes GraphQL subscriptions on a listener other than the first", async () => {
    const alice = await registerUser(t, "alice");
    const ws = new WebSocket(`${second.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    const ack = await new Promise<unknown>((resolve, reject) => {
      ws.once("error", reject);
      ws.once("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${alice.access_token}` } })));
      ws.once("message", (data) => resolve(JSON.parse(String(data))));
    });
    ws.close();
    expect(ack).toEqual({ type: "connection_ack" });
  });
});
