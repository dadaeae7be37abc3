// The published room directory over federation: GET and POST /_matrix/federation/v1/publicRooms (signed),
// and the space hierarchy (GET /_matrix/federation/v1/hierarchy/{roomId}).
// Spec: Server-Server API "Published Room Directory", "Spaces".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { federationPublicRooms, publicRoomsBody } from "../../domain/directory/public-rooms.ts";
import { queryBool, queryInt, queryString } from "../http.ts";
import { federationHierarchy } from "../../domain/spaces/federation-hierarchy.ts";
import { federationRoute } from "./route.ts";

export function federationDirectoryRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "GET", path: "/publicRooms", auth: "signed",
    handler: (c) => federationPublicRooms(s, { limit: queryInt(c, "limit", { min: 0 }), since: queryString(c, "since") }),
  });
  federationRoute(app, s, { method: "POST", path: "/publicRooms", auth: "signed", handler: (c) => federationPublicRooms(s, publicRoomsBody(c.body())) });
  federationRoute(app, s, {
    method: "GET", path: "/hierarchy/:roomId", auth: "signed",
    handler: (c) => federationHierarchy(s, c.origin, c.params.roomId!, queryBool(c, "suggested_only") ?? false),
  });
}
