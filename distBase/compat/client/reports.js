import { clientRoute } from "../http.js";
import { reportEvent, reportRoom } from "../../domain/reports/report.js";
export function reportRoutes(app, s) {
    clientRoute(app, s, {
        method: "POST", path: "/rooms/:roomId/report/:eventId", auth: "token", op: "reportEvent",
        handler: async (c) => (await reportEvent(s, c.requester, c.params.roomId, c.params.eventId, c.body()), {}),
    });
    clientRoute(app, s, {
        method: "POST", path: "/rooms/:roomId/report", auth: "token", op: "reportRoom",
        handler: async (c) => (await reportRoom(s, c.requester, c.params.roomId, c.body()), {}),
    });
}
