// The outbound address check (src/domain/net/ip-ranges.ts): CIDR parsing and its errors, Synapse's
// default blacklist, IPv4 ranges covering IPv4-mapped, -compatible and 6to4 IPv6 forms, the whitelist
// carving exceptions out of the blacklist, and text that is not an address.
import { describe, expect, it } from "vitest";
import { DEFAULT_IP_RANGE_BLACKLIST, isBlockedAddress, parseCidr } from "../../src/domain/net/ip-ranges.ts";

const blacklist = DEFAULT_IP_RANGE_BLACKLIST.map(parseCidr);

describe("ip ranges", () => {
  it("parses CIDRs and bare addresses, and refuses malformed ones", () => {
    expect(parseCidr("10.0.0.0/8")).toMatchObject({ family: 4, prefix: 8, base: 0x0a000000n });
    expect(parseCidr("10.1.2.3/8").base).toBe(0x0a000000n);
    expect(parseCidr("192.168.1.1")).toMatchObject({ family: 4, prefix: 32 });
    expect(parseCidr("fe80::/10")).toMatchObject({ family: 6, prefix: 10, base: 0xfe80n << 112n });
    expect(parseCidr("::1")).toMatchObject({ family: 6, prefix: 128, base: 1n });
    for (const bad of ["", "10.0.0.0/33", "::/129", "10.0.0/8", "300.1.1.1", "10.0.0.0/8/1", "10.0.0.0/x", "example.com"]) expect(() => parseCidr(bad), bad).toThrow(/invalid IP range/);
  });

  it("blocks Synapse's private, loopback, link-local, test and multicast ranges; allows public addresses", () => {
    for (const ip of ["127.0.0.1", "127.255.1.2", "10.9.8.7", "172.16.0.1", "172.31.255.255", "192.168.0.1", "100.64.0.1", "169.254.169.254", "192.0.2.5", "198.18.0.1", "224.0.0.1", "::1", "fe80::1", "fd12:3456::1", "2001:db8::1", "ff02::1", "fec0::1"])
      expect(isBlockedAddress(ip, { blacklist }), ip).toBe(true);
    for (const ip of ["8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700::1111", "100.128.0.1"]) expect(isBlockedAddress(ip, { blacklist }), ip).toBe(false);
  });

  it("applies IPv4 ranges to the IPv6 forms that embed an IPv4 address", () => {
    for (const ip of ["::ffff:127.0.0.1", "::ffff:7f00:1", "::10.0.0.1", "2002:0a00:0001::1", "[::ffff:192.168.1.1]", "fe80::1%eth0"])
      expect(isBlockedAddress(ip, { blacklist }), ip).toBe(true);
    expect(isBlockedAddress("::ffff:8.8.8.8", { blacklist })).toBe(false);
    expect(isBlockedAddress("2002:0808:0808::1", { blacklist })).toBe(false);
  });

  it("lets the whitelist carve exceptions, and blocks text that is not an address", () => {
    const whitelist = [parseCidr("127.0.0.1")];
    expect(isBlockedAddress("127.0.0.1", { blacklist, whitelist })).toBe(false);
    expect(isBlockedAddress("::ffff:127.0.0.1", { blacklist, whitelist })).toBe(false);
    expect(isBlockedAddress("127.0.0.2", { blacklist, whitelist })).toBe(true);
    for (const t of ["localhost", "", "1.2.3", "0x7f000001"]) expect(isBlockedAddress(t, { blacklist: [] }), t).toBe(true);
  });
});
