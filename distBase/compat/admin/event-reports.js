import { adminRoute, queryInt, queryString } from "../http.js";
import { listEventReports } from "../../domain/admin/event-reports.js";
export function eventReportRoutes(app, s) {
    adminRoute(app, s, {
        method: "GET", path: "/event_reports", auth: "token", op: "admin",
        handler: (c) => listEventReports(s, c.requester, {
            from: queryInt(c, "from"),
            limit: queryInt(c, "limit"),
            dir: queryString(c, "dir"),
            roomId: queryString(c, "room_id"),
            userId: queryString(c, "user_id"),
        }),
    });
}
