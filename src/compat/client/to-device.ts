// REST route for send-to-device messaging. Spec: Client-Server API "Send-to-Device messaging".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { sendToDevice, toDeviceFromBody } from "../../domain/e2ee/to-device.ts";

export function toDeviceRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/sendToDevice/:eventType/:txnId", auth: "token",
    handler: (c) => sendToDevice(s, c.requester, c.params.eventType!, c.params.txnId!, toDeviceFromBody(c.body())),
  });
}
