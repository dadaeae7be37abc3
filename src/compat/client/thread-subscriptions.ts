// REST routes of thread subscriptions, served only with experimental_features.msc4306_enabled, as Synapse
// 1.163 serves them: MSC4306's GET/PUT/DELETE /unstable/io.element.msc4306/rooms/{roomId}/thread/
// {threadRootId}/subscription and MSC4308's GET /unstable/io.element.msc4308/thread_subscriptions (its
// sliding-sync extension is served with sliding sync: src/domain/sync/sliding-sync.ts).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryString, type AuthedCall } from "../http.ts";
import { checkThreadIds, getThreadSubscription, subscribeToThread, unsubscribeFromThread } from "../../domain/threads/subscriptions.ts";
import { paginateThreadSubscriptions } from "../../domain/threads/subscription-feed.ts";

export function threadSubscriptionRoutes(app: FastifyInstance, s: Services): void {
  if (!s.config.experimental_features.msc4306_enabled) return;
  const path = "/io.element.msc4306/rooms/:roomId/thread/:threadRootId/subscription";
  const versions = ["unstable"];
  const ids = (c: AuthedCall) => [c.params.roomId!, c.params.threadRootId!] as const;
  clientRoute<AuthedCall>(app, s, { method: "GET", path, auth: "token", versions, handler: (c) => getThreadSubscription(s, c.requester, ...ids(c)) });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path, auth: "token", versions,
    handler: async (c) => {
      checkThreadIds(...ids(c));
      return (await subscribeToThread(s, c.requester, ...ids(c), { automatic: c.body().automatic }), {});
    },
  });
  clientRoute<AuthedCall>(app, s, {
    method: "DELETE", path, auth: "token", versions,
    handler: async (c) => (await unsubscribeFromThread(s, c.requester, ...ids(c)), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/io.element.msc4308/thread_subscriptions", auth: "token", versions,
    handler: (c) => paginateThreadSubscriptions(s, c.requester, { dir: queryString(c, "dir"), from: queryString(c, "from"), to: queryString(c, "to"), limit: queryString(c, "limit") }),
  });
}
