// Third-party networks (spec: Client-Server API "Third-party Lookups"; Application Service API
// "Third-party networks"): the protocols the application services declare, each described by the
// services themselves (GET /_matrix/app/v1/thirdparty/protocol/{protocol}, kept an hour as Synapse does)
// and merged — the first description, with every service's instances, each given an instance_id
// "<service id>|<network id>" (the third_party_instance_id of /publicRooms); and lookups of users and
// locations relayed to the services and their results merged. Query fields are free-form strings (none
// is required); services are untrusted, so malformed answers and results are dropped.
import { MatrixError } from "../errors.js";
import { servicesForProtocol } from "../accounts/appservices.js";
import { isPlainObject } from "../events/types.js";
import { APP_SERVICE_PREFIX, ServiceUnreachable } from "./client.js";
const PROTOCOL_CACHE_MS = 60 * 60 * 1000;
async function getJson(s, as, path, query) {
    try {
        const a = await s.appservices.client.call(as, { method: "GET", path, query });
        if (a.status >= 200 && a.status < 300)
            return a.json;
        if (a.status !== 404)
            s.log.warn({ appservice: as.id, path, status: a.status }, "third-party query answered an error");
    }
    catch (err) {
        if (!(err instanceof ServiceUnreachable))
            throw err;
        s.log.warn({ appservice: as.id, path, reason: err.message }, "third-party query failed");
    }
    return undefined;
}
/** One service's description of a protocol, instances stamped with their instance_id; undefined if unusable. */
async function describe(s, as, protocol) {
    const key = `${as.id}\u0000${protocol}`;
    const cached = s.appservices.protocols.get(key);
    if (cached && cached.expires > s.clock.now())
        return cached.info;
    const info = await getJson(s, as, `${APP_SERVICE_PREFIX}/thirdparty/protocol/${encodeURIComponent(protocol)}`);
    if (!isPlainObject(info) || !Array.isArray(info.instances)) {
        if (info !== undefined)
            s.log.warn({ appservice: as.id, protocol }, "application service described a protocol without an instances list");
        return undefined;
    }
    const instances = info.instances.filter(isPlainObject).map((i) => (typeof i.network_id === "string" ? { ...i, instance_id: `${as.id}|${i.network_id}` } : i));
    const out = { ...info, instances };
    s.appservices.protocols.set(key, { info: out, expires: s.clock.now() + PROTOCOL_CACHE_MS });
    return out;
}
/** GET /thirdparty/protocols (or one protocol): protocol → the merged description of every service's. */
export async function thirdPartyProtocols(s, only) {
    const asked = [];
    for (const as of s.config.app_services) {
        if (as.url === null)
            continue;
        for (const protocol of as.protocols)
            if (only === undefined || protocol === only)
                asked.push({ protocol, as });
    }
    const answers = await Promise.all(asked.map((q) => describe(s, q.as, q.protocol)));
    const out = {};
    asked.forEach(({ protocol }, i) => {
        const info = answers[i];
        if (!info)
            return;
        const merged = out[protocol];
        if (!merged)
            out[protocol] = { ...info, instances: [...info.instances] };
        else
            merged.instances.push(...info.instances);
    });
    return out;
}
/** GET /thirdparty/protocol/{protocol}: 404 when no service describes it. */
export async function thirdPartyProtocol(s, protocol) {
    const found = (await thirdPartyProtocols(s, protocol))[protocol];
    if (!found)
        throw new MatrixError("M_NOT_FOUND", "Unknown protocol", 404);
    return found;
}
/** A result the spec allows: a user (userid) or location (alias) with its protocol and fields. */
function validResult(kind, r) {
    const id = kind === "user" ? "userid" : "alias";
    return isPlainObject(r) && typeof r[id] === "string" && typeof r.protocol === "string" && isPlainObject(r.fields);
}
/**
 * GET /thirdparty/{kind}/{protocol} (with the client's fields), or the reverse lookups GET
 * /thirdparty/location?alias= and /thirdparty/user?userid= (no protocol: every service declaring one is
 * asked). 404 M_NOT_FOUND when nothing was found, as the spec says.
 */
export async function thirdPartyLookup(s, kind, protocol, fields) {
    if (protocol === undefined) {
        const required = kind === "user" ? "userid" : "alias";
        if (fields[required] === undefined)
            throw new MatrixError("M_MISSING_PARAM", `Missing ${required} query parameter`, 400);
    }
    const services = (protocol === undefined ? s.config.app_services.filter((as) => as.protocols.length > 0) : servicesForProtocol(s.config, protocol)).filter((as) => as.url !== null);
    const path = `${APP_SERVICE_PREFIX}/thirdparty/${kind}${protocol === undefined ? "" : `/${encodeURIComponent(protocol)}`}`;
    const answers = await Promise.all(services.map((as) => getJson(s, as, path, fields)));
    const out = [];
    answers.forEach((a, i) => {
        if (a === undefined)
            return;
        if (!Array.isArray(a)) {
            s.log.warn({ appservice: services[i].id, path }, "third-party lookup answered something other than a list");
            return;
        }
        for (const r of a)
            if (validResult(kind, r))
                out.push(r);
    });
    if (out.length === 0)
        throw new MatrixError("M_NOT_FOUND", kind === "user" ? "No third-party users found" : "No third-party locations found", 404);
    return out;
}
