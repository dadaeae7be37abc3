import { clientRoute } from "../http.js";
import { parseTypingBody, setTyping } from "../../domain/typing/set-typing.js";
import { sendReceipt } from "../../domain/receipts/send-receipt.js";
import { parseReadMarkers, setReadMarkers } from "../../domain/receipts/read-markers.js";
import { checkUserId, getPresence, parsePresenceBody, setPresence } from "../../domain/presence/presence.js";
export function ephemeralRoutes(app, s) {
    clientRoute(app, s, {
        method: "PUT", path: "/rooms/:roomId/typing/:userId", auth: "token",
        handler: async (c) => (await setTyping(s, c.requester, c.params.roomId, c.params.userId, parseTypingBody(c.body())), {}),
    });
    clientRoute(app, s, {
        method: "POST", path: "/rooms/:roomId/receipt/:receiptType/:eventId", auth: "token",
        handler: async (c) => (await sendReceipt(s, c.requester, c.params.roomId, c.params.receiptType, c.params.eventId, c.bodyOrEmpty()), {}),
    });
    clientRoute(app, s, {
        method: "POST", path: "/rooms/:roomId/read_markers", auth: "token",
        handler: async (c) => (await setReadMarkers(s, c.requester, c.params.roomId, parseReadMarkers(c.body())), {}),
    });
    clientRoute(app, s, {
        method: "PUT", path: "/presence/:userId/status", auth: "token",
        // The user id is checked before the body is read (setPresence checks it too).
        handler: async (c) => (checkUserId(c.params.userId), await setPresence(s, c.requester, c.params.userId, parsePresenceBody(c.body())), {}),
    });
    clientRoute(app, s, {
        method: "GET", path: "/presence/:userId/status", auth: "token",
        handler: (c) => getPresence(s, c.requester, c.params.userId),
    });
}
