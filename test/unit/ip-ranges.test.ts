// The outbound address policy (Synapse's ip_range_blacklist / ip_range_whitelist): the default blacklist,
// IPv4 ranges covering their IPv6 forms, the always-blocked unspecified addresses, whitelist exceptions,
// and the undici agent refusing blocked addresses both as literals and after DNS resolution.
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { request } from "undici";
import { checkIpRanges, OutboundIpPolicy } from "../../src/domain/net/ip-ranges.ts";
import { outboundAgent } from "../../src/domain/net/outbound-agent.ts";

describe("IP ranges", () => {
  it("matches IPv4 and IPv6 CIDRs, and IPv4 ranges in their mapped, compatible and 6to4 forms", () => {
    const policy = new OutboundIpPolicy({ blacklist: ["10.0.0.0/8", "fe80::/10"] });
    const set = { contains: (ip: string) => !policy.allows(ip) };
    expect(set.contains("10.1.2.3")).toBe(true);
    expect(set.contains("11.0.0.1")).toBe(false);
    expect(set.contains("::ffff:10.0.0.1")).toBe(true);
    expect(set.contains("::ffff:a00:1")).toBe(true);
    expect(set.contains("::10.0.0.1")).toBe(true);
    expect(set.contains("2002:0a00:0001::1")).toBe(true);
    expect(set.contains("fe80::1")).toBe(true);
    expect(set.contains("[fe80::1]")).toBe(true);
    expect(set.contains("2001:4860::1")).toBe(false);
    expect(set.contains("not-an-ip")).toBe(true); // not an address: never connected to
    expect(() => checkIpRanges(["10.0.0.0/33"])).toThrow(/10.0.0.0\/33/);
    expect(() => checkIpRanges(["banana"])).toThrow(/banana/);
  });

  it("the default policy refuses private, loopback and unspecified addresses unless whitelisted", () => {
    const p = new OutboundIpPolicy();
    for (const ip of ["127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.1.1", "100.64.0.1", "::1", "fc00::1", "fe80::1", "0.0.0.0", "::", "::ffff:127.0.0.1"]) expect(p.allows(ip), ip).toBe(false);
    for (const ip of ["8.8.8.8", "2001:4860:4860::8888", "93.184.216.34"]) expect(p.allows(ip), ip).toBe(true);
    const w = new OutboundIpPolicy({ whitelist: ["127.0.0.1"] });
    expect(w.allows("127.0.0.1")).toBe(true);
    expect(w.allows("127.0.0.2")).toBe(false);
    const none = new OutboundIpPolicy({ blacklist: [] });
    expect(none.allows("10.0.0.1")).toBe(true);
    expect(none.allows("0.0.0.0")).toBe(false);
  });

  it("the outbound agent refuses a blocked address as a literal and after resolving a name", async () => {
    const srv = createServer((_req, res) => res.end("{}"));
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const port = (srv.address() as { port: number }).port;
    try {
      const blocked = outboundAgent(new OutboundIpPolicy());
      await expect(request(`http://127.0.0.1:${port}/`, { dispatcher: blocked })).rejects.toThrow(/ip_range_blacklist/);
      await expect(request(`http://localhost:${port}/`, { dispatcher: blocked })).rejects.toThrow(/ip_range_blacklist|EBLOCKED/);
      const allowed = outboundAgent(new OutboundIpPolicy({ whitelist: ["127.0.0.1", "::1"] }));
      const res = await request(`http://localhost:${port}/`, { dispatcher: allowed });
      expect(res.statusCode).toBe(200);
      await res.body.text();
      await blocked.close();
      await allowed.close();
    } finally {
      srv.close();
    }
  });
});
