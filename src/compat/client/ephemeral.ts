// REST routes of the ephemeral room data and presence: typing notifications, receipts, read markers,
// presence status. Spec: Client-Server API "Typing Notifications", "Receipts", "Fully read markers",
// "Presence".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { parseTypingBody, setTyping } from "../../domain/typing/set-typing.ts";
import { sendReceipt } from "../../domain/receipts/send-receipt.ts";
import { parseReadMarkers, setReadMarkers } from "../../domain/receipts/read-markers.ts";
import { checkUserId, getPresence, parsePresenceBody, setPresence } from "../../domain/presence/presence.ts";

export function ephemeralRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/rooms/:roomId/typing/:userId", auth: "token",
    handler: async (c) => (await setTyping(s, c.requester, c.params.roomId!, c.params.userId!, parseTypingBody(c.body())), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/rooms/:roomId/receipt/:receiptType/:eventId", auth: "token",
    handler: async (c) => (await sendReceipt(s, c.requester, c.params.roomId!, c.params.receiptType!, c.params.eventId!, c.bodyOrEmpty()), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/rooms/:roomId/read_markers", auth: "token",
    handler: async (c) => (await setReadMarkers(s, c.requester, c.params.roomId!, parseReadMarkers(c.body())), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/presence/:userId/status", auth: "token",
    // The user id is checked before the body is read (setPresence checks it too).
    handler: async (c) => (checkUserId(c.params.userId!), await setPresence(s, c.requester, c.params.userId!, parsePresenceBody(c.body())), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/presence/:userId/status", auth: "token",
    handler: (c) => getPresence(s, c.requester, c.params.userId!),
  });
}
