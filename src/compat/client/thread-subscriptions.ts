// REST routes of thread subscriptions (MSC4306), under /unstable/io.element.msc4306 as Synapse serves
// them, when experimental_features.msc4306_enabled is on.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { getThreadSubscription, subscribeToThread, unsubscribeFromThread } from "../../domain/threads/subscriptions.ts";

export function threadSubscriptionRoutes(app: FastifyInstance, s: Services): void {
  if (!s.config.experimental_features.msc4306_enabled) return;
  const path = "/io.element.msc4306/rooms/:roomId/thread/:threadRootId/subscription";
  const versions = ["unstable"];
  clientRoute<AuthedCall>(app, s, { method: "GET", path, auth: "token", versions, handler: (c) => getThreadSubscription(s, c.requester, c.params.roomId!, c.params.threadRootId!) });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path, auth: "token", versions,
    handler: async (c) => (await subscribeToThread(s, c.requester, c.params.roomId!, c.params.threadRootId!, c.body()), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "DELETE", path, auth: "token", versions,
    handler: async (c) => (await unsubscribeFromThread(s, c.requester, c.params.roomId!, c.params.threadRootId!), {}),
  });
}
