// URL previews over HTTP, on SQLite and PostgreSQL, against local HTML servers: OpenGraph and fallbacks,
// the og:image stored as local media, url_preview_accept_language, the cache per URL and `ts`, and the
// refusals — private address literals in any spelling, a redirect to one, names resolving to one (the
// test resolver maps names to loopback addresses), the URL pattern blacklist, max_spider_size. Loopback
// 127.0.0.1 is whitelisted for the happy path; 127.0.0.2 (a second server that counts its hits) is not.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, TestClock, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { png, raw, storeFiles } from "../helpers/media.ts";
import { DEFAULT_IP_RANGE_BLACKLIST } from "../../src/domain/net/ip-ranges.ts";

interface Site {
  server: Server;
  port: number;
  hits: string[];
  headers: IncomingMessage["headers"][];
  pages: Map<string, { type: string; body: Buffer | string; status?: number; location?: string }>;
}

async function site(host: string): Promise<Site> {
  const s: Site = { server: undefined as unknown as Server, port: 0, hits: [], headers: [], pages: new Map() };
  s.server = createServer((req, res) => {
    s.hits.push(req.url!);
    s.headers.push(req.headers);
    const page = s.pages.get(req.url!);
    if (!page) return res.writeHead(404).end("no");
    res.writeHead(page.status ?? 200, { "content-type": page.type, ...(page.location ? { location: page.location } : {}) });
    res.end(page.body);
  });
  await new Promise<void>((r) => s.server.listen(0, host, () => r()));
  s.port = (s.server.address() as AddressInfo).port;
  return s;
}

