// Reading events and room state over federation (signed): GET /event/{eventId}, /event_auth/{roomId}/
// {eventId}, /state/{roomId}, /state_ids/{roomId}, and POST /get_missing_events/{roomId}.
// Spec: Server-Server API "Retrieving events", "Room State", "Authorization of events",
// "Backfilling and retrieving missing events".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { eventAuthForServer, eventForServer, stateForServer, stateIdsForServer } from "../../domain/federation/serve-events.ts";
import { missingEventsForServer, parseMissingEventsRequest } from "../../domain/federation/missing-events.ts";
import { queryString } from "../http.ts";
import { federationRoute } from "./route.ts";

export function federationEventRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "GET", path: "/event/:eventId", auth: "signed",
    handler: (c) => eventForServer(s, c.origin, c.params.eventId!),
  });
  federationRoute(app, s, {
    method: "GET", path: "/event_auth/:roomId/:eventId", auth: "signed",
    handler: (c) => eventAuthForServer(s, c.origin, c.params.roomId!, c.params.eventId!),
  });
  federationRoute(app, s, {
    method: "GET", path: "/state/:roomId", auth: "signed",
    handler: (c) => stateForServer(s, c.origin, c.params.roomId!, queryString(c, "event_id", true)),
  });
  federationRoute(app, s, {
    method: "GET", path: "/state_ids/:roomId", auth: "signed",
    handler: (c) => stateIdsForServer(s, c.origin, c.params.roomId!, queryString(c, "event_id", true)),
  });
  federationRoute(app, s, {
    method: "POST", path: "/get_missing_events/:roomId", auth: "signed",
    handler: (c) => missingEventsForServer(s, c.origin, c.params.roomId!, parseMissingEventsRequest(c.body())),
  });
}
