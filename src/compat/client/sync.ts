// REST routes of sync and per-user data: GET /sync, filters, account data (global and per room), room
// tags, and the legacy GET /initialSync, /rooms/{roomId}/initialSync and /events.
// Spec: Client-Server API "Syncing", "Filtering", "Client Config", "Room Tagging", "Legacy endpoints"; MSC3391's
// DELETE of account data (only with experimental_features.msc3391_enabled, as Synapse).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryBool, queryInt, queryString, type AuthedCall } from "../http.ts";
import { sync, type StateAfterKey } from "../../domain/sync/sync.ts";
import { createFilter, getFilter, resolveSyncFilter } from "../../domain/filters/user-filters.ts";
import { deleteAccountData, deleteTag, getAccountData, getTags, setAccountData, setTag } from "../../domain/account-data/account-data.ts";
import { legacyInitialSync, roomInitialSync } from "../../domain/sync/legacy-initial-sync.ts";
import { legacyEvents } from "../../domain/sync/legacy-events.ts";
import { Canceller, type Cancel } from "../../domain/sync/wait.ts";

/** Aborted when the client closes the connection before the answer (ends a long poll early). */
export function clientGone(c: AuthedCall): Cancel {
  const gone = new Canceller();
  const res = c.reply.raw;
  if (res.destroyed || !res.socket || res.socket.destroyed) gone.abort();
  // 'close' also follows every completed response: abort only when unanswered.
  else
    res.once("close", () => {
      if (!res.writableFinished) gone.abort();
    });
  return gone;
}

/** As Synapse answers: a section of `rooms` with no room in it is left out (clients test for its absence). */
/**
 * Which `state_after` the client asked for: spec v1.16's `use_state_after` (always served: the spec lets
 * servers answer it ahead of the version), else MSC4222's unstable parameter, with msc4222_enabled as
 * Synapse has it.
 */
function stateAfterKey(s: Services, c: AuthedCall): StateAfterKey | undefined {
  if (queryBool(c, "use_state_after")) return "state_after";
  if (s.config.experimental_features.msc4222_enabled && queryBool(c, "org.matrix.msc4222.use_state_after")) return "org.matrix.msc4222.state_after";
  return undefined;
}

function withoutEmptyRoomSections<T extends { rooms: Record<string, Record<string, unknown>> }>(res: T): T {
  for (const section of Object.keys(res.rooms)) if (Object.keys(res.rooms[section]!).length === 0) delete res.rooms[section];
  return res;
}

export function syncRoutes(app: FastifyInstance, s: Services): void {
  // Long polls end at once when the server shuts down.
  app.addHook("preClose", async () => s.sync.shutdown());

  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/sync", auth: "token",
    handler: async (c) =>
      withoutEmptyRoomSections(await sync(s, c.requester, {
        since: queryString(c, "since"),
        timeoutMs: queryInt(c, "timeout", { min: 0 }) ?? 0,
        fullState: queryBool(c, "full_state") ?? false,
        filter: await resolveSyncFilter(s, c.requester, queryString(c, "filter")),
        setPresence: queryString(c, "set_presence"),
        stateAfterKey: stateAfterKey(s, c),
        // Built only when the request comes to wait.
        cancel: () => clientGone(c),
      })),
  });

  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/user/:userId/filter", auth: "token", handler: (c) => createFilter(s, c.requester, c.params.userId!, c.body()) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/user/:userId/filter/:filterId", auth: "token", handler: (c) => getFilter(s, c.requester, c.params.userId!, c.params.filterId!) });

  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/user/:userId/account_data/:type", auth: "token",
    handler: async (c) => (await setAccountData(s, c.requester, c.params.userId!, undefined, c.params.type!, c.body()), {}),
  });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/user/:userId/account_data/:type", auth: "token", handler: (c) => getAccountData(s, c.requester, c.params.userId!, undefined, c.params.type!) });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/user/:userId/rooms/:roomId/account_data/:type", auth: "token",
    handler: async (c) => (await setAccountData(s, c.requester, c.params.userId!, c.params.roomId!, c.params.type!, c.body()), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/user/:userId/rooms/:roomId/account_data/:type", auth: "token",
    handler: (c) => getAccountData(s, c.requester, c.params.userId!, c.params.roomId!, c.params.type!),
  });

  if (s.config.experimental_features.msc3391_enabled) {
    const versions = ["unstable"];
    clientRoute<AuthedCall>(app, s, {
      method: "DELETE", path: "/org.matrix.msc3391/user/:userId/account_data/:type", auth: "token", versions,
      handler: async (c) => (await deleteAccountData(s, c.requester, c.params.userId!, undefined, c.params.type!), {}),
    });
    clientRoute<AuthedCall>(app, s, {
      method: "DELETE", path: "/org.matrix.msc3391/user/:userId/rooms/:roomId/account_data/:type", auth: "token", versions,
      handler: async (c) => (await deleteAccountData(s, c.requester, c.params.userId!, c.params.roomId!, c.params.type!), {}),
    });
  }

  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/user/:userId/rooms/:roomId/tags", auth: "token", handler: (c) => getTags(s, c.requester, c.params.userId!, c.params.roomId!) });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/user/:userId/rooms/:roomId/tags/:tag", auth: "token",
    handler: async (c) => (await setTag(s, c.requester, c.params.userId!, c.params.roomId!, c.params.tag!, c.body()), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "DELETE", path: "/user/:userId/rooms/:roomId/tags/:tag", auth: "token",
    handler: async (c) => (await deleteTag(s, c.requester, c.params.userId!, c.params.roomId!, c.params.tag!), {}),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/initialSync", auth: "token",
    handler: (c) => legacyInitialSync(s, c.requester, { limit: queryInt(c, "limit", { min: 0 }), archived: queryBool(c, "archived") }),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/initialSync", auth: "token",
    handler: (c) => roomInitialSync(s, c.requester, c.params.roomId!, { limit: queryInt(c, "limit", { min: 0 }) }),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/events", auth: "token",
    handler: (c) =>
      legacyEvents(s, c.requester, { from: queryString(c, "from"), timeoutMs: queryInt(c, "timeout", { min: 0 }), limit: queryInt(c, "limit", { min: 0 }), roomId: queryString(c, "room_id"), cancel: clientGone(c) }),
  });
}
