// Server discovery, step by step as the spec's "Resolving server names" lists them, against a fake DNS and
// a fake .well-known fetch: where each step connects, which certificate name (SNI) it expects and which
// Host header it sends; SRV ordering; and the .well-known cache rules (headers, bounds, failures).
import { describe, expect, it } from "vitest";
import { ServerDiscovery } from "../../../src/federation/discovery.ts";
import type { Dns } from "../../../src/federation/transport.ts";
import { cachePeriodFromHeaders, WellKnownResolver, type WellKnownFetchResult } from "../../../src/federation/well-known.ts";

type Srv = { name: string; port: number; priority: number; weight: number };

function fakeDns(srv: Record<string, Srv[]> = {}): Dns & { srvAsked: string[] } {
  const srvAsked: string[] = [];
  return {
    srvAsked,
    async resolveSrv(name) {
      srvAsked.push(name);
      return srv[name] ?? [];
    },
    async lookup() {
      return ["203.0.113.7"];
    },
  };
}

const json = (body: unknown, headers: Record<string, string> = {}): WellKnownFetchResult => ({ status: 200, headers, body: Buffer.from(JSON.stringify(body)) });

function setup(opts: { wellKnown?: Record<string, WellKnownFetchResult | Error>; srv?: Record<string, Srv[]> } = {}) {
  const fetched: string[] = [];
  const clock = { ms: 1_000_000 };
  const wellKnown = new WellKnownResolver({
    now: () => clock.ms,
    random: () => 0.5,
    retryDelayMs: 0,
    fetch: async (host) => {
      fetched.push(host);
      const r = opts.wellKnown?.[host];
      if (r === undefined) return { status: 404, headers: {}, body: Buffer.from("not here") };
      if (r instanceof Error) throw r;
      return r;
    },
  });
  const dns = fakeDns(opts.srv);
  return { discovery: new ServerDiscovery({ dns, wellKnown, now: () => clock.ms, random: () => 0 }), wellKnown, fetched, dns, clock };
}

