// Server discovery: from a server name to where to connect, which certificate name to expect (and send as
// SNI) and which Host header to send — every step of the spec's algorithm: IP literal, explicit port,
// `.well-known/matrix/server` delegation (with its own IP / port / SRV / 8448 sub-steps), SRV
// `_matrix-fed._tcp` then the deprecated `_matrix._tcp`, then port 8448.
// Spec: Server-Server API "Resolving server names".
import { tryParseServerName } from "../domain/ids.js";
export const DEFAULT_FEDERATION_PORT = 8448;
/** SRV answers are kept this long (node's resolver does not report TTLs). */
export const SRV_CACHE_MS = 10 * 60_000;
const unbracket = (host) => (host.startsWith("[") ? host.slice(1, -1) : host);
export class ServerDiscovery {
    o;
    srvCache = new Map();
    constructor(o) {
        this.o = o;
    }
    /** Resolves a server name; throws an Error for a string that is not a server name. */
    async resolve(serverName) {
        const parsed = tryParseServerName(serverName);
        if (!parsed)
            throw new Error(`not a server name: ${JSON.stringify(serverName)}`);
        const { host, port } = parsed;
        // 1. An IP literal: that address, its port or 8448; the certificate is for the IP; Host is the server name.
        if (parsed.kind !== "dns")
            return { targets: [{ host: unbracket(host), port: port ?? DEFAULT_FEDERATION_PORT }], hostHeader: serverName, step: "ip-literal" };
        // 2. A name with a port: its addresses at that port; certificate for the name; Host is the server name.
        if (port !== undefined)
            return { targets: [{ host, port }], hostHeader: serverName, tlsName: host, step: "explicit-port" };
        // 3. .well-known delegation.
        const delegated = await this.o.wellKnown.lookup(host);
        const d = delegated === undefined ? undefined : tryParseServerName(delegated);
        if (delegated !== undefined && d) {
            if (d.kind !== "dns") {
                return { targets: [{ host: unbracket(d.host), port: d.port ?? DEFAULT_FEDERATION_PORT }], hostHeader: delegated, step: "well-known-ip" };
            }
            if (d.port !== undefined)
                return { targets: [{ host: d.host, port: d.port }], hostHeader: `${d.host}:${d.port}`, tlsName: d.host, step: "well-known-port" };
            const srv = await this.srv(`_matrix-fed._tcp.${d.host}`);
            if (srv.length > 0)
                return { targets: srv, hostHeader: d.host, tlsName: d.host, step: "well-known-srv" };
            const legacy = await this.srv(`_matrix._tcp.${d.host}`);
            if (legacy.length > 0)
                return { targets: legacy, hostHeader: d.host, tlsName: d.host, step: "well-known-legacy-srv" };
            return { targets: [{ host: d.host, port: DEFAULT_FEDERATION_PORT }], hostHeader: d.host, tlsName: d.host, step: "well-known-default-port" };
        }
        // 4./5. SRV records of the name itself; the certificate is still for the name (not the SRV target).
        const srv = await this.srv(`_matrix-fed._tcp.${host}`);
        if (srv.length > 0)
            return { targets: srv, hostHeader: host, tlsName: host, step: "srv" };
        const legacy = await this.srv(`_matrix._tcp.${host}`);
        if (legacy.length > 0)
            return { targets: legacy, hostHeader: host, tlsName: host, step: "legacy-srv" };
        // 6. The name at port 8448.
        return { targets: [{ host, port: DEFAULT_FEDERATION_PORT }], hostHeader: host, tlsName: host, step: "default-port" };
    }
    /** SRV targets in RFC 2782 order: by priority, then weighted-random within a priority. "." means none. */
    async srv(name) {
        const now = (this.o.now ?? Date.now)();
        const cached = this.srvCache.get(name);
        if (cached && now < cached.expiresAt)
            return cached.targets;
        const records = (await this.o.dns.resolveSrv(name)).filter((r) => r.name !== "" && r.name !== ".");
        const random = this.o.random ?? Math.random;
        const byPriority = new Map();
        for (const r of records)
            byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
        const targets = [];
        for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
            const group = [...byPriority.get(priority)];
            while (group.length > 0) {
                const total = group.reduce((sum, r) => sum + r.weight, 0);
                let pick = random() * total;
                let i = group.findIndex((r) => (pick -= r.weight) < 0);
                if (i < 0)
                    i = 0;
                const [r] = group.splice(i, 1);
                targets.push({ host: r.name.replace(/\.$/, ""), port: r.port });
            }
        }
        this.srvCache.set(name, { targets, expiresAt: now + SRV_CACHE_MS });
        return targets;
    }
}
