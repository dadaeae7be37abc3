// The REST face's path aliases (src/compat/path-aliases.ts): each route is registered once and its aliases
// (/_proto, client r0, media r0 and v1, /_synapse/admin) rewritten to it before routing. A route answers
// under exactly the aliases it is declared for — 404, or 405 where the alias serves other methods — and
// the URL as sent is what logs, metrics and UIA see.
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePrometheusText } from "../helpers/prometheus.ts";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { canonicalRoute, splitPrefix } from "../../src/compat/path-aliases.ts";

describe("path alias splitting", () => {
  it("splits brand, client and media versions and the admin brands, as the router reads the path", () => {
    expect(canonicalRoute("/_proto/client/r0/login")).toEqual({ url: "/_matrix/client/v3/login", prefix: "/_proto/client/r0" });
    expect(canonicalRoute("/_matrix/client/v3/login")).toEqual({ url: "/_matrix/client/v3/login", prefix: "/_matrix/client/v3" });
    expect(canonicalRoute("/_proto/client/v1/rooms/:roomId/hierarchy")).toEqual({ url: "/_matrix/client/v1/rooms/:roomId/hierarchy", prefix: "/_proto" });
    expect(canonicalRoute("/_proto/media/v1/create")).toEqual({ url: "/_matrix/media/v3/create", prefix: "/_proto/media/v1" });
    expect(canonicalRoute("/_synapse/admin/v2/users/:userId")).toEqual({ url: "/_impl/admin/v2/users/:userId", prefix: "/_synapse/admin" });
    expect(canonicalRoute("/_synapse/client/oidc/callback")).toEqual({ url: "/_synapse/client/oidc/callback", prefix: undefined });
    expect(canonicalRoute("/.well-known/matrix/client")).toEqual({ url: "/.well-known/matrix/client", prefix: undefined });
    // Duplicate slashes and percent-encoded segments, as the router ignores and decodes them.
    expect(splitPrefix("//_proto//client/%72%30/sync?since=1")).toMatchObject({ prefix: "/_proto/client/r0", canonical: "/_matrix/client/v3" });
    expect(splitPrefix("/_proto?x=1")).toMatchObject({ prefix: "/_proto", canonical: "/_matrix" });
    expect(splitPrefix("/_matrixx/client/r0/sync")).toBeUndefined();
    expect(splitPrefix("/%ZZ/client/r0/sync")).toBeUndefined();
  });
});

