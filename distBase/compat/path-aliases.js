const BRANDS = new Set(["_matrix", "_proto"]);
/** The aliased version segments after /{brand}/<area>/, and the version each stands for. */
const VERSION_ALIASES = {
    client: { r0: "v3", v3: "v3" },
    media: { r0: "v3", v1: "v3", v3: "v3" },
};
const ADMIN_BRANDS = new Set(["_impl", "_synapse"]);
/** Reads the segment starting after the slashes at `i`: [its text as the router decodes it, its end], or undefined. */
function segmentAt(path, i, end) {
    while (i < end && path.charCodeAt(i) === 47)
        i++; // the router ignores duplicate slashes
    if (i >= end)
        return undefined;
    let j = path.indexOf("/", i);
    if (j === -1 || j > end)
        j = end;
    let seg = path.slice(i, j);
    if (seg.includes("%")) {
        try {
            seg = decodeURIComponent(seg); // the router matches percent-decoded paths
        }
        catch {
            return undefined; // malformed: left for the router to refuse
        }
    }
    return [seg, j];
}
/** The end of the path part of a request target (before its query or fragment). */
function pathEnd(url) {
    let end = url.length;
    const q = url.indexOf("?");
    if (q !== -1)
        end = q;
    const h = url.indexOf("#");
    if (h !== -1 && h < end)
        end = h;
    return end;
}
/** The alias prefix of `path` (a path or request target starting with "/"), or undefined when it has none. */
export function splitPrefix(path) {
    if (path.charCodeAt(0) !== 47 || path.length < 2)
        return undefined;
    const end = pathEnd(path);
    const first = segmentAt(path, 0, end);
    if (!first)
        return undefined;
    const [s0, e0] = first;
    if (BRANDS.has(s0)) {
        const second = segmentAt(path, e0, end);
        const versions = second && VERSION_ALIASES[second[0]];
        const third = versions && segmentAt(path, second[1], end);
        const canonicalVersion = third && versions[third[0]];
        if (second && third && canonicalVersion)
            return { prefix: `/${s0}/${second[0]}/${third[0]}`, canonical: `/_matrix/${second[0]}/${canonicalVersion}`, restAt: third[1] };
        return { prefix: `/${s0}`, canonical: "/_matrix", restAt: e0 };
    }
    if (ADMIN_BRANDS.has(s0)) {
        const second = segmentAt(path, e0, end);
        if (second && second[0] === "admin")
            return { prefix: `/${s0}/admin`, canonical: "/_impl/admin", restAt: second[1] };
    }
    return undefined;
}
/** A route path's canonical form and the alias prefix it was written with (route registration). */
export function canonicalRoute(fullPath) {
    const split = splitPrefix(fullPath);
    return split ? { url: split.canonical + fullPath.slice(split.restAt), prefix: split.prefix } : { url: fullPath, prefix: undefined };
}
/** The alias prefix a request was sent under, kept on the raw request by `rewriteUrl`. */
const SENT_PREFIX = Symbol("weft.sentPrefix");
/** Fastify's `rewriteUrl`: an aliased request target becomes its canonical one; anything else is left as sent. */
export function rewriteUrl(raw) {
    const url = raw.url ?? "/";
    // An absolute-form target (http://host/path) is routed by its path, as the router does.
    let start = 0;
    if (url.charCodeAt(0) !== 47) {
        const scheme = url.indexOf("://");
        if (scheme === -1)
            return url;
        start = url.indexOf("/", scheme + 3);
        if (start === -1)
            return url;
    }
    if (url.charCodeAt(start + 1) !== 95 && url.charCodeAt(start + 1) !== 47 && url.charCodeAt(start + 1) !== 37)
        return url; // "_", "/", "%": the only starts of a prefix
    const path = start === 0 ? url : url.slice(start);
    const split = splitPrefix(path);
    if (!split)
        return url;
    raw[SENT_PREFIX] = split;
    return split.prefix === split.canonical && start === 0 ? url : split.canonical + path.slice(split.restAt);
}
/** Route config key: the alias prefixes a route answers under. */
export const ALIASES = "weftAliases";
/**
 * Whether the request's alias may reach the route it matched: "ok", or the answer the alias would have
 * had if registered on its own — "not-found" when it serves nothing at this URL, "method" when it serves
 * other methods there.
 */
export function aliasAccess(req, table) {
    const sent = req.raw[SENT_PREFIX];
    const opts = req.routeOptions;
    const allowed = opts.config[ALIASES];
    if (!allowed || !sent || allowed.has(sent.prefix))
        return "ok";
    const byMethod = table.get(opts.url ?? "");
    if (byMethod)
        for (const prefixes of byMethod.values())
            if (prefixes.has(sent.prefix))
                return "method";
    return "not-found";
}
/** The route pattern as the request named it (metrics): the canonical pattern under the prefix sent. */
export function routePattern(req) {
    const url = req.routeOptions.url;
    const sent = req.raw[SENT_PREFIX];
    if (url === undefined || !sent || !url.startsWith(sent.canonical))
        return url;
    return sent.prefix + url.slice(sent.canonical.length);
}
