// IP address ranges: CIDR parsing and the one check every outbound request (federation, push, media,
// URL previews) makes before it connects: is this address blocked by `ip_range_blacklist` and not let
// through by `ip_range_whitelist`? Synapse's options and defaults; an IPv4 range also covers the IPv4
// address embedded in IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and 6to4 (2002::/16)
// IPv6 addresses, as Synapse's generate_ip_set does; 0.0.0.0 and :: are always blocked.
import { isIP } from "node:net";
/** Synapse's DEFAULT_IP_RANGE_BLOCKLIST: loopback, private, CGNAT, link-local, test, multicast ranges. */
export const DEFAULT_IP_RANGE_BLACKLIST = [
    "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "192.0.0.0/24",
    "169.254.0.0/16", "192.88.99.0/24", "198.18.0.0/15", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",
    "224.0.0.0/4", "::1/128", "fe80::/10", "fc00::/7", "2001:db8::/32", "ff00::/8", "fec0::/10",
];
/** Addresses blocked whatever the configuration says (Synapse adds them to every blacklist). */
const ALWAYS_BLOCKED = [parseCidr("0.0.0.0/32"), parseCidr("::/128")];
/** The bytes of an IPv4 or IPv6 literal (no brackets, no zone), or undefined when it is not one. */
export function parseIp(text) {
    const kind = isIP(text);
    if (kind === 4)
        return Uint8Array.from(text.split(".").map(Number));
    if (kind !== 6 || text.includes("%"))
        return undefined;
    let head = text;
    let v4tail = [];
    const lastColon = text.lastIndexOf(":");
    if (text.slice(lastColon + 1).includes(".")) {
        v4tail = text.slice(lastColon + 1).split(".").map(Number);
        head = text.slice(0, lastColon + 1) + "0:0"; // two placeholder groups, replaced below
    }
    const [left, right] = head.includes("::") ? head.split("::") : [head, undefined];
    const groups = (s) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
    const l = groups(left);
    const r = right === undefined ? [] : groups(right);
    const all = right === undefined ? l : [...l, ...new Array(8 - l.length - r.length).fill(0), ...r];
    const out = new Uint8Array(16);
    all.forEach((g, i) => { out[i * 2] = g >> 8; out[i * 2 + 1] = g & 0xff; });
    if (v4tail.length === 4)
        out.set(v4tail, 12);
    return out;
}
/**
 * Parses `a.b.c.d[/n]` or `x:y::z[/n]` (an address alone is a /32 or /128). Throws an Error naming the
 * text when it is not a range; host bits set beyond the prefix are cleared, as netaddr does.
 */
export function parseCidr(text) {
    const slash = text.indexOf("/");
    const addr = slash < 0 ? text : text.slice(0, slash);
    const bytes = parseIp(addr.trim());
    if (!bytes)
        throw new Error(`${JSON.stringify(text)} is not an IP address or CIDR range`);
    const max = bytes.length * 8;
    let prefix = max;
    if (slash >= 0) {
        const p = text.slice(slash + 1).trim();
        if (!/^\d{1,3}$/.test(p) || Number(p) > max)
            throw new Error(`${JSON.stringify(text)} has an invalid prefix length`);
        prefix = Number(p);
    }
    const masked = new Uint8Array(bytes);
    for (let bit = prefix; bit < max; bit++)
        masked[bit >> 3] &= ~(0x80 >> (bit & 7));
    return { bytes: masked, prefix, text };
}
/** Parses a list of ranges; throws an Error naming the first bad one. */
export function parseCidrList(texts) {
    return texts.map(parseCidr);
}
function inCidr(ip, cidr) {
    if (ip.length !== cidr.bytes.length)
        return false;
    const full = cidr.prefix >> 3;
    for (let i = 0; i < full; i++)
        if (ip[i] !== cidr.bytes[i])
            return false;
    const rest = cidr.prefix & 7;
    if (rest === 0)
        return true;
    const mask = (0xff << (8 - rest)) & 0xff;
    return (ip[full] & mask) === cidr.bytes[full];
}
/** The IPv4 address an IPv6 address carries (mapped, compatible or 6to4), if any. */
function embeddedIpv4(ip) {
    if (ip.length !== 16)
        return undefined;
    const zeros = (from, to) => ip.subarray(from, to).every((b) => b === 0);
    if (zeros(0, 10) && ip[10] === 0xff && ip[11] === 0xff)
        return ip.slice(12, 16); // ::ffff:a.b.c.d
    if (zeros(0, 12) && !zeros(12, 16))
        return ip.slice(12, 16); // ::a.b.c.d
    if (ip[0] === 0x20 && ip[1] === 0x02)
        return ip.slice(2, 6); // 2002:aabb:ccdd::/48
    return undefined;
}
function matches(ip, ranges) {
    const v4 = embeddedIpv4(ip);
    return ranges.some((r) => {
        const c = typeof r === "string" ? parseCidr(r) : r;
        return inCidr(ip, c) || (v4 !== undefined && inCidr(v4, c));
    });
}
/**
 * Whether an outbound connection to `ip` must be refused: it is in the blacklist (or is 0.0.0.0 / ::)
 * and not in the whitelist. Something that is not an IP literal is blocked. Ranges given as text are
 * parsed here (and throw on a bad one): pass parsed Cidrs on hot paths.
 */
export function isBlockedAddress(ip, ranges) {
    const bytes = parseIp(ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip);
    if (!bytes)
        return true;
    if (!matches(bytes, ranges.blacklist) && !matches(bytes, ALWAYS_BLOCKED))
        return false;
    return !matches(bytes, ranges.whitelist);
}
/** Whether an address (e.g. a request's client address) lies in one of these ranges; not an IP: no. */
export function ipInRanges(ip, ranges) {
    const bytes = parseIp(ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip);
    return bytes !== undefined && matches(bytes, ranges);
}
/** Throws (naming the offending entry) unless every entry is an IP address or CIDR range. */
export function checkIpRanges(cidrs) {
    parseCidrList(cidrs);
}
/** The outbound policy of Synapse's ip_range_blacklist / ip_range_whitelist, parsed once. */
export class OutboundIpPolicy {
    ranges;
    constructor(opts = {}) {
        const parse = (list) => list.map((c) => (typeof c === "string" ? parseCidr(c) : c));
        this.ranges = { blacklist: parse(opts.blacklist ?? DEFAULT_IP_RANGE_BLACKLIST), whitelist: parse(opts.whitelist ?? []) };
    }
    /** May a request connect to this address? (Not an IP at all: no.) */
    allows(ip) {
        return !isBlockedAddress(ip, this.ranges);
    }
}
