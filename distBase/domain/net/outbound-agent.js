// The undici dispatcher for requests to addresses users or remote servers choose (push gateways; later
// URL previews, federation, application services): every connection is checked against the
// ip_range_blacklist / ip_range_whitelist policy (ip-ranges.ts) at connect time — IP literals directly,
// host names after DNS resolution, so a name that resolves to a private address is refused too.
import { lookup as dnsLookup } from "node:dns";
import { isIP } from "node:net";
import { Agent, buildConnector } from "undici";
export class BlockedAddressError extends Error {
    constructor(host) {
        super(`Refusing to connect to ${host}: the address is in ip_range_blacklist`);
        this.name = "BlockedAddressError";
    }
}
/** An undici Agent that only connects to addresses `policy` allows. */
export function outboundAgent(policy, opts = {}) {
    const lookup = (hostname, options, cb) => {
        dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
            if (err)
                return cb(err, []);
            const ok = addresses.filter((a) => policy.allows(a.address));
            if (ok.length === 0)
                return cb(Object.assign(new BlockedAddressError(hostname), { code: "EBLOCKED" }), []);
            if (options.all)
                cb(null, ok);
            else
                cb(null, ok[0].address, ok[0].family);
        });
    };
    const base = buildConnector({ lookup: lookup, timeout: opts.connectTimeoutMs ?? 10_000, ...(opts.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}) });
    return new Agent({
        headersTimeout: opts.headersTimeoutMs ?? 30_000,
        bodyTimeout: opts.bodyTimeoutMs ?? 30_000,
        connect: (options, callback) => {
            const host = options.hostname.startsWith("[") ? options.hostname.slice(1, -1) : options.hostname;
            if (isIP(host) && !policy.allows(host))
                return callback(new BlockedAddressError(host), null);
            return base(options, callback);
        },
    });
}
