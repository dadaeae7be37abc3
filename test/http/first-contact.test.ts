// First contact (issue 19 item 7): what a newcomer meets with a browser and a fresh config — the "it works"
// page at /_matrix/static/ (and `/` redirecting there, as Synapse), the GraphQL explorer at /graphql with
// its assets served locally, and a misspelt option named in the log with the nearest known one.
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

describe("first contact", () => {
  let t: TestServer;
  const lines: { level: number; msg: string }[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const text of String(chunk).split("\n")) if (text) lines.push(JSON.parse(text));
        done();
      },
    });
    t = await startTestServer({ config: { enable_registraton: true }, log: pino({ level: "warn" }, sink) });
  });
  afterAll(() => t?.close());

  it("warns about a misspelt option, naming the nearest known one", () => {
    const warning = lines.find((l) => l.level === 40 && l.msg.includes("enable_registraton"));
    expect(warning?.msg).toBe(`config: unknown option "enable_registraton" ignored (did you mean "enable_registration"?)`);
  });

  it("says the server runs at /_matrix/static/, and / leads there", async () => {
    const root = await fetch(`${t.baseUrl}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/_matrix/static/");
    for (const p of ["/_matrix/static/", "/_matrix/static"]) {
      const res = await fetch(t.baseUrl + p);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await res.text();
      expect(html).toContain("Weft is running");
      expect(html).toContain("weft.test");
    }
  });

  it("serves the GraphQL explorer to browsers at /graphql, every asset from this server", async () => {
    const res = await fetch(`${t.baseUrl}/graphql`, { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBe(6);
    for (const ref of refs) {
      expect(ref.startsWith("/graphql/explorer/"), ref).toBe(true); // no CDN
      const asset = await fetch(t.baseUrl + ref);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get("content-type"), ref).toMatch(ref.endsWith(".css") ? /^text\/css/ : /^text\/javascript/);
      expect((await asset.arrayBuffer()).byteLength, ref).toBeGreaterThan(1000);
    }
    const script = await (await fetch(`${t.baseUrl}/graphql/explorer/explorer.js`)).text();
    expect(script).toContain("graphqlWs.createClient");
    expect(script).toContain("Authorization");
    expect((await fetch(`${t.baseUrl}/graphql/explorer/nope.js`)).status).toBe(404);
  });

  it("still answers GraphQL requests at /graphql as before", async () => {
    const alice = await registerUser(t, "alice");
    // What the explorer's fetcher sends: a JSON POST with the token from the Headers tab.
    const post = await t.call("POST", "/graphql", { token: alice.access_token, body: { query: "query Me { viewer { userId } }" } });
    expect(post.status).toBe(200);
    expect(post.json.data.viewer.userId).toBe(alice.user_id);
    // A GET carrying a query is a GraphQL request even from a browser (and Apollo's CSRF rule applies).
    const get = await fetch(`${t.baseUrl}/graphql?query=${encodeURIComponent("{ viewer { userId } }")}`, { headers: { accept: "text/html" } });
    expect(get.headers.get("content-type")).toMatch(/json/);
    // A non-browser GET without a query is no page either.
    const plain = await fetch(`${t.baseUrl}/graphql`, { headers: { accept: "application/json" } });
    expect(plain.headers.get("content-type")).toMatch(/json/);
  });
});
