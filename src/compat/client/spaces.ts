// REST route of the space hierarchy (v1): GET /rooms/{roomId}/hierarchy. Spec: Client-Server API "Spaces".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryBool, queryInt, queryString, type AuthedCall } from "../http.ts";
import { getHierarchy } from "../../domain/spaces/hierarchy.ts";

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
}
