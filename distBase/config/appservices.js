// Application service registration files (spec: Application Service API, "Registration"; Synapse's
// app_service_config_files): read and validated at start-up, so a bad file stops the server with a
// message naming the file and the field. Accepts what Synapse accepts (its unstable keys included).
import { readFileSync } from "node:fs";
import YAML from "yaml";
import { ConfigError } from "./errors.js";
import { parseCidr } from "../domain/net/ip-ranges.js";
const NAMESPACE_KINDS = ["users", "aliases", "rooms"];
/** Characters Python's urllib.parse.quote leaves alone: Synapse refuses any other in sender_localpart. */
const URL_SAFE = /^[A-Za-z0-9_.\-~/]+$/;
/**
 * Compiles a namespace regex as Synapse does (Python `re.match`: anchored at the start only), reading the
 * Python spellings JavaScript lacks: named groups `(?P<n>…)`, back-references `(?P=n)`, `\A`, `\Z` and a
 * leading `(?i)`. Throws the engine's SyntaxError for an invalid pattern.
 */
export function compileNamespaceRegex(source) {
    let flags = "";
    let body = source;
    const inline = /^\(\?([aiLmsux]+)\)/.exec(body);
    if (inline) {
        if (inline[1].includes("i"))
            flags += "i";
        if (inline[1].includes("s"))
            flags += "s";
        if (inline[1].includes("m"))
            flags += "m";
        body = body.slice(inline[0].length);
    }
    body = body
        .replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, "(?<$1>")
        .replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, "\\k<$1>")
        .replace(/\\A/g, "^")
        .replace(/\\Z/g, "$(?![\\s\\S])");
    return new RegExp(`^(?:${body})`, flags);
}
function isMapping(v) {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
class FileReader {
    raw;
    file;
    constructor(raw, file) {
        this.raw = raw;
        this.file = file;
    }
    error(field, problem) {
        return new ConfigError(`app_service_config_files: ${this.file}: ${field}`, problem);
    }
    requiredString(key) {
        const v = this.raw[key];
        if (v === undefined || v === null)
            throw this.error(key, "is required");
        if (typeof v !== "string" || v.length === 0)
            throw this.error(key, "must be a non-empty string");
        return v;
    }
    bool(key, def) {
        const v = this.raw[key];
        if (v === undefined || v === null)
            return def;
        if (typeof v !== "boolean")
            throw this.error(key, "must be true or false");
        return v;
    }
}
function readUrl(f) {
    // Synapse: a string, or an explicit null — never missing, so that push is not turned off by accident.
    if (!("url" in f.raw))
        throw f.error("url", "is required (a URL, or null for a service that receives no traffic)");
    const v = f.raw.url;
    if (v === null)
        return null;
    if (typeof v !== "string" || v.length === 0)
        throw f.error("url", "must be a URL or null");
    let u;
    try {
        u = new URL(v);
    }
    catch {
        throw f.error("url", `${JSON.stringify(v)} is not a URL`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:")
        throw f.error("url", `${JSON.stringify(v)} is not an http(s) URL`);
    return v.replace(/\/+$/, "");
}
function readNamespaces(f) {
    const raw = f.raw.namespaces;
    if (raw === undefined || raw === null)
        throw f.error("namespaces", "is required (a mapping of users, aliases and rooms)");
    if (!isMapping(raw))
        throw f.error("namespaces", "must be a mapping of users, aliases and rooms");
    const out = { users: [], aliases: [], rooms: [] };
    for (const kind of NAMESPACE_KINDS) {
        const list = raw[kind];
        if (list === undefined || list === null)
            continue;
        if (!Array.isArray(list))
            throw f.error(`namespaces.${kind}`, "must be a list of {exclusive, regex}");
        out[kind] = list.map((entry, i) => {
            const where = `namespaces.${kind}[${i}]`;
            if (!isMapping(entry))
                throw f.error(where, "must be a mapping with exclusive and regex");
            if (typeof entry.regex !== "string")
                throw f.error(`${where}.regex`, "is required and must be a string");
            if (typeof entry.exclusive !== "boolean")
                throw f.error(`${where}.exclusive`, "is required and must be true or false");
            let pattern;
            try {
                pattern = compileNamespaceRegex(entry.regex);
            }
            catch (err) {
                throw f.error(`${where}.regex`, `${JSON.stringify(entry.regex)} is not a valid regular expression: ${err.message}`);
            }
            return { exclusive: entry.exclusive, regex: entry.regex, pattern };
        });
    }
    return out;
}
function readStringList(f, key) {
    const v = f.raw[key];
    if (v === undefined || v === null)
        return [];
    if (!Array.isArray(v))
        throw f.error(key, "must be a list of strings");
    return v.map((p, i) => {
        if (typeof p !== "string" || p.length === 0)
            throw f.error(`${key}[${i}]`, "must be a non-empty string");
        return p;
    });
}
/** Validates one registration (`raw` as parsed from `file`). */
export function parseAppServiceRegistration(raw, file, serverName) {
    if (!isMapping(raw))
        throw new ConfigError(`app_service_config_files: ${file}`, "must be a YAML mapping");
    const f = new FileReader(raw, file);
    const id = f.requiredString("id");
    if (id.includes("|"))
        throw f.error("id", "may not contain '|' (it separates the service from the network in instance ids)");
    const url = readUrl(f);
    const as_token = f.requiredString("as_token");
    const hs_token = f.requiredString("hs_token");
    const sender_localpart = f.requiredString("sender_localpart");
    if (!URL_SAFE.test(sender_localpart))
        throw f.error("sender_localpart", "may only use characters that need no URL encoding (A-Z a-z 0-9 _ . - ~ /)");
    if (Buffer.byteLength(`@${sender_localpart}:${serverName}`) > 255)
        throw f.error("sender_localpart", "makes a user id longer than 255 bytes");
    const namespaces = readNamespaces(f);
    const protocols = readStringList(f, "protocols");
    let ip_range_whitelist;
    try {
        ip_range_whitelist = readStringList(f, "ip_range_whitelist").map(parseCidr);
    }
    catch (err) {
        throw f.error("ip_range_whitelist", err.message);
    }
    return {
        id,
        url,
        as_token,
        hs_token,
        sender_localpart,
        namespaces,
        rate_limited: f.bool("rate_limited", true),
        protocols: [...new Set(protocols)],
        receive_ephemeral: f.bool("receive_ephemeral", false),
        push_ephemeral_unstable: f.bool("de.sorunome.msc2409.push_ephemeral", false),
        msc3202: f.bool("org.matrix.msc3202", false),
        msc4190: f.bool("io.element.msc4190", false),
        ip_range_whitelist,
        file,
    };
}
/**
 * Reads every registration file; refuses an unreadable file, a bad field, and two services sharing an id,
 * an as_token or an hs_token (a shared token would let one service act as, or be reached as, the other).
 */
export function loadAppServiceRegistrations(files, serverName) {
    const seen = new Map();
    const out = [];
    for (const file of files) {
        let raw;
        try {
            raw = YAML.parse(readFileSync(file, "utf8"));
        }
        catch (err) {
            throw new ConfigError(`app_service_config_files: ${file}`, err.message);
        }
        const reg = parseAppServiceRegistration(raw, file, serverName);
        const keys = [["id", reg.id], ["as_token", reg.as_token], ["hs_token", reg.hs_token]];
        for (const [field, value] of keys) {
            const other = seen.get(`${field}\u0000${value}`);
            if (other)
                throw new ConfigError(`app_service_config_files: ${file}: ${field}`, `duplicate ${field}: ${other} uses the same one`);
            seen.set(`${field}\u0000${value}`, file);
        }
        out.push(reg);
    }
    return out;
}
