// REST route of the event reports admin API (Synapse admin API "Event Reports"):
// GET /_synapse/admin/v1/event_reports and the /_impl/admin/v1 twin; server admins only.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { adminRoute, queryInt, queryString, type AuthedCall } from "../http.ts";
import { listEventReports } from "../../domain/admin/event-reports.ts";

export function eventReportRoutes(app: FastifyInstance, s: Services): void {
  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/event_reports", auth: "token", op: "admin",
    handler: (c) =>
      listEventReports(s, c.requester, {
        from: queryInt(c, "from"),
        limit: queryInt(c, "limit"),
        dir: queryString(c, "dir"),
        roomId: queryString(c, "room_id"),
        userId: queryString(c, "user_id"),
      }),
  });
}
