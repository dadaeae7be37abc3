// IP ranges for outbound requests: a CIDR parser and the one check of whether an address may be
// contacted (a blacklist with a whitelist carved out of it), with Synapse's default `ip_range_blacklist`.
// Like Synapse, an IPv4 range also covers its IPv4-mapped, IPv4-compatible and 6to4 IPv6 forms.
import { isIP } from "node:net";

/** A parsed network: its family, first address as a big integer, and prefix length. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly prefix: number;
  /** As written in the config, for messages. */
  readonly text: string;
}

export interface IpRanges {
  blacklist: readonly Cidr[];
  whitelist?: readonly Cidr[];
}

/** Synapse's DEFAULT_IP_RANGE_BLOCKLIST: private, loopback, link-local, test and multicast networks. */
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

function ipv4ToBigInt(ip: string): bigint {
  return ip.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6ToBigInt(ip: string): bigint {
  let text = ip;
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two hex groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const v = ipv4ToBigInt(quad[1]!);
    text = text.slice(0, quad.index) + `${(v >> 16n).toString(16)}:${(v & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const headParts = head ? head.split(":") : [];
  const tailParts = tail ? tail.split(":") : [];
  const missing = 8 - headParts.length - tailParts.length;
  const groups = tail === undefined ? headParts : [...headParts, ...Array<string>(missing).fill("0"), ...tailParts];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** An address as (family, value); undefined when `ip` is not an IP literal. Zone ids (%eth0) are dropped. */
export function parseAddress(ip: string): { family: 4 | 6; value: bigint } | undefined {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const noZone = bare.split("%")[0]!;
  const kind = isIP(noZone);
  if (kind === 4) return { family: 4, value: ipv4ToBigInt(noZone) };
  if (kind === 6) return { family: 6, value: ipv6ToBigInt(noZone) };
  return undefined;
}

/** Parses `a.b.c.d/n`, `x::y/n` or a bare address (a /32 or /128). Throws an Error naming the text. */
export function parseCidr(text: string): Cidr {
  const [addr, len, extra] = String(text).trim().split("/");
  const parsed = addr === undefined ? undefined : parseAddress(addr);
  const bits = parsed?.family === 4 ? 32 : 128;
  const prefix = len === undefined ? bits : /^\d{1,3}$/.test(len) ? Number(len) : NaN;
  if (!parsed || extra !== undefined || !(prefix >= 0 && prefix <= bits)) throw new Error(`invalid IP range: ${JSON.stringify(text)}`);
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  return { family: parsed.family, base: parsed.value & mask, prefix, text: String(text) };
}

function inCidr(family: 4 | 6, value: bigint, c: Cidr): boolean {
  if (family !== c.family) return false;
  const bits = family === 4 ? 32 : 128;
  return value >> BigInt(bits - c.prefix) === c.base >> BigInt(bits - c.prefix);
}

/** The IPv4 address an IPv6 address embeds (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, 6to4 2002:AABB:CCDD::). */
function embeddedIpv4(value: bigint): bigint | undefined {
  if (value >> 32n === 0xffffn) return value & 0xffffffffn;
  if (value >> 32n === 0n && value > 1n) return value & 0xffffffffn;
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn;
  return undefined;
}

function matches(family: 4 | 6, value: bigint, list: readonly Cidr[]): boolean {
  if (list.some((c) => inCidr(family, value, c))) return true;
  const v4 = family === 6 ? embeddedIpv4(value) : undefined;
  return v4 !== undefined && list.some((c) => inCidr(4, v4, c));
}

/**
 * Whether `ip` must not be contacted: it is in the blacklist and not in the whitelist. Text that is not
 * an IP address is blocked (callers resolve names first and check every address).
 */
export function isBlockedAddress(ip: string, ranges: IpRanges): boolean {
  const a = parseAddress(ip);
  if (!a) return true;
  if (ranges.whitelist && matches(a.family, a.value, ranges.whitelist)) return false;
  return matches(a.family, a.value, ranges.blacklist);
}
