import { clientRoute } from "../http.js";
import { addThreePid, addThreePidLegacy, bindThreePid, deleteThreePid, listThreePids, unbindThreePid } from "../../domain/accounts/threepids.js";
export function threePidRoutes(app, s) {
    const op = "threePids";
    clientRoute(app, s, { method: "GET", path: "/account/3pid", auth: "token", op, handler: (c) => listThreePids(s, c.requester) });
    clientRoute(app, s, { method: "POST", path: "/account/3pid", auth: "token", op, handler: (c) => addThreePidLegacy(s, c.requester, c.body()) });
    clientRoute(app, s, {
        method: "POST", path: "/account/3pid/add", auth: "token", op,
        handler: (c) => addThreePid(s, c.requester, { path: c.req.originalUrl, method: c.req.method, body: c.body(), clientIp: c.clientIp }),
    });
    clientRoute(app, s, { method: "POST", path: "/account/3pid/bind", auth: "token", op, handler: (c) => bindThreePid(s, c.requester, c.body()) });
    clientRoute(app, s, { method: "POST", path: "/account/3pid/unbind", auth: "token", op, handler: (c) => unbindThreePid(s, c.requester, c.body()) });
    clientRoute(app, s, { method: "POST", path: "/account/3pid/delete", auth: "token", op, handler: (c) => deleteThreePid(s, c.requester, c.body()) });
}
