import { clientRoute } from "../http.js";
import { pingAppService } from "../../domain/appservices/ping.js";
import { thirdPartyLookup, thirdPartyProtocol, thirdPartyProtocols } from "../../domain/appservices/third-party.js";
import { setNetworkListing } from "../../domain/directory/network-lists.js";
/** The lookup's fields: every query parameter but the access token (as Synapse). */
function lookupFields(c) {
    const out = {};
    for (const [k, v] of Object.entries(c.query))
        if (k !== "access_token" && v !== undefined)
            out[k] = v;
    return out;
}
export function appServiceRoutes(app, s) {
    clientRoute(app, s, {
        method: "POST", path: "/appservice/:appserviceId/ping", auth: "token", versions: ["v1"],
        handler: (c) => pingAppService(s, c.requester, c.params.appserviceId, c.body()),
    });
    clientRoute(app, s, { method: "GET", path: "/thirdparty/protocols", auth: "token", handler: () => thirdPartyProtocols(s) });
    clientRoute(app, s, { method: "GET", path: "/thirdparty/protocol/:protocol", auth: "token", handler: (c) => thirdPartyProtocol(s, c.params.protocol) });
    for (const kind of ["user", "location"]) {
        clientRoute(app, s, { method: "GET", path: `/thirdparty/${kind}/:protocol`, auth: "token", handler: (c) => thirdPartyLookup(s, kind, c.params.protocol, lookupFields(c)) });
        clientRoute(app, s, { method: "GET", path: `/thirdparty/${kind}`, auth: "token", handler: (c) => thirdPartyLookup(s, kind, undefined, lookupFields(c)) });
    }
    const list = "/directory/list/appservice/:networkId/:roomId";
    clientRoute(app, s, {
        method: "PUT", path: list, auth: "token",
        handler: async (c) => (await setNetworkListing(s, c.requester, c.params.networkId, c.params.roomId, c.body().visibility), {}),
    });
    clientRoute(app, s, {
        method: "DELETE", path: list, auth: "token",
        handler: async (c) => (await setNetworkListing(s, c.requester, c.params.networkId, c.params.roomId, "private"), {}),
    });
}