describe("resolving server names", () => {
  it("1. an IP literal: that address, its port or 8448, no SNI (certificate for the IP), Host = server name", async () => {
    const { discovery, fetched, dns } = setup();
    expect(await discovery.resolve("127.0.0.1:8449")).toEqual({ targets: [{ host: "127.0.0.1", port: 8449 }], hostHeader: "127.0.0.1:8449", step: "ip-literal" });
    expect(await discovery.resolve("[::1]")).toEqual({ targets: [{ host: "::1", port: 8448 }], hostHeader: "[::1]", step: "ip-literal" });
    expect(await discovery.resolve("[2001:db8::1]:443")).toMatchObject({ targets: [{ host: "2001:db8::1", port: 443 }], hostHeader: "[2001:db8::1]:443" });
    expect(fetched).toEqual([]);
    expect(dns.srvAsked).toEqual([]);
  });

  it("2. a name with an explicit port: no .well-known, no SRV; certificate for the name; Host with the port", async () => {
    const { discovery, fetched, dns } = setup();
    expect(await discovery.resolve("example.org:8000")).toEqual({ targets: [{ host: "example.org", port: 8000 }], hostHeader: "example.org:8000", tlsName: "example.org", step: "explicit-port" });
    expect(fetched).toEqual([]);
    expect(dns.srvAsked).toEqual([]);
  });

  it("3.1 .well-known delegating to an IP literal (with and without port)", async () => {
    const { discovery } = setup({ wellKnown: { "a.org": json({ "m.server": "198.51.100.4:9000" }), "b.org": json({ "m.server": "[2001:db8::5]" }) } });
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "198.51.100.4", port: 9000 }], hostHeader: "198.51.100.4:9000", step: "well-known-ip" });
    expect(await discovery.resolve("b.org")).toEqual({ targets: [{ host: "2001:db8::5", port: 8448 }], hostHeader: "[2001:db8::5]", step: "well-known-ip" });
  });

  it("3.2 .well-known delegating to a name with a port: certificate for the delegated name, Host name:port, no SRV", async () => {
    const { discovery, dns } = setup({ wellKnown: { "a.org": json({ "m.server": "matrix.a.org:443" }) } });
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "matrix.a.org", port: 443 }], hostHeader: "matrix.a.org:443", tlsName: "matrix.a.org", step: "well-known-port" });
    expect(dns.srvAsked).toEqual([]);
  });

  it("3.3 .well-known delegating to a bare name: SRV _matrix-fed._tcp of the delegated name", async () => {
    const { discovery, dns } = setup({
      wellKnown: { "a.org": json({ "m.server": "matrix.a.org" }) },
      srv: { "_matrix-fed._tcp.matrix.a.org": [{ name: "fed1.a.org.", port: 8443, priority: 10, weight: 0 }] },
    });
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "fed1.a.org", port: 8443 }], hostHeader: "matrix.a.org", tlsName: "matrix.a.org", step: "well-known-srv" });
    expect(dns.srvAsked).toEqual(["_matrix-fed._tcp.matrix.a.org"]);
  });

  it("3.4 then the deprecated _matrix._tcp of the delegated name", async () => {
    const { discovery, dns } = setup({
      wellKnown: { "a.org": json({ "m.server": "matrix.a.org" }) },
      srv: { "_matrix._tcp.matrix.a.org": [{ name: "old.a.org", port: 8449, priority: 0, weight: 0 }] },
    });
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "old.a.org", port: 8449 }], hostHeader: "matrix.a.org", tlsName: "matrix.a.org", step: "well-known-legacy-srv" });
    expect(dns.srvAsked).toEqual(["_matrix-fed._tcp.matrix.a.org", "_matrix._tcp.matrix.a.org"]);
  });

  it("3.5 then the delegated name at 8448", async () => {
    const { discovery } = setup({ wellKnown: { "a.org": json({ "m.server": "matrix.a.org" }) } });
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "matrix.a.org", port: 8448 }], hostHeader: "matrix.a.org", tlsName: "matrix.a.org", step: "well-known-default-port" });
  });

  it("4. no valid .well-known: SRV _matrix-fed._tcp of the name; the certificate is for the name, not the SRV target", async () => {
    const { discovery, fetched } = setup({ srv: { "_matrix-fed._tcp.a.org": [{ name: "srv.b.net", port: 443, priority: 1, weight: 1 }] } });
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "srv.b.net", port: 443 }], hostHeader: "a.org", tlsName: "a.org", step: "srv" });
    expect(fetched).toEqual(["a.org"]);
  });

  it("5. then the deprecated _matrix._tcp of the name", async () => {
    const { discovery } = setup({ srv: { "_matrix._tcp.a.org": [{ name: "legacy.a.org", port: 8009, priority: 1, weight: 1 }] } });
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "legacy.a.org", port: 8009 }], hostHeader: "a.org", tlsName: "a.org", step: "legacy-srv" });
  });

  it("6. then the name at 8448", async () => {
    const { discovery, dns } = setup();
    expect(await discovery.resolve("a.org")).toEqual({ targets: [{ host: "a.org", port: 8448 }], hostHeader: "a.org", tlsName: "a.org", step: "default-port" });
    expect(dns.srvAsked).toEqual(["_matrix-fed._tcp.a.org", "_matrix._tcp.a.org"]);
  });

  it("an invalid .well-known (bad JSON, no m.server, a non-server m.server, non-200) falls through to step 4", async () => {
    const bad = {
      "j.org": { status: 200, headers: {}, body: Buffer.from("{nope") },
      "m.org": json({ server: "x.org" }),
      "v.org": json({ "m.server": "not a server name" }),
      "s.org": { status: 302, headers: {}, body: Buffer.from("") },
    };
    const { discovery } = setup({ wellKnown: bad });
    for (const name of Object.keys(bad)) expect((await discovery.resolve(name)).step, name).toBe("default-port");
  });

  it("orders SRV targets by priority, a '.' target meaning none", async () => {
    const { discovery } = setup({
      srv: {
        "_matrix-fed._tcp.a.org": [
          { name: "c.a.org", port: 3, priority: 20, weight: 5 },
          { name: "a.a.org", port: 1, priority: 10, weight: 5 },
          { name: "b.a.org", port: 2, priority: 10, weight: 5 },
        ],
        "_matrix-fed._tcp.none.org": [{ name: ".", port: 0, priority: 0, weight: 0 }],
      },
    });
    const r = await discovery.resolve("a.org");
    expect(r.targets.map((t) => t.port).slice(2)).toEqual([3]);
    expect(new Set(r.targets.slice(0, 2).map((t) => t.port))).toEqual(new Set([1, 2]));
    expect((await discovery.resolve("none.org")).step).toBe("default-port");
  });

  it("refuses something that is not a server name", async () => {
    const { discovery } = setup();
    await expect(discovery.resolve("not a name")).rejects.toThrow(/not a server name/);
  });
});

