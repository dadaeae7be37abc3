import { MatrixError } from "../domain/errors.js";
import { authenticate } from "../domain/accounts/authenticate.js";
import { bearerToken } from "../shared/http-auth.js";
import { requireNotGuest } from "../domain/accounts/guest-access.js";
import { parseJsonText } from "../domain/json-limits.js";
import { parseIntText } from "../domain/numbers.js";
import { noteRequester } from "../observability/request-context.js";
import { ALIASES, canonicalRoute } from "./path-aliases.js";
export const BRANDS = ["_matrix", "_proto"];
const UTF8 = new TextDecoder("utf-8", { fatal: true });
function parseBody(req, maxDepth) {
    const raw = req.body;
    if (raw === undefined || raw === null)
        return undefined;
    if (Buffer.isBuffer(raw)) {
        if (raw.length === 0)
            return undefined;
        let text;
        try {
            text = UTF8.decode(raw); // invalid UTF-8 is no JSON text (as Synapse: M_NOT_JSON)
        }
        catch {
            throw new MatrixError("M_NOT_JSON", "Content not JSON.", 400);
        }
        const parsed = parseJsonText(text, { maxDepth });
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
            throw new MatrixError("M_BAD_JSON", "Content must be a JSON object.", 400);
        return parsed;
    }
    return raw;
}
/**
 * Path parameters that name something and so are never empty: `/room_keys/keys/` (what a client's URL
 * normalization makes of `/room_keys/keys/{roomId}/..`) is no route, not the room "" (as Synapse's patterns).
 */
const NAMING_PARAMS = ["roomId", "userId", "serverName", "mediaId", "eventId", "txnId", "sessionId", "deviceId", "roomIdOrAlias", "filterId"];
async function makeCall(s, spec, req, reply) {
    const params = req.params;
    for (const name of NAMING_PARAMS)
        if (params[name] === "")
            throw new MatrixError("M_UNRECOGNIZED", "Unrecognized request", 404);
    const token = bearerToken(req);
    const clientIp = req.ip;
    let requester;
    if (spec.auth !== "none" && token) {
        const q = req.query;
        const first = (v) => (Array.isArray(v) ? v[0] : v);
        const asUserId = first(q.user_id);
        const asDeviceId = first(q.device_id ?? q["org.matrix.msc3202.device_id"]);
        requester = await authenticate(s, token, {
            asUserId: typeof asUserId === "string" ? asUserId : undefined,
            asDeviceId: typeof asDeviceId === "string" ? asDeviceId : undefined,
            seen: { ip: clientIp, userAgent: req.headers["user-agent"] ?? null },
            allowExpired: spec.allowExpired,
        });
        noteRequester(requester.userId); // for the request's log line
    }
    if (spec.auth === "token" && !requester)
        throw new MatrixError("M_MISSING_TOKEN", "Missing access token", 401);
    if (spec.op && requester)
        requireNotGuest(requester, spec.op);
    let cached = null;
    const body = () => (cached === null ? (cached = parseBody(req, spec.bodyDepth)) : cached);
    return {
        req,
        reply,
        s,
        requester,
        params: req.params,
        query: req.query,
        clientIp,
        bearerToken: token,
        body() {
            const b = body();
            if (b === undefined)
                throw new MatrixError("M_NOT_JSON", "Content not JSON.", 400);
            return b;
        },
        bodyOrEmpty: () => body() ?? {},
    };
}
/**
 * Registers `spec` at each full path; returns nothing. The handler's result is sent as JSON (200). Paths
 * that are aliases of one another (path-aliases.ts) make one route, which answers under each of them.
 */
export function route(app, s, fullPaths, spec) {
    const byUrl = new Map();
    for (const fullPath of fullPaths) {
        const { url, prefix } = canonicalRoute(fullPath);
        const prefixes = byUrl.get(url) ?? new Set();
        if (prefix !== undefined)
            prefixes.add(prefix);
        byUrl.set(url, prefixes);
    }
    for (const [url, prefixes] of byUrl) {
        app.route({
            method: spec.method,
            url,
            config: (prefixes.size > 0 ? { [ALIASES]: prefixes } : {}),
            handler: (req, reply) => s.inFlight.track(async () => {
                const call = await makeCall(s, spec, req, reply);
                const result = await spec.handler(call);
                // A handler that sent its own answer (a stream). Returned from an async handler, the reply (a
                // thenable) resolves to undefined once its stream ends — also when the client left mid-stream,
                // when `sent` is still false but the headers are out.
                if (reply.sent || reply.raw.headersSent || result === reply)
                    return reply;
                return reply.code(reply.statusCode || 200).send(result ?? {});
            }),
        });
    }
}
/** Client-Server API route, served under both brands and the given versions (default r0 and v3). */
export function clientRoute(app, s, spec) {
    const versions = spec.versions ?? ["r0", "v3"];
    route(app, s, BRANDS.flatMap((b) => versions.map((v) => `/${b}/client/${v}${spec.path}`)), spec);
}
/** Admin API route: /_impl/admin/<version> with /_synapse/admin/<version> as an alias. */
export function adminRoute(app, s, spec) {
    const v = spec.version ?? "v1";
    route(app, s, [`/_impl/admin/${v}${spec.path}`, `/_synapse/admin/${v}${spec.path}`], spec);
}
/** A route under both brands with a non-client prefix, e.g. ("key/v2", "/server"). */
export function brandedRoute(app, s, prefix, spec) {
    route(app, s, BRANDS.map((b) => `/${b}/${prefix}${spec.path}`), spec);
}
export function queryString(call, name, required = false) {
    const v = call.query[name];
    const value = Array.isArray(v) ? v[0] : v;
    if (value === undefined || value === "") {
        if (required)
            throw new MatrixError("M_MISSING_PARAM", `Missing ${name} query parameter`, 400);
        return undefined;
    }
    return value;
}
/** Every value of a repeated query parameter (`?via=a&via=b`), in order; empty values dropped. */
export function queryList(call, name) {
    const v = call.query[name];
    return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x) => x !== "");
}
/** An integer query parameter within range (by default Matrix's integer range: src/domain/numbers.ts). */
export function queryInt(call, name, opts = {}) {
    const raw = opts.required ? queryString(call, name, true) : queryString(call, name);
    return raw === undefined ? undefined : parseIntText(raw, name, opts);
}
export function queryBool(call, name) {
    const raw = queryString(call, name);
    if (raw === undefined)
        return undefined;
    if (raw !== "true" && raw !== "false")
        throw new MatrixError("M_INVALID_PARAM", `${name} must be true or false`, 400);
    return raw === "true";
}
