// Which IP addresses outbound requests (push gateways, and later federation, URL previews, application
// services) may reach: Synapse's `ip_range_blacklist` (default: loopback, private, link-local, testing
// and multicast ranges, plus 0.0.0.0 and :: always) and `ip_range_whitelist` (exceptions to it). An IPv4
// range also covers its IPv4-mapped, IPv4-compatible and 6to4 IPv6 forms, as Synapse's generate_ip_set.
import { isIP } from "node:net";

/** Synapse's DEFAULT_IP_RANGE_BLOCKLIST. */
export const DEFAULT_IP_RANGE_BLACKLIST: readonly string[] = [
  "127.0.0.0/8",
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "100.64.0.0/10",
  "192.0.0.0/24",
  "169.254.0.0/16",
  "192.88.99.0/24",
  "198.18.0.0/15",
  "192.0.2.0/24",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "::1/128",
  "fe80::/10",
  "fc00::/7",
  "2001:db8::/32",
  "ff00::/8",
  "fec0::/10",
];

/** Always refused, whatever the configured blacklist says (as Synapse). */
const ALWAYS_BLOCKED = ["0.0.0.0", "::"];

interface Range {
  /** The network as a 128-bit integer (IPv4 as IPv4-mapped IPv6). */
  base: bigint;
  prefix: number;
}

function parseV4(ip: string): bigint | undefined {
  const parts = ip.split(".");
  if (parts.length !== 4) return undefined;
  let n = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = (n << 8n) | BigInt(Number(p));
  }
  return n;
}

function parseV6(ip: string): bigint | undefined {
  let text = ip.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  // A trailing dotted IPv4 part (::ffff:1.2.3.4).
  const lastColon = text.lastIndexOf(":");
  let tailWords: number[] = [];
  if (text.includes(".")) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tailWords = [Number(v4 >> 16n), Number(v4 & 0xffffn)];
    text = text.slice(0, lastColon + 1) + "0:0";
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const words = (s: string) => (s === "" ? [] : s.split(":"));
  const head = words(halves[0]!);
  const tail = halves.length === 2 ? words(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (all.length !== 8) return undefined;
  let n = 0n;
  for (const w of all) {
    if (!/^[0-9a-f]{1,4}$/.test(w)) return undefined;
    n = (n << 16n) | BigInt(parseInt(w, 16));
  }
  if (tailWords.length === 2) n = (n & ~0xffffffffn) | (BigInt(tailWords[0]!) << 16n) | BigInt(tailWords[1]!);
  return n;
}

const V4_MAPPED = 0xffffn << 32n;

/** An address as a 128-bit integer (IPv4 mapped into ::ffff:0:0/96), or undefined when not an IP. */
export function ipToBigInt(ip: string): bigint | undefined {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const kind = isIP(bare.split("%")[0]!);
  if (kind === 4) {
    const v = parseV4(bare);
    return v === undefined ? undefined : V4_MAPPED | v;
  }
  if (kind === 6) return parseV6(bare);
  return undefined;
}

/** Parses "a.b.c.d[/n]" or "x::y[/n]"; throws with a message naming the value when malformed. */
function parseRange(text: string): Range[] {
  const [addr, bits, extra] = text.trim().split("/");
  if (extra !== undefined || !addr) throw new Error(`Invalid IP range: ${text}`);
  const isV4 = isIP(addr) === 4;
  if (!isV4 && isIP(addr) !== 6) throw new Error(`Invalid IP range: ${text}`);
  const max = isV4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(prefix >= 0 && prefix <= max)) throw new Error(`Invalid IP range: ${text}`);
  const value = ipToBigInt(addr)!;
  if (!isV4) return [{ base: mask(value, prefix), prefix }];
  const v4 = value & 0xffffffffn;
  const p6 = prefix + 96;
  return [
    { base: mask(V4_MAPPED | v4, p6), prefix: p6 }, // ::ffff:a.b.c.d
    { base: mask(v4, p6), prefix: p6 }, // ::a.b.c.d (IPv4-compatible)
    { base: mask((0x2002n << 112n) | (v4 << 80n), prefix + 16), prefix: prefix + 16 }, // 6to4 2002:aabb:ccdd::/48
  ];
}

function mask(value: bigint, prefix: number): bigint {
  if (prefix === 0) return 0n;
  const keep = ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
  return value & keep;
}

/** A set of IP ranges (CIDR notation). */
export class IpRangeSet {
  private readonly ranges: Range[];
  constructor(cidrs: readonly string[]) {
    this.ranges = cidrs.flatMap(parseRange);
  }
  contains(ip: string): boolean {
    const v = ipToBigInt(ip);
    if (v === undefined) return false;
    return this.ranges.some((r) => mask(v, r.prefix) === r.base);
  }
}

/** Throws (with the offending entry in the message) unless every entry is an IP address or CIDR range. */
export function checkIpRanges(cidrs: readonly string[]): void {
  for (const c of cidrs) parseRange(c);
}

/** The outbound policy of Synapse's ip_range_blacklist / ip_range_whitelist. */
export class OutboundIpPolicy {
  private readonly blocked: IpRangeSet;
  private readonly allowed: IpRangeSet;
  constructor(opts: { blacklist?: readonly string[]; whitelist?: readonly string[] } = {}) {
    this.blocked = new IpRangeSet([...(opts.blacklist ?? DEFAULT_IP_RANGE_BLACKLIST), ...ALWAYS_BLOCKED]);
    this.allowed = new IpRangeSet(opts.whitelist ?? []);
  }
  /** May a request connect to this address? (Not an IP at all: no.) */
  allows(ip: string): boolean {
    if (ipToBigInt(ip) === undefined) return false;
    return !this.blocked.contains(ip) || this.allowed.contains(ip);
  }
}
