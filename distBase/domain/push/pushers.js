// The pushers API (spec: Client-Server API "Pushers": GET /pushers, POST /pushers/set): validation of a
// pusher (pushkey at most 512 bytes, app_id at most 64 characters, `http` pushers with a `data.url` whose
// path is /_matrix/push/v1/notify and whose address outbound requests may reach; `email` pushers stored
// for the mail sender to come), creation and replacement (other users' pushers with the same app_id and
// pushkey removed unless `append`), deletion with `kind: null`. The gateway queues follow (gateway/pool.ts).
import { isIP } from "node:net";
import { MatrixError } from "../errors.js";
import { requireNotGuest } from "../accounts/guest-access.js";
import { isPlainObject } from "../events/types.js";
export const NOTIFY_PATH = "/_matrix/push/v1/notify";
const invalid = (msg) => new MatrixError("M_INVALID_PARAM", msg, 400);
export function pusherJson(p) {
    return {
        pushkey: p.pushkey,
        kind: p.kind,
        app_id: p.appId,
        app_display_name: p.appDisplayName,
        device_display_name: p.deviceDisplayName,
        ...(p.profileTag !== null ? { profile_tag: p.profileTag } : {}),
        lang: p.lang,
        data: p.data,
    };
}
export async function getPushers(s, r) {
    requireNotGuest(r, "pushers");
    return { pushers: (await s.push.pushers.store.ofUser(r.userId)).map(pusherJson) };
}
/** Checks an http pusher's URL: http(s), the notify path, and an address outbound requests may reach. */
export function checkGatewayUrl(s, raw) {
    if (typeof raw !== "string")
        throw invalid("data.url is required for http pushers");
    let url;
    try {
        url = new URL(raw);
    }
    catch {
        throw invalid("data.url is not a URL");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:")
        throw invalid("data.url must be an https URL");
    if (url.pathname !== NOTIFY_PATH)
        throw invalid(`data.url must have the path ${NOTIFY_PATH}`);
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    if (isIP(host) && !s.push.pushers.policy.allows(host))
        throw invalid("data.url points to an address this server may not reach (ip_range_blacklist)");
    return raw;
}
export async function setPusher(s, r, body) {
    requireNotGuest(r, "pushers");
    const missing = ["kind", "app_id", "pushkey"].filter((k) => !(k in body));
    if (missing.length)
        throw new MatrixError("M_MISSING_PARAM", `Missing parameters: ${missing.join(", ")}`, 400);
    const { pushkey, app_id: appId, kind } = body;
    if (typeof pushkey !== "string" || pushkey === "" || Buffer.byteLength(pushkey) > 512)
        throw invalid("pushkey must be a string of at most 512 bytes");
    if (typeof appId !== "string" || appId === "" || appId.length > 64)
        throw invalid("app_id must be a string of at most 64 characters");
    if (kind === null) {
        if (await s.push.pushers.store.delete(r.userId, appId, pushkey))
            s.push.pushers.removed(r.userId, appId, pushkey);
        return;
    }
    if (kind !== "http" && kind !== "email")
        throw invalid("kind must be http, email or null");
    const need = ["app_display_name", "device_display_name", "lang", "data"].filter((k) => !(k in body));
    if (need.length)
        throw new MatrixError("M_MISSING_PARAM", `Missing parameters: ${need.join(", ")}`, 400);
    for (const k of ["app_display_name", "device_display_name", "lang"])
        if (typeof body[k] !== "string")
            throw invalid(`${k} must be a string`);
    if (body.profile_tag !== undefined && typeof body.profile_tag !== "string")
        throw invalid("profile_tag must be a string");
    if (body.append !== undefined && typeof body.append !== "boolean")
        throw invalid("append must be a boolean");
    if (!isPlainObject(body.data))
        throw invalid("data must be an object");
    const data = body.data;
    if (kind === "http") {
        checkGatewayUrl(s, data.url);
        if (data.format !== undefined && typeof data.format !== "string")
            throw invalid("data.format must be a string");
    }
    const existing = await s.push.pushers.store.get(r.userId, appId, pushkey);
    const row = {
        userId: r.userId,
        appId,
        pushkey,
        kind,
        appDisplayName: body.app_display_name,
        deviceDisplayName: body.device_display_name,
        profileTag: body.profile_tag ?? null,
        lang: body.lang,
        data,
        deviceId: r.deviceId,
        pushkeyTs: s.clock.now(),
        // A new pusher starts at the current position: no notifications from before it existed.
        lastStreamOrdering: existing?.lastStreamOrdering ?? (await s.rooms.events.streamIds.current()),
        failingSince: existing?.failingSince ?? null,
    };
    const removed = await s.push.pushers.store.set(row, body.append === true);
    for (const p of removed)
        s.push.pushers.removed(p.userId, p.appId, p.pushkey);
    s.push.pushers.upserted(row);
}
