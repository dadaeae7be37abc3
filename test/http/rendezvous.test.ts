// MSC4108's rendezvous sessions (QR-code login's transport) on SQLite and PostgreSQL, beside the pinned live
// Synapse with experimental_features.msc4108_enabled and the same assertions: POST creates a session and
// answers its URL with the MSC's headers; GET reads it (304 with a current If-None-Match); PUT replaces it
// with a current If-Match only (412 with Synapse's errcodes otherwise, 400 without one); DELETE ends it;
// payloads are opaque bytes of at most 4 KiB sent as text/plain; browsers may preflight every call; no
// access token is needed; a store full of sessions drops the oldest. Expiry (60 s) is driven by Weft's test
// clock: Synapse's clock cannot be moved from outside. Synapse 1.163 refuses msc4108_enabled without
// OAuth delegation (matrix_authentication_service), so its server has that on, aimed at no MAS: no
// rendezvous call reaches it. With msc4108_delegation_endpoint the POST is a 307 there; with neither option
// the routes are not served.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock } from "../helpers/server.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { parseConfig, ConfigError } from "../../src/config/config.ts";

const CREATE = "/_matrix/client/unstable/org.matrix.msc4108/rendezvous";
const TEXT = { "content-type": "text/plain" };

interface Home {
  name: string;
  baseUrl: string;
  /** Weft's test clock (Synapse's cannot be moved). */
  clock?: TestClock;
  close(): Promise<void>;
}

/** Synapse refuses MSC4108 unless OAuth is delegated to MAS; a MAS that is never called does. */
const SYNAPSE_MAS = {
  matrix_authentication_service: { enabled: true, endpoint: "http://127.0.0.1:9/", secret: "rendezvous-test" },
  password_config: { enabled: false },
};

const homes = (experimental: Record<string, unknown>): [string, () => Promise<Home>][] => [
  ...backends().map((backend): [string, () => Promise<Home>] => [`Weft on ${backend}`, async () => {
    const clock = new TestClock();
    const t = await startTestServer({ backend, clock, config: { experimental_features: experimental } });
    return { name: "Weft", baseUrl: t.baseUrl, clock, close: () => t.close() };
  }]),
  ["Synapse", async () => {
    const s = await startSynapse({ config: { experimental_features: experimental, ...SYNAPSE_MAS } });
    return { name: "Synapse", baseUrl: s.clientUrl, close: () => s.close() };
  }],
];

interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  json: any;
}

async function call(home: Home, method: string, path: string, init: { headers?: Record<string, string>; body?: string | Uint8Array | ReadableStream } = {}): Promise<Answer> {
  const res = await fetch(home.baseUrl + path, { method, headers: init.headers, body: init.body, ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit);
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString("utf8");
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, text, json };
}

