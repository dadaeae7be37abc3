import { clientRoute, queryBool, queryInt, queryString } from "../http.js";
import { sync } from "../../domain/sync/sync.js";
import { createFilter, getFilter, resolveSyncFilter } from "../../domain/filters/user-filters.js";
import { deleteTag, getAccountData, getTags, setAccountData, setTag } from "../../domain/account-data/account-data.js";
import { legacyEvents, legacyInitialSync, roomInitialSync } from "../../domain/sync/legacy.js";
/** Aborted when the client closes the connection before the answer (ends a long poll early). */
function clientGone(c) {
    const ac = new AbortController();
    const res = c.reply.raw;
    if (res.destroyed || !res.socket || res.socket.destroyed)
        ac.abort();
    // 'close' also follows every completed response: abort (and its DOMException) only when unanswered.
    else
        res.once("close", () => {
            if (!res.writableFinished)
                ac.abort();
        });
    return ac.signal;
}
export function syncRoutes(app, s) {
    // Long polls end at once when the server shuts down.
    app.addHook("preClose", async () => s.sync.shutdown());
    clientRoute(app, s, {
        method: "GET", path: "/sync", auth: "token",
        handler: async (c) => sync(s, c.requester, {
            since: queryString(c, "since"),
            timeoutMs: queryInt(c, "timeout", { min: 0 }) ?? 0,
            fullState: queryBool(c, "full_state") ?? false,
            filter: await resolveSyncFilter(s, c.requester, queryString(c, "filter")),
            setPresence: queryString(c, "set_presence"),
            // Built only when the request comes to wait.
            signal: () => clientGone(c),
        }),
    });
    clientRoute(app, s, { method: "POST", path: "/user/:userId/filter", auth: "token", handler: (c) => createFilter(s, c.requester, c.params.userId, c.body()) });
    clientRoute(app, s, { method: "GET", path: "/user/:userId/filter/:filterId", auth: "token", handler: (c) => getFilter(s, c.requester, c.params.userId, c.params.filterId) });
    clientRoute(app, s, {
        method: "PUT", path: "/user/:userId/account_data/:type", auth: "token",
        handler: async (c) => (await setAccountData(s, c.requester, c.params.userId, undefined, c.params.type, c.body()), {}),
    });
    clientRoute(app, s, { method: "GET", path: "/user/:userId/account_data/:type", auth: "token", handler: (c) => getAccountData(s, c.requester, c.params.userId, undefined, c.params.type) });
    clientRoute(app, s, {
        method: "PUT", path: "/user/:userId/rooms/:roomId/account_data/:type", auth: "token",
        handler: async (c) => (await setAccountData(s, c.requester, c.params.userId, c.params.roomId, c.params.type, c.body()), {}),
    });
    clientRoute(app, s, {
        method: "GET", path: "/user/:userId/rooms/:roomId/account_data/:type", auth: "token",
        handler: (c) => getAccountData(s, c.requester, c.params.userId, c.params.roomId, c.params.type),
    });
    clientRoute(app, s, { method: "GET", path: "/user/:userId/rooms/:roomId/tags", auth: "token", handler: (c) => getTags(s, c.requester, c.params.userId, c.params.roomId) });
    clientRoute(app, s, {
        method: "PUT", path: "/user/:userId/rooms/:roomId/tags/:tag", auth: "token",
        handler: async (c) => (await setTag(s, c.requester, c.params.userId, c.params.roomId, c.params.tag, c.body()), {}),
    });
    clientRoute(app, s, {
        method: "DELETE", path: "/user/:userId/rooms/:roomId/tags/:tag", auth: "token",
        handler: async (c) => (await deleteTag(s, c.requester, c.params.userId, c.params.roomId, c.params.tag), {}),
    });
    clientRoute(app, s, {
        method: "GET", path: "/initialSync", auth: "token",
        handler: (c) => legacyInitialSync(s, c.requester, { limit: queryInt(c, "limit", { min: 0 }), archived: queryBool(c, "archived") }),
    });
    clientRoute(app, s, {
        method: "GET", path: "/rooms/:roomId/initialSync", auth: "token",
        handler: (c) => roomInitialSync(s, c.requester, c.params.roomId, { limit: queryInt(c, "limit", { min: 0 }) }),
    });
    clientRoute(app, s, {
        method: "GET", path: "/events", auth: "token",
        handler: (c) => legacyEvents(s, c.requester, { from: queryString(c, "from"), timeoutMs: queryInt(c, "timeout", { min: 0 }), limit: queryInt(c, "limit", { min: 0 }), roomId: queryString(c, "room_id"), signal: clientGone(c) }),
    });
}
