import { eventAuthForServer, eventForServer, stateForServer, stateIdsForServer } from "../../domain/federation/serve-events.js";
import { missingEventsForServer, parseMissingEventsRequest } from "../../domain/federation/missing-events.js";
import { queryString } from "../http.js";
import { federationRoute } from "./route.js";
export function federationEventRoutes(app, s) {
    federationRoute(app, s, {
        method: "GET", path: "/event/:eventId", auth: "signed",
        handler: (c) => eventForServer(s, c.origin, c.params.eventId),
    });
    federationRoute(app, s, {
        method: "GET", path: "/event_auth/:roomId/:eventId", auth: "signed",
        handler: (c) => eventAuthForServer(s, c.origin, c.params.roomId, c.params.eventId),
    });
    federationRoute(app, s, {
        method: "GET", path: "/state/:roomId", auth: "signed",
        handler: (c) => stateForServer(s, c.origin, c.params.roomId, queryString(c, "event_id", true)),
    });
    federationRoute(app, s, {
        method: "GET", path: "/state_ids/:roomId", auth: "signed",
        handler: (c) => stateIdsForServer(s, c.origin, c.params.roomId, queryString(c, "event_id", true)),
    });
    federationRoute(app, s, {
        method: "POST", path: "/get_missing_events/:roomId", auth: "signed",
        handler: (c) => missingEventsForServer(s, c.origin, c.params.roomId, parseMissingEventsRequest(c.body())),
    });
}
