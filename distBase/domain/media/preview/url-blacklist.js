function globToRegExp(glob) {
    let out = "";
    for (let i = 0; i < glob.length; i++) {
        const c = glob[i];
        if (c === "*")
            out += ".*";
        else if (c === "?")
            out += ".";
        else if (c === "[") {
            const close = glob.indexOf("]", i + 2);
            if (close < 0)
                out += "\\[";
            else {
                let set = glob.slice(i + 1, close).replace(/\\/g, "\\\\");
                if (set.startsWith("!"))
                    set = "^" + set.slice(1);
                out += `[${set}]`;
                i = close;
            }
        }
        else
            out += c.replace(/[.+^${}()|\\/]/g, "\\$&");
    }
    return new RegExp(`^${out}$`, "s");
}
/** The parts of `url` under urlsplit's names; null where urlsplit gives None. */
function parts(url) {
    const auth = url.username || url.password ? `${url.username}${url.password ? ":" + url.password : ""}@` : "";
    const last = url.pathname.split("/").pop() ?? "";
    return {
        scheme: url.protocol.replace(/:$/, ""),
        netloc: auth + url.host,
        path: url.pathname,
        params: last.includes(";") ? last.slice(last.indexOf(";") + 1) : "",
        query: url.search.replace(/^\?/, ""),
        fragment: url.hash.replace(/^#/, ""),
        username: url.username ? decodeURIComponent(url.username) : null,
        password: url.password ? decodeURIComponent(url.password) : null,
        hostname: url.hostname ? url.hostname.replace(/^\[|\]$/g, "").toLowerCase() : null,
        port: url.port || null,
    };
}
export function isUrlBlacklisted(url, entries) {
    const values = parts(url);
    return entries.some((entry) => Object.entries(entry).every(([part, pattern]) => {
        const value = values[part];
        if (value === null || pattern === undefined)
            return false;
        return pattern.startsWith("^") ? new RegExp(pattern).test(value) : globToRegExp(pattern).test(value);
    }));
}
