import { clientRoute } from "../http.js";
import { sendToDevice } from "../../domain/e2ee/to-device.js";
export function toDeviceRoutes(app, s) {
    clientRoute(app, s, {
        method: "PUT", path: "/sendToDevice/:eventType/:txnId", auth: "token",
        handler: (c) => sendToDevice(s, c.requester, c.params.eventType, c.params.txnId, c.body()),
    });
}