describe.each(backends())("URL previews on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let web: Site;
  let secret: Site;
  let image: Buffer;
  const clock = new TestClock();
  const resolved: string[] = [];
  const names: Record<string, string[] | (() => string[])> = {};

  const preview = (url: string, extra = "") =>
    raw(t, "GET", `/_matrix/client/v1/media/preview_url?url=${encodeURIComponent(url)}${extra}`, { token: alice.access_token });

  beforeAll(async () => {
    web = await site("127.0.0.1");
    secret = await site("127.0.0.2");
    t = await startTestServer({
      backend,
      clock,
      config: {
        url_preview_enabled: true,
        url_preview_ip_range_blacklist: [...DEFAULT_IP_RANGE_BLACKLIST],
        url_preview_ip_range_whitelist: ["127.0.0.1"],
        url_preview_url_blacklist: [{ hostname: "*.blocked.test" }, { path: "^/private" }],
        url_preview_accept_language: ["en-GB", "fr;q=0.5"],
        max_spider_size: "64K",
      },
    });
    t.hs.services.media.resolver = async (host) => {
      resolved.push(host);
      const answer = names[host];
      if (!answer) throw Object.assign(new Error(`no such name ${host}`), { code: "ENOTFOUND" });
      return typeof answer === "function" ? answer() : answer;
    };
    alice = await registerUser(t, "alice");
    image = await png(120, 60);
    const base = `http://127.0.0.1:${web.port}`;
    web.pages.set("/img.png", { type: "image/png", body: image });
    web.pages.set("/article", {
      type: "text/html; charset=utf-8",
      body: `<!doctype html><html><head><meta property="og:title" content="Weft &amp; friends">
        <meta property="og:description" content="A homeserver — in TypeScript"><meta property="og:image" content="/img.png">
        <title>ignored</title></head><body><p>text</p></body></html>`,
    });
    web.pages.set("/plain", {
      type: "text/html",
      body: `<html><head><title> Plain page </title><meta name="description" content="Described here"></head>
        <body><script>var x = "<title>no</title>";</script><img src="${base}/img.png" width="120" height="60"></body></html>`,
    });
    web.pages.set("/latin1", { type: "text/html; charset=iso-8859-1", body: Buffer.from("<title>caf\xe9</title>", "latin1") });
    web.pages.set("/to-secret", { type: "text/html", status: 302, body: "", location: `http://127.0.0.2:${secret.port}/page` });
    web.pages.set("/to-evil", { type: "text/html", status: 301, body: "", location: `http://evil.test:${secret.port}/page` });
    web.pages.set("/big", { type: "text/html", body: `<title>big</title>${"x".repeat(200 * 1024)}` });
    web.pages.set("/binary", { type: "application/zip", body: "PK" });
    secret.pages.set("/page", { type: "text/html", body: "<title>secret</title>" });
    names["good.test"] = ["127.0.0.1"];
    names["evil.test"] = ["127.0.0.2"];
    names["mixed.test"] = ["127.0.0.1", "10.0.0.7"];
    names["v6.test"] = ["::1"];
  });
  afterAll(async () => {
    await t?.close();
    web?.server.close();
    secret?.server.close();
  });

  it("previews a page: OpenGraph, the og:image stored as local media, Accept-Language sent", async () => {
    const url = `http://127.0.0.1:${web.port}/article`;
    const r = await preview(url);
    expect(r.status, r.body.toString()).toBe(200);
    expectMatchesSpec({ status: r.status, json: r.json }, "GET", "/_matrix/client/v1/media/preview_url");
    expect(r.json).toMatchObject({
      "og:title": "Weft & friends",
      "og:description": "A homeserver — in TypeScript",
      "og:image:type": "image/png",
      "og:image:width": 120,
      "og:image:height": 60,
      "matrix:image:size": image.length,
    });
    expect(r.json["og:image"]).toMatch(/^mxc:\/\/weft\.test\/[A-Za-z0-9]+$/);
    const d = await raw(t, "GET", `/_matrix/client/v1/media/download/weft.test/${r.json["og:image"].split("/").pop()}`, { token: alice.access_token });
    expect(d.body.equals(image)).toBe(true);
    expect(web.headers.at(-1)!["accept-language"]).toBe("en-GB, fr;q=0.5");
    const legacy = await raw(t, "GET", `/_matrix/media/v3/preview_url?url=${encodeURIComponent(url)}`, { token: alice.access_token });
    expect([legacy.status, legacy.json["og:title"]]).toEqual([200, "Weft & friends"]);
    expect((await raw(t, "GET", `/_matrix/client/v1/media/preview_url?url=${encodeURIComponent(url)}`)).status).toBe(401);
  });

  it("falls back to <title>, the meta description and the first image; decodes the page's charset", async () => {
    const r = await preview(`http://127.0.0.1:${web.port}/plain`);
    expect(r.status).toBe(200);
    expect(r.json["og:title"]).toBe("Plain page");
    expect(r.json["og:description"]).toBe("Described here");
    expect(r.json["og:image"]).toMatch(/^mxc:\/\//);
    const l = await preview(`http://127.0.0.1:${web.port}/latin1`);
    expect(l.json["og:title"]).toBe("café");
    const img = await preview(`http://127.0.0.1:${web.port}/img.png`);
    expect(img.json).toMatchObject({ "og:image:type": "image/png", "og:image:width": 120, "matrix:image:size": image.length });
  });

  it("caches per URL and ts: a fresh preview is not fetched again; ts picks an older one", async () => {
    web.pages.set("/changing", { type: "text/html", body: "<title>first</title>" });
    const url = `http://127.0.0.1:${web.port}/changing`;
    const t1 = clock.now();
    expect((await preview(url)).json["og:title"]).toBe("first");
    const hits = web.hits.filter((h) => h === "/changing").length;
    web.pages.set("/changing", { type: "text/html", body: "<title>second</title>" });
    expect((await preview(url)).json["og:title"]).toBe("first");
    expect(web.hits.filter((h) => h === "/changing").length).toBe(hits);
    clock.advance(2 * 3_600_000); // past the hour a preview is fresh for
    expect((await preview(url)).json["og:title"]).toBe("second");
    expect(web.hits.filter((h) => h === "/changing").length).toBe(hits + 1);
    expect((await preview(url, `&ts=${t1 + 1000}`)).json["og:title"]).toBe("first");
  });

  it("previews through a name that resolves to an allowed address, connecting to the address it checked", async () => {
    const r = await preview(`http://good.test:${web.port}/article`);
    expect([r.status, r.json["og:title"]]).toEqual([200, "Weft & friends"]);
    // A resolver that answers differently the second time (a DNS rebind) cannot redirect the connection:
    // the name is resolved once per connection and the connection goes to the address that was checked.
    let calls = 0;
    names["rebind.test"] = () => (calls++ === 0 ? ["127.0.0.1"] : ["127.0.0.2"]);
    const rb = await preview(`http://rebind.test:${web.port}/plain`);
    expect([rb.status, rb.json["og:title"]]).toEqual([200, "Plain page"]);
    expect(secret.hits).toEqual([]);
  });

  it("refuses private addresses however they are written, before connecting", async () => {
    const p = secret.port;
    for (const url of [`http://127.0.0.2:${p}/page`, `http://[::ffff:127.0.0.2]:${p}/page`, `http://2130706434:${p}/page`, `http://0x7f000002:${p}/page`, `http://127.2:${p}/page`, "http://10.20.30.40/", "http://[::1]:1/", "http://169.254.169.254/latest/meta-data/", "http://0.0.0.0:1/", "https://[fd00::1]/"]) {
      const r = await preview(url);
      expect([r.status, r.json.errcode], url).toEqual([403, "M_UNKNOWN"]);
    }
    expect(secret.hits).toEqual([]);
  });

  it("refuses a redirect to a private address and names that resolve to one", async () => {
    const viaRedirect = await preview(`http://127.0.0.1:${web.port}/to-secret`);
    expect([viaRedirect.status, viaRedirect.json.errcode]).toEqual([403, "M_UNKNOWN"]);
    const viaRedirectName = await preview(`http://127.0.0.1:${web.port}/to-evil`);
    expect([viaRedirectName.status, viaRedirectName.json.errcode]).toEqual([502, "M_UNKNOWN"]);
    for (const host of ["evil.test", "mixed.test", "v6.test", "unknown.test"]) {
      const r = await preview(`http://${host}:${secret.port}/page`);
      expect([r.status, r.json.errcode], host).toEqual([502, "M_UNKNOWN"]);
    }
    expect(resolved).toContain("evil.test");
    expect(secret.hits).toEqual([]);
  });

  it("refuses blacklisted URL patterns, other schemes, oversized and unpreviewable content", async () => {
    for (const url of [`http://www.blocked.test:${web.port}/article`, `http://127.0.0.1:${web.port}/private/x`]) {
      const r = await preview(url);
      expect([r.status, r.json.errcode], url).toEqual([403, "M_UNKNOWN"]);
    }
    for (const url of ["file:///etc/passwd", "ftp://127.0.0.1/", "javascript:alert(1)", "not a url"]) {
      const r = await preview(url);
      expect([r.status, r.json.errcode], url).toEqual([400, "M_INVALID_PARAM"]);
    }
    const missing = await raw(t, "GET", "/_matrix/client/v1/media/preview_url", { token: alice.access_token });
    expect([missing.status, missing.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const big = await preview(`http://127.0.0.1:${web.port}/big`);
    expect([big.status, big.json.errcode]).toEqual([502, "M_TOO_LARGE"]);
    const zip = await preview(`http://127.0.0.1:${web.port}/binary`);
    expect([zip.status, zip.json.errcode]).toEqual([502, "M_UNKNOWN"]);
    const notFound = await preview(`http://127.0.0.1:${web.port}/nothing-here`);
    expect([notFound.status, notFound.json.errcode]).toEqual([502, "M_UNKNOWN"]);
    expect(storeFiles(t).tmp).toEqual([]);
  });
});

describe("URL previews switched off", () => {
  it("answers 404 M_UNRECOGNIZED, as Synapse serves no such endpoint then", async () => {
    const t = await startTestServer();
    try {
      const a = await registerUser(t, "alice");
      const r = await raw(t, "GET", "/_matrix/client/v1/media/preview_url?url=http%3A%2F%2Fexample.org%2F", { token: a.access_token });
      expect([r.status, r.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    } finally {
      await t.close();
    }
  });
});