describe(".well-known cache", () => {
  const HOUR = 3600_000;

  it("reads Cache-Control max-age, no-store and Expires", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(cachePeriodFromHeaders({ "cache-control": "public, max-age=600" }, now)).toBe(600_000);
    expect(cachePeriodFromHeaders({ "cache-control": "no-store, max-age=600" }, now)).toBe(0);
    expect(cachePeriodFromHeaders({ expires: "Thu, 01 Jan 2026 02:00:00 GMT" }, now)).toBe(2 * HOUR);
    expect(cachePeriodFromHeaders({ expires: "0" }, now)).toBe(0);
    expect(cachePeriodFromHeaders({}, now)).toBeUndefined();
  });

  it("keeps a valid answer for its max-age within 5 minutes and 48 hours, and refreshes it in its last 20%", async () => {
    const wk: Record<string, WellKnownFetchResult | Error> = { "a.org": json({ "m.server": "x.a.org:1" }, { "cache-control": "max-age=36000" }) };
    const { wellKnown, fetched, clock } = setup({ wellKnown: wk });
    expect(await wellKnown.lookup("a.org")).toBe("x.a.org:1");
    clock.ms += 7.9 * HOUR; // before the last 20% of 10 h
    expect(await wellKnown.lookup("a.org")).toBe("x.a.org:1");
    expect(fetched).toEqual(["a.org"]);
    clock.ms += 0.2 * HOUR; // 8.1 h: refreshed
    wk["a.org"] = json({ "m.server": "y.a.org:2" }, { "cache-control": "max-age=1" }); // clamped up to 5 minutes
    expect(await wellKnown.lookup("a.org")).toBe("y.a.org:2");
    clock.ms += 3.9 * 60_000;
    expect(await wellKnown.lookup("a.org")).toBe("y.a.org:2");
    expect(fetched).toHaveLength(2);
    clock.ms += 0.2 * 60_000; // past 4 of 5 minutes
    await wellKnown.lookup("a.org");
    expect(fetched).toHaveLength(3);
  });

  it("caps a long max-age at 48 hours, defaults to 24 hours (±10% jitter) without headers", async () => {
    const { wellKnown, fetched, clock } = setup({ wellKnown: { "a.org": json({ "m.server": "x.a.org:1" }, { "cache-control": "max-age=9999999" }), "b.org": json({ "m.server": "x.b.org:1" }) } });
    await wellKnown.lookup("a.org");
    await wellKnown.lookup("b.org");
    clock.ms += 0.79 * 24 * HOUR; // 80% of 24 h (jitter pinned at 0)
    await wellKnown.lookup("b.org");
    expect(fetched).toEqual(["a.org", "b.org"]);
    clock.ms += 0.02 * 24 * HOUR;
    await wellKnown.lookup("b.org");
    expect(fetched).toEqual(["a.org", "b.org", "b.org"]);
    clock.ms = 1_000_000 + 0.81 * 48 * HOUR;
    await wellKnown.lookup("a.org");
    expect(fetched.filter((h) => h === "a.org")).toHaveLength(2);
  });

  it("caches a failure for an hour, but only 2 minutes for a host that recently had a valid answer", async () => {
    const wk: Record<string, WellKnownFetchResult | Error> = {};
    const { wellKnown, fetched, clock } = setup({ wellKnown: wk });
    expect(await wellKnown.lookup("a.org")).toBeUndefined(); // 404
    clock.ms += 47 * 60_000; // an hour, refreshed in its last 20% like any entry
    expect(await wellKnown.lookup("a.org")).toBeUndefined();
    expect(fetched).toEqual(["a.org"]);
    clock.ms += 2 * 60_000;
    wk["a.org"] = json({ "m.server": "x.a.org:1" }, { "cache-control": "max-age=300" });
    expect(await wellKnown.lookup("a.org")).toBe("x.a.org:1");
    clock.ms += 10 * 60_000; // expired; now it is gone
    wk["a.org"] = { status: 404, headers: {}, body: Buffer.from("") };
    expect(await wellKnown.lookup("a.org")).toBeUndefined();
    const n = fetched.length;
    clock.ms += 1.5 * 60_000;
    await wellKnown.lookup("a.org");
    expect(fetched).toHaveLength(n);
    clock.ms += 0.2 * 60_000;
    await wellKnown.lookup("a.org");
    expect(fetched).toHaveLength(n + 1);
  });

  it("keeps a still-cached answer through a temporary failure (network, 5xx, too large), retrying a host that had one", async () => {
    const wk: Record<string, WellKnownFetchResult | Error> = { "a.org": json({ "m.server": "x.a.org:1" }, { "cache-control": "max-age=3600" }) };
    const { wellKnown, fetched, clock } = setup({ wellKnown: wk });
    await wellKnown.lookup("a.org");
    clock.ms += 50 * 60_000; // in the refresh window
    wk["a.org"] = new Error("ECONNREFUSED");
    expect(await wellKnown.lookup("a.org")).toBe("x.a.org:1");
    expect(fetched).toHaveLength(1 + 3); // three attempts for a host that had a valid answer
    wk["a.org"] = { status: 503, headers: {}, body: Buffer.from("") };
    expect(await wellKnown.lookup("a.org")).toBe("x.a.org:1");
    wk["a.org"] = Object.assign(new Error("too large"), { tooLarge: true });
    const before = fetched.length;
    expect(await wellKnown.lookup("a.org")).toBe("x.a.org:1");
    expect(fetched).toHaveLength(before + 1); // too large: not retried
    // A permanent failure (404) replaces it.
    wk["a.org"] = { status: 404, headers: {}, body: Buffer.from("") };
    expect(await wellKnown.lookup("a.org")).toBeUndefined();
  });
});