/** The MSC's common headers on an answer about a session ("Common HTTP response headers", "CORS"). */
function expectSessionHeaders(a: Answer): void {
  expect(a.headers.get("etag")).toMatch(/^"[\x21\x23-\x7e]+"$/); // a strong entity tag
  const expires = Date.parse(a.headers.get("expires") ?? "");
  const modified = Date.parse(a.headers.get("last-modified") ?? "");
  expect(Number.isNaN(expires) || Number.isNaN(modified)).toBe(false);
  expect(expires).toBeGreaterThan(modified);
  expect(a.headers.get("cache-control")).toContain("no-store");
  expect(a.headers.get("pragma")).toBe("no-cache");
  expect(a.headers.get("access-control-allow-origin")).toBe("*");
  expect(a.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("etag");
}

describe.each(homes({ msc4108_enabled: true }))("MSC4108 rendezvous on %s", (_name, start) => {
  let home: Home;
  beforeAll(async () => {
    home = await start();
  }, 120_000);
  afterAll(async () => {
    await home?.close();
  });

  /** Creates a session holding `body`: its path on the server and its first ETag. */
  async function create(body: string | Uint8Array = "hello"): Promise<{ path: string; etag: string; created: Answer }> {
    const created = await call(home, "POST", CREATE, { headers: TEXT, body });
    expect(created.status, created.text).toBe(201);
    return { path: new URL(created.json.url).pathname, etag: created.headers.get("etag")!, created };
  }

  it("is listed in /versions", async () => {
    const v = await call(home, "GET", "/_matrix/client/versions");
    expect(v.json.unstable_features["org.matrix.msc4108"]).toBe(true);
  });

  it("POST creates a session and answers its absolute URL, with the MSC's headers and no access token", async () => {
    const { created } = await create("foo=bar");
    expect(created.headers.get("content-type")).toBe("application/json");
    expect(Object.keys(created.json)).toEqual(["url"]);
    expect(created.json.url).toMatch(new RegExp(`^${home.baseUrl}/_synapse/client/rendezvous/[A-Za-z0-9_-]+$`));
    expectSessionHeaders(created);
    // Synapse's 60 s: Expires is a minute after Last-Modified (HTTP dates have second resolution).
    const lifetime = Date.parse(created.headers.get("expires")!) - Date.parse(created.headers.get("last-modified")!);
    expect(lifetime).toBe(60_000);
    // An access token is not read, not even a bad one (the MSC's "Authentication").
    const withToken = await call(home, "POST", CREATE, { headers: { ...TEXT, authorization: "Bearer not-a-token" }, body: "x" });
    expect(withToken.status).toBe(201);
  });

  it("GET answers the payload as sent, with its Content-Type and the creation's ETag", async () => {
    const { path, etag } = await create("foo=bar");
    const got = await call(home, "GET", path);
    expect(got.status).toBe(200);
    expect(got.text).toBe("foo=bar");
    expect(got.headers.get("content-type")).toBe("text/plain");
    expect(got.headers.get("etag")).toBe(etag);
    expectSessionHeaders(got);
  });

  it("keeps the payload's bytes exactly, whatever they are", async () => {
    const bytes = new Uint8Array([0xff, 0x00, 0xfe, 0x0a, 0x80, 0x7f]);
    const { path } = await create(bytes);
    const got = await call(home, "GET", path);
    expect(got.status).toBe(200);
    expect([...got.bytes]).toEqual([...bytes]);
    // And an empty payload is one too (the MSC's first POST is often empty).
    const empty = await create("");
    const read = await call(home, "GET", empty.path);
    expect([read.status, read.bytes.length]).toEqual([200, 0]);
  });

  it("GET with If-None-Match naming the current ETag is 304 with the headers and no body", async () => {
    const { path, etag } = await create();
    const same = await call(home, "GET", path, { headers: { "if-none-match": etag } });
    expect(same.status).toBe(304);
    expect(same.bytes.length).toBe(0);
    expect(same.headers.get("etag")).toBe(etag);
    expectSessionHeaders(same);
    // A weak form of it matches too (If-None-Match compares weakly: RFC 9110 §13.1.2), and so does `*`.
    expect((await call(home, "GET", path, { headers: { "if-none-match": `W/${etag}` } })).status).toBe(304);
    expect((await call(home, "GET", path, { headers: { "if-none-match": "*" } })).status).toBe(304);
    // Another tag, or one in a list with it, reads the payload / is 304.
    const other = await call(home, "GET", path, { headers: { "if-none-match": '"something-else"' } });
    expect([other.status, other.text]).toEqual([200, "hello"]);
    expect((await call(home, "GET", path, { headers: { "if-none-match": `"something-else", ${etag}` } })).status).toBe(304);
  });

  it("PUT with the current ETag replaces the payload: 202 with a new ETag, the expiry unchanged", async () => {
    const { path, etag, created } = await create("first");
    const put = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": etag }, body: "second" });
    expect(put.status, put.text).toBe(202);
    expect(put.bytes.length).toBe(0);
    expectSessionHeaders(put);
    const newTag = put.headers.get("etag")!;
    expect(newTag).not.toBe(etag);
    expect(put.headers.get("expires")).toBe(created.headers.get("expires"));
    const got = await call(home, "GET", path);
    expect([got.status, got.text, got.headers.get("etag")]).toEqual([200, "second", newTag]);
    // The old tag no longer answers 304: the reader sees the new payload.
    const stale = await call(home, "GET", path, { headers: { "if-none-match": etag } });
    expect([stale.status, stale.text]).toEqual([200, "second"]);
    // The initiator may also write on the tag of its POST; `If-Match: *` matches any payload (RFC 9110).
    const star = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": "*" }, body: "third" });
    expect(star.status).toBe(202);
    expect((await call(home, "GET", path)).text).toBe("third");
  });

  it("PUT with a stale or weak ETag is 412 M_CONCURRENT_WRITE (Synapse: M_UNKNOWN with the MSC's code beside it) and changes nothing", async () => {
    const { path, etag } = await create("first");
    const put = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": etag }, body: "second" });
    const current = put.headers.get("etag")!;
    for (const ifMatch of [etag, `W/${current}`, "not-an-etag"]) {
      const stale = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": ifMatch }, body: "lost" });
      expect(stale.status, ifMatch).toBe(412);
      expect(stale.json).toEqual({ errcode: "M_UNKNOWN", error: "ETag does not match", "org.matrix.msc4108.errcode": "M_CONCURRENT_WRITE" });
      // The answer tells the writer the current tag (the MSC's common headers on 412).
      expect(stale.headers.get("etag")).toBe(current);
      expectSessionHeaders(stale);
    }
    const got = await call(home, "GET", path);
    expect([got.text, got.headers.get("etag")]).toEqual(["second", current]);
  });

  it("PUT without If-Match is 400 M_MISSING_PARAM (the MSC's and Synapse's answer, not HTTP's 428) and changes nothing", async () => {
    const { path, etag } = await create("kept");
    const put = await call(home, "PUT", path, { headers: TEXT, body: "lost" });
    expect([put.status, put.json?.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const got = await call(home, "GET", path);
    expect([got.text, got.headers.get("etag")]).toEqual(["kept", etag]);
  });

  it("DELETE ends the session: 204, then 404 M_NOT_FOUND for every method", async () => {
    const { path, etag } = await create();
    const del = await call(home, "DELETE", path);
    expect(del.status).toBe(204);
    expect(del.headers.get("access-control-allow-origin")).toBe("*");
    for (const [method, headers, body] of [["GET", {}, undefined], ["PUT", { ...TEXT, "if-match": etag }, "x"], ["DELETE", {}, undefined]] as const) {
      const after = await call(home, method, path, { headers, body });
      expect([after.status, after.json?.errcode], method).toEqual([404, "M_NOT_FOUND"]);
    }
  });

  it("an unknown session is 404 M_NOT_FOUND", async () => {
    for (const id of ["01J0000000000000000000000A", "AAAAAAAAAAAAAAAAAAAAAA", "nope"]) {
      const path = `/_synapse/client/rendezvous/${id}`;
      expect((await call(home, "GET", path)).json?.errcode).toBe("M_NOT_FOUND");
      const put = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": '"x"' }, body: "x" });
      expect([put.status, put.json?.errcode]).toEqual([404, "M_NOT_FOUND"]);
      expect((await call(home, "DELETE", path)).status).toBe(404);
    }
  });

  it("takes payloads up to 4 KiB: a larger POST or PUT is 413 M_TOO_LARGE and changes nothing", async () => {
    const max = "a".repeat(4096);
    const { path, etag } = await create(max);
    expect((await call(home, "GET", path)).text).toBe(max);
    const big = await call(home, "POST", CREATE, { headers: TEXT, body: max + "a" });
    expect([big.status, big.json?.errcode]).toEqual([413, "M_TOO_LARGE"]);
    const put = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": etag }, body: max + "b" });
    expect([put.status, put.json?.errcode]).toEqual([413, "M_TOO_LARGE"]);
    const got = await call(home, "GET", path);
    expect([got.text, got.headers.get("etag")]).toEqual([max, etag]);
  });

  it("takes text/plain only: no Content-Type is 400 M_MISSING_PARAM, another one 400 M_INVALID_PARAM", async () => {
    const none = await call(home, "POST", CREATE, { body: new Uint8Array([1, 2, 3]) });
    expect([none.status, none.json?.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    for (const type of ["application/json", "application/x-www-form-urlencoded", "text/plain; charset=utf-8", "text/html"]) {
      const res = await call(home, "POST", CREATE, { headers: { "content-type": type }, body: "foo=bar" });
      expect([res.status, res.json?.errcode], type).toEqual([400, "M_INVALID_PARAM"]);
    }
    // The media type is case-insensitive (RFC 9110 §8.3.1).
    expect((await call(home, "POST", CREATE, { headers: { "content-type": "Text/Plain" }, body: "x" })).status).toBe(201);
    const { path, etag } = await create("kept");
    const put = await call(home, "PUT", path, { headers: { "content-type": "application/x-www-form-urlencoded", "if-match": etag }, body: "foo=baz" });
    expect([put.status, put.json?.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    expect((await call(home, "GET", path)).text).toBe("kept");
  });

  it("needs a Content-Length: a chunked POST is 400 M_MISSING_PARAM", async () => {
    const body = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("chunked")); c.close(); } });
    const res = await call(home, "POST", CREATE, { headers: TEXT, body });
    expect([res.status, res.json?.errcode]).toEqual([400, "M_MISSING_PARAM"]);
  });

  it("answers browsers' CORS preflights with the conditional headers allowed (the MSC's CORS)", async () => {
    const { path } = await create();
    for (const [p, method] of [[CREATE, "POST"], [path, "PUT"], [path, "GET"], [path, "DELETE"]] as const) {
      const pre = await call(home, "OPTIONS", p, { headers: { origin: "https://app.example", "access-control-request-method": method, "access-control-request-headers": "content-type, if-match, if-none-match" } });
      // Weft answers 200 {} (its every preflight), Synapse 204.
      expect([200, 204], p).toContain(pre.status);
      expect(pre.headers.get("access-control-allow-origin")).toBe("*");
      const methods = pre.headers.get("access-control-allow-methods")!.split(",").map((m) => m.trim());
      expect(methods).toEqual(expect.arrayContaining(["GET", "POST", "PUT", "DELETE"]));
      const allowed = pre.headers.get("access-control-allow-headers")!.split(",").map((h) => h.trim().toLowerCase());
      expect(allowed).toEqual(expect.arrayContaining(["content-type", "if-match", "if-none-match"]));
      expect(pre.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("etag");
    }
  });

  it("gives an identical payload a new ETag only on Weft (the MSC: unique to the session and the write)", async () => {
    const a = await create("same");
    const b = await create("same");
    const put = await call(home, "PUT", a.path, { headers: { ...TEXT, "if-match": a.etag }, body: "same" });
    expect(put.status).toBe(202);
    // Synapse's ETag is the payload's SHA-256: the same bytes give the same tag, in any session and after
    // any write, so a reader polling with If-None-Match misses a write of the same payload. Weft follows the
    // MSC's "ETags" (unique to the session and its last modification): every write gets a new tag.
    const distinct = new Set([a.etag, b.etag, put.headers.get("etag")]).size;
    expect(distinct).toBe(home.name === "Weft" ? 3 : 1);
  });

  it("holds at most 200 sessions: the 201st creation drops the oldest ones", async () => {
    const first = await create("oldest");
    let last = first;
    for (let i = 0; i < 200; i++) last = await create(`s${i}`);
    expect((await call(home, "GET", first.path)).status).toBe(404);
    const newest = await call(home, "GET", last.path);
    expect([newest.status, newest.text]).toEqual([200, "s199"]);
  }, 60_000);

  it("expires a session 60 s after its creation, whatever its writes (Weft's clock; Synapse's cannot be moved)", async (ctx) => {
    if (!home.clock) return ctx.skip();
    const { path, etag } = await create("short-lived");
    home.clock.advance(30_000);
    const put = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": etag }, body: "still here" });
    expect(put.status).toBe(202);
    home.clock.advance(29_999);
    expect((await call(home, "GET", path)).text).toBe("still here");
    home.clock.advance(1);
    const gone = await call(home, "GET", path);
    expect([gone.status, gone.json?.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const late = await call(home, "PUT", path, { headers: { ...TEXT, "if-match": put.headers.get("etag")! }, body: "x" });
    expect([late.status, late.json?.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect((await call(home, "DELETE", path)).status).toBe(404);
  });
});

describe.each(homes({ msc4108_delegation_endpoint: "https://rendezvous.example.org/create" }))("MSC4108 delegated on %s", (_name, start) => {
  let home: Home;
  beforeAll(async () => {
    home = await start();
  }, 120_000);
  afterAll(async () => {
    await home?.close();
  });

  it("POST is a 307 to the delegation endpoint (method and body kept by the client), listed in /versions", async () => {
    const res = await fetch(home.baseUrl + CREATE, { method: "POST", headers: TEXT, body: "hello", redirect: "manual" });
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toBe("https://rendezvous.example.org/create");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const v = await call(home, "GET", "/_matrix/client/versions");
    expect(v.json.unstable_features["org.matrix.msc4108"]).toBe(true);
  });

  it("serves no session URLs itself", async () => {
    const res = await call(home, "GET", "/_synapse/client/rendezvous/AAAAAAAAAAAAAAAAAAAAAA");
    expect(res.status).toBe(404);
  });
});

describe("MSC4108 off (Weft's default, as Synapse's)", () => {
  it("serves neither the POST nor session URLs, and /versions says false", async () => {
    const t = await startTestServer({});
    try {
      const post = await t.call("POST", CREATE, { headers: TEXT, raw: "x" });
      expect([post.status, post.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
      expect((await t.call("GET", "/_synapse/client/rendezvous/AAAAAAAAAAAAAAAAAAAAAA")).status).toBe(404);
      expect((await t.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc4108"]).toBe(false);
    } finally {
      await t.close();
    }
  });

  it("refuses msc4108_enabled with a delegation endpoint, and an endpoint that is no http(s) URL", () => {
    const parse = (x: Record<string, unknown>) => parseConfig({ server_name: "example.org", experimental_features: x }, "/srv/weft");
    expect(() => parse({ msc4108_enabled: true, msc4108_delegation_endpoint: "https://rz.example.org/" })).toThrow(ConfigError);
    expect(() => parse({ msc4108_delegation_endpoint: "rz.example.org" })).toThrow(ConfigError);
    expect(parse({ msc4108_delegation_endpoint: "https://rz.example.org/" }).experimental_features.msc4108_delegation_endpoint).toBe("https://rz.example.org/");
    expect(parse({}).experimental_features).toMatchObject({ msc4108_enabled: false, msc4108_delegation_endpoint: undefined });
  });
});
