// Outbound HTTP for URL previews, refusing private addresses on every hop: the URL pattern blacklist and
// the scheme are checked for the URL and for every redirect; an IP literal is checked before connecting;
// a name is resolved here, every address it has is checked (one blocked address refuses the name, as
// Synapse does), and the connection goes to a checked address — undici connects through this lookup, so
// no second DNS answer (a rebind) can slip in between the check and the connect.
import { isIP } from "node:net";
import { Agent, request } from "undici";
import { MatrixError } from "../../errors.js";
import { isBlockedAddress } from "../../net/ip-ranges.js";
import { isUrlBlacklisted } from "./url-blacklist.js";
class BlockedName extends Error {
    code = "EWEFTBLOCKED";
}
export const urlBlocked = () => new MatrixError("M_UNKNOWN", "URL blocked by url pattern blocklist entry", 403);
export const ipBlocked = () => new MatrixError("M_UNKNOWN", "IP address blocked", 403);
export const dnsFailure = () => new MatrixError("M_UNKNOWN", "DNS resolution failure during URL preview generation", 502);
/** A net `lookup` answering only with addresses the ranges allow; a name with any blocked address fails. */
export function checkedLookup(resolver, ranges) {
    return (hostname, options, callback) => {
        resolver(hostname).then((all) => {
            if (all.length === 0 || all.some((a) => isBlockedAddress(a, ranges)))
                throw new BlockedName(`${hostname} resolves to a blocked address`);
            const family = typeof options === "object" ? options.family : options;
            const usable = all.filter((a) => !family || family === 0 || isIP(a) === Number(String(family).replace("IPv", "")));
            if (usable.length === 0)
                throw new BlockedName(`${hostname} has no usable address`);
            if (typeof options === "object" && options.all)
                callback(null, usable.map((address) => ({ address, family: isIP(address) })));
            else
                callback(null, usable[0], isIP(usable[0]));
        }).catch((err) => callback(Object.assign(err, { code: err.code ?? "ENOTFOUND" }), "", 0));
    };
}
/** Checks one hop's URL before any connection: scheme, pattern blacklist, IP literal. */
export function checkHop(url, policy) {
    if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new MatrixError("M_UNKNOWN", "Only http and https URLs can be previewed", 400);
    if (isUrlBlacklisted(url, policy.urlBlacklist))
        throw urlBlocked();
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) && isBlockedAddress(host, policy.ranges))
        throw ipBlocked();
}
function isBlockedConnectError(err) {
    for (let e = err; e; e = e.cause)
        if (e.code === "EWEFTBLOCKED")
            return true;
    return false;
}
/** GETs `url`, following redirects (each hop checked); the caller reads or discards the body. */
export async function safeGet(start, policy) {
    const agent = new Agent({ connect: { lookup: checkedLookup(policy.resolver, policy.ranges), timeout: policy.timeoutMs }, headersTimeout: policy.timeoutMs, bodyTimeout: policy.timeoutMs });
    let url = start;
    try {
        for (let hop = 0;; hop++) {
            checkHop(url, policy);
            let res;
            try {
                res = await request(url, {
                    method: "GET",
                    dispatcher: agent,
                    headers: { "accept-language": policy.acceptLanguage.join(", "), "user-agent": "Weft (bot; URL preview)", accept: "text/html,application/xhtml+xml,image/*;q=0.9,*/*;q=0.8" },
                });
            }
            catch (err) {
                if (isBlockedConnectError(err))
                    throw dnsFailure();
                throw new MatrixError("M_UNKNOWN", `Failed to download content: ${err.message}`, 502);
            }
            const location = res.headers.location;
            if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === "string") {
                res.body.on("error", () => { });
                res.body.destroy();
                if (hop >= policy.maxRedirects)
                    throw new MatrixError("M_UNKNOWN", "Too many redirects", 502);
                try {
                    url = new URL(location, url);
                }
                catch {
                    throw new MatrixError("M_UNKNOWN", "Invalid redirect", 502);
                }
                continue;
            }
            const body = res.body;
            // The agent closes once the body has been read or dropped.
            body.once("close", () => void agent.close());
            return { url, status: res.statusCode, headers: res.headers, body };
        }
    }
    catch (err) {
        await agent.destroy();
        throw err;
    }
}