describe.each(backends())("path aliases on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  const lines: { msg?: string; path?: string; status?: number; reqId?: string }[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const text of String(chunk).split("\n")) if (text) lines.push(JSON.parse(text));
        done();
      },
    });
    t = await startTestServer({
      backend,
      log: pino({ level: "info" }, sink),
      config: {
        log_level: "info",
        enable_metrics: true,
        listeners: [{ port: 0, type: "http", bind_addresses: ["127.0.0.1"], resources: [{ names: ["client", "federation", "metrics"] }] }],
      },
    });
    alice = await registerUser(t, "alice");
  });
  afterAll(() => t?.close());

  it("serves a client route under both brands and r0 and v3, percent-encoded and with duplicate slashes too", async () => {
    for (const p of ["/_matrix/client/v3", "/_matrix/client/r0", "/_proto/client/v3", "/_proto/client/r0", "//_proto//client//r0", "/%5Fproto/client/%72%30"]) {
      const res = await t.call("GET", `${p}/account/whoami`, { token: alice.access_token });
      expect([p, res.status, res.json.user_id]).toEqual([p, 200, alice.user_id]);
    }
  });

  it("answers a route only under the versions it is declared for: 404 elsewhere, 405 where the alias serves other methods", async () => {
    // /login/get_token is v1 only (under both brands).
    for (const p of ["/_matrix/client/v1", "/_proto/client/v1"]) expect((await t.call("POST", `${p}/login/get_token`, { body: {} })).status, p).toBe(401);
    for (const p of ["/_matrix/client/v3", "/_matrix/client/r0", "/_proto/client/r0"]) {
      const res = await t.call("POST", `${p}/login/get_token`, { body: {} });
      expect([p, res.status, res.json.errcode]).toEqual([p, 404, "M_UNRECOGNIZED"]);
    }
    // The media /create is v1 only, the upload to a created id v3 only.
    const created = await t.call("POST", "/_proto/media/v1/create", { token: alice.access_token });
    expect(created.status).toBe(200);
    for (const p of ["/_matrix/media/v3", "/_matrix/media/r0", "/_proto/media/v3"]) {
      expect((await t.call("POST", `${p}/create`, { token: alice.access_token })).status, p).toBe(404);
      // No method is served there under that alias: 404, not 405.
      expect((await t.call("GET", `${p}/create`, { token: alice.access_token })).status, p).toBe(404);
    }
    expect((await t.call("GET", "/_matrix/media/v1/create", { token: alice.access_token })).status).toBe(405);
    const mediaId = String(created.json.content_uri).split("/").pop();
    for (const p of ["/_matrix/media/r0", "/_proto/media/v1"]) {
      const res = await t.call("PUT", `${p}/upload/${t.config.server_name}/${mediaId}`, { token: alice.access_token, raw: "x", headers: { "content-type": "text/plain" } });
      expect([p, res.status, res.json.errcode]).toEqual([p, 404, "M_UNRECOGNIZED"]);
    }
    // A wrong method under an alias that serves the path.
    for (const p of ["/_matrix/client/r0/login", "/_proto/client/v3/login", "/_proto/client/r0/login"]) {
      const res = await t.call("DELETE", p);
      expect([p, res.status, res.json.errcode]).toEqual([p, 405, "M_UNRECOGNIZED"]);
    }
  });

  it("serves the admin API under /_impl/admin and /_synapse/admin, and /_matrix-only pages only there", async () => {
    // Served (it wants a token) under both, at v1 only.
    for (const p of ["/_impl/admin/v1/server_version", "/_synapse/admin/v1/server_version"]) {
      const res = await t.call("GET", p);
      expect([p, res.status, res.json.errcode]).toEqual([p, 401, "M_MISSING_TOKEN"]);
    }
    for (const p of ["/_impl/admin/v3/server_version", "/_synapse/admin/v3/server_version"]) expect((await t.call("GET", p)).status, p).toBe(404);
    // Two patterns match /registration_tokens/new: each method goes to the one serving it (GET: the token
    // named "new", as Synapse routes it); a method neither serves is 405.
    for (const p of ["/_impl/admin/v1/registration_tokens/new", "/_synapse/admin/v1/registration_tokens/new"]) {
      const get = await t.call("GET", p);
      expect([p, get.status, get.json.errcode]).toEqual([p, 401, "M_MISSING_TOKEN"]);
      const patch = await t.call("PATCH", p, { body: {} });
      expect([p, patch.status, patch.json.errcode]).toEqual([p, 405, "M_UNRECOGNIZED"]);
    }
    expect((await t.call("GET", "/_matrix/static/")).status).toBe(200);
    const proto = await t.call("GET", "/_proto/static/");
    expect([proto.status, proto.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
  });

  it("answers OPTIONS with CORS under every alias, and keeps trailing slashes significant", async () => {
    for (const p of ["/_proto/client/r0/login", "/_synapse/admin/v1/users", "/_proto/media/r0/config"]) {
      const res = await t.call("OPTIONS", p);
      expect([p, res.status, res.headers.get("access-control-allow-origin")]).toEqual([p, 200, "*"]);
    }
    expect((await t.call("GET", "/_proto/client/r0/login")).status).toBe(200);
    expect((await t.call("GET", "/_proto/client/r0/login/")).status).toBe(404);
  });

  it("logs and counts a request under the path it was sent to", async () => {
    const res = await fetch(`${t.baseUrl}/_proto/client/r0/account/whoami`, { headers: { authorization: `Bearer ${alice.access_token}` } });
    expect(res.status).toBe(200);
    const reqId = res.headers.get("x-request-id");
    const deadline = Date.now() + 10_000;
    while (!lines.some((l) => l.reqId === reqId && l.status !== undefined)) {
      if (Date.now() > deadline) throw new Error("no request line");
      await new Promise((r) => setImmediate(r));
    }
    expect(lines.find((l) => l.reqId === reqId && l.status !== undefined)?.path).toBe("/_proto/client/r0/account/whoami");
    const metrics = parsePrometheusText(await (await fetch(`${t.baseUrl}/_synapse/metrics`)).text());
    const routes = metrics.get("weft_http_requests_total")!.samples.map((s) => s.labels.route);
    expect(routes).toContain("/_proto/client/r0/account/whoami");
    // A request its route does not serve under that alias is counted as unmatched, as any 404.
    await t.call("POST", "/_matrix/client/r0/login/get_token", { body: {} });
    const after = parsePrometheusText(await (await fetch(`${t.baseUrl}/_synapse/metrics`)).text());
    const miss = after.get("weft_http_requests_total")!.samples.find((s) => s.labels.route === "unmatched" && s.labels.method === "POST" && s.labels.status === "404");
    expect(miss).toBeDefined();
    expect(after.get("weft_http_requests_total")!.samples.some((s) => String(s.labels.route).startsWith("/_matrix/client/v3/login/get_token"))).toBe(false);
  });
});
