// REST routes of delayed events (MSC4140), under /unstable/org.matrix.msc4140 as Synapse serves them:
// the user's list and one of them, and the actions by delay id (in the body, or in the path), which need
// no access token. Scheduling is the send and state routes with `org.matrix.msc4140.delay` (rooms.ts).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { MatrixError } from "../../domain/errors.ts";
import { clientRoute, queryList, queryString, type AuthedCall, type Call } from "../http.ts";
import { DELAYED_EVENT_ACTIONS, getDelayedEvent, listDelayedEvents, updateDelayedEvent, type Manager } from "../../domain/delayed-events/manage.ts";

const PREFIX = "/org.matrix.msc4140/delayed_events";
const versions = ["unstable"];

const manager = (c: Call): Manager => (c.requester ? { requester: c.requester } : { ip: c.clientIp });

export function delayedEventRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: PREFIX, auth: "token", versions,
    handler: (c) => listDelayedEvents(s, c.requester, { status: queryString(c, "status"), delayIds: queryList(c, "delay_id") }),
  });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: `${PREFIX}/:delayId`, auth: "token", versions, handler: (c) => getDelayedEvent(s, c.requester, c.params.delayId!) });
  clientRoute(app, s, {
    method: "POST", path: `${PREFIX}/:delayId`, auth: "optional", versions,
    handler: async (c) => {
      const action = c.body().action;
      if (action === undefined) throw new MatrixError("M_MISSING_PARAM", "'action' is missing", 400);
      await updateDelayedEvent(s, manager(c), c.params.delayId!, String(action));
      return {};
    },
  });
  for (const action of DELAYED_EVENT_ACTIONS) {
    clientRoute(app, s, {
      method: "POST", path: `${PREFIX}/:delayId/${action}`, auth: "optional", versions,
      handler: async (c) => (await updateDelayedEvent(s, manager(c), c.params.delayId!, action), {}),
    });
  }
}
