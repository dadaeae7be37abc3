// IP range checks for outbound requests: CIDR parsing, Synapse's default blacklist, the whitelist's
// override, IPv4 ranges applying to IPv4-mapped / -compatible / 6to4 IPv6 forms, 0.0.0.0 and :: always.
import { describe, expect, it } from "vitest";
import { DEFAULT_IP_RANGE_BLACKLIST, isBlockedAddress, parseCidr, parseCidrList, parseIp } from "../../../src/domain/net/ip-ranges.ts";

const defaults = { blacklist: parseCidrList(DEFAULT_IP_RANGE_BLACKLIST), whitelist: [] };

describe("parseIp / parseCidr", () => {
  it("parses IPv4, IPv6 (compressed, embedded IPv4) and refuses the rest", () => {
    expect([...parseIp("10.1.2.3")!]).toEqual([10, 1, 2, 3]);
    expect(Buffer.from(parseIp("::1")!).toString("hex")).toBe("00000000000000000000000000000001");
    expect(Buffer.from(parseIp("2001:db8::8:800:200c:417a")!).toString("hex")).toBe("20010db80000000000080800200c417a");
    expect(Buffer.from(parseIp("::ffff:192.0.2.1")!).toString("hex")).toBe("00000000000000000000ffffc0000201");
    expect(Buffer.from(parseIp("fe80::")!).toString("hex")).toBe("fe800000000000000000000000000000");
    for (const bad of ["", "1.2.3", "256.1.1.1", "example.org", "::g", "fe80::1%eth0", "[::1]"]) expect(parseIp(bad)).toBeUndefined();
  });

  it("parses ranges, an address alone as a host range, and clears host bits", () => {
    expect(parseCidr("10.0.0.0/8")).toMatchObject({ prefix: 8 });
    expect(parseCidr("192.168.1.7")).toMatchObject({ prefix: 32 });
    expect(parseCidr("::1")).toMatchObject({ prefix: 128 });
    expect([...parseCidr("10.1.2.3/8").bytes]).toEqual([10, 0, 0, 0]);
    expect(() => parseCidr("10.0.0.0/33")).toThrow(/prefix/);
    expect(() => parseCidr("::/129")).toThrow(/prefix/);
    expect(() => parseCidr("10.0.0.0/x")).toThrow();
    expect(() => parseCidr("nope/8")).toThrow(/not an IP/);
  });
});

describe("isBlockedAddress", () => {
  it("blocks Synapse's default ranges and lets public addresses through", () => {
    for (const ip of ["127.0.0.1", "10.9.8.7", "172.16.0.1", "172.31.255.255", "192.168.0.1", "100.64.0.1", "169.254.1.1", "224.0.0.1", "::1", "fe80::1", "fd00::1", "2001:db8::1", "ff02::1"])
      expect(isBlockedAddress(ip, defaults), ip).toBe(true);
    for (const ip of ["8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700:4700::1111"]) expect(isBlockedAddress(ip, defaults), ip).toBe(false);
  });

  it("applies IPv4 ranges to IPv4-mapped, IPv4-compatible and 6to4 addresses", () => {
    expect(isBlockedAddress("::ffff:127.0.0.1", defaults)).toBe(true);
    expect(isBlockedAddress("::ffff:7f00:1", defaults)).toBe(true);
    expect(isBlockedAddress("::10.0.0.1", defaults)).toBe(true);
    expect(isBlockedAddress("2002:c0a8:0101::1", defaults)).toBe(true); // 6to4 of 192.168.1.1
    expect(isBlockedAddress("::ffff:8.8.8.8", defaults)).toBe(false);
  });

  it("the whitelist overrides the blacklist, also for mapped forms", () => {
    const ranges = { blacklist: defaults.blacklist, whitelist: parseCidrList(["127.0.0.0/8", "::1/128"]) };
    expect(isBlockedAddress("127.0.0.1", ranges)).toBe(false);
    expect(isBlockedAddress("127.5.5.5", ranges)).toBe(false);
    expect(isBlockedAddress("::ffff:127.0.0.1", ranges)).toBe(false);
    expect(isBlockedAddress("::1", ranges)).toBe(false);
    expect(isBlockedAddress("[::1]", ranges)).toBe(false);
    expect(isBlockedAddress("10.0.0.1", ranges)).toBe(true);
  });

  it("always blocks 0.0.0.0 and :: (even with an empty blacklist) and anything that is not an IP", () => {
    const none = { blacklist: [], whitelist: [] };
    expect(isBlockedAddress("0.0.0.0", none)).toBe(true);
    expect(isBlockedAddress("::", none)).toBe(true);
    expect(isBlockedAddress("127.0.0.1", none)).toBe(false);
    expect(isBlockedAddress("localhost", none)).toBe(true);
  });
});

describe("ranges given as text", () => {
  it("are parsed on the fly", () => {
    expect(isBlockedAddress("10.0.0.1", { blacklist: ["10.0.0.0/8"], whitelist: [] })).toBe(true);
    expect(isBlockedAddress("10.0.0.1", { blacklist: ["10.0.0.0/8"], whitelist: ["10.0.0.1"] })).toBe(false);
  });
});
