// REST routes of spaces and room summaries: GET /rooms/{roomId}/hierarchy (v1) and GET
// /room_summary/{roomIdOrAlias} (v1, and MSC3266's unstable im.nheko.summary paths Synapse still serves;
// the access token optional). Spec: Client-Server API "Spaces", "GET /room_summary/{roomIdOrAlias}".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryBool, queryInt, queryList, queryString, type AuthedCall, type Call } from "../http.ts";
import { getHierarchy } from "../../domain/spaces/hierarchy.ts";
import { getRoomSummary } from "../../domain/spaces/room-summary.ts";

export function spaceRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/hierarchy", auth: "token", versions: ["v1"],
    handler: (c) =>
      getHierarchy(s, c.requester, c.params.roomId!, {
        suggestedOnly: queryBool(c, "suggested_only"),
        maxDepth: queryInt(c, "max_depth"),
        limit: queryInt(c, "limit"),
        from: queryString(c, "from"),
      }),
  });
  const summary = (c: Call) => getRoomSummary(s, c.requester, c.params.roomIdOrAlias!, queryList(c, "via"));
  clientRoute(app, s, { method: "GET", path: "/room_summary/:roomIdOrAlias", auth: "optional", versions: ["v1"], handler: summary });
  for (const path of ["/summary/:roomIdOrAlias", "/rooms/:roomIdOrAlias/summary"])
    clientRoute(app, s, { method: "GET", path, auth: "optional", versions: ["unstable/im.nheko.summary"], handler: summary });
}
