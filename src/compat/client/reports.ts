// REST routes for reporting content: an event (POST /rooms/{roomId}/report/{eventId}) and a room (POST
// /rooms/{roomId}/report, v1.13) and a user (POST /users/{userId}/report, v1.14). Spec: Client-Server API "Reporting content".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { reportEvent, reportRoom, reportUser } from "../../domain/reports/report.ts";

export function reportRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/rooms/:roomId/report/:eventId", auth: "token", op: "reportEvent",
    handler: async (c) => (await reportEvent(s, c.requester, c.params.roomId!, c.params.eventId!, c.body()), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/users/:userId/report", auth: "token", op: "reportUser",
    handler: async (c) => (await reportUser(s, c.requester, c.params.userId!, c.body()), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/rooms/:roomId/report", auth: "token", op: "reportRoom",
    handler: async (c) => (await reportRoom(s, c.requester, c.params.roomId!, c.body()), {}),
  });
}
