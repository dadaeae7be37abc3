// REST routes for rooms: creation, membership, sending, state, redaction and reads.
// Spec: Client-Server API "Rooms", "Room membership", "Events". Each route parses, calls one domain
// operation, and shapes the JSON.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryInt, queryList, queryString, type AuthedCall, type Call } from "../http.ts";
import { createRoom } from "../../domain/rooms/create-room.ts";
import { banUser, forgetRoom, inviteUser, joinRoom, kickUser, knockRoom, leaveRoom, unbanUser } from "../../domain/rooms/membership.ts";
import { redactEvent, sendMessage, sendStateEvent } from "../../domain/rooms/send.ts";
import { getContext, getJoinedMembers, getJoinedRooms, getMembers, getMessages, getRoomEvent, getRoomState, getRoomStateEvent, type MessagesRequest } from "../../domain/rooms/read.ts";
import { filterOptions, parseFilterParam } from "../../domain/filters/room-event-filter.ts";
import { upgradeRoom } from "../../domain/rooms/upgrade.ts";
import { scheduleDelayedEvent } from "../../domain/delayed-events/schedule.ts";
import { parseStickyDurationParam, STICKY_QUERY_PARAM } from "../../domain/sticky/sticky.ts";

const ok = () => ({});

/** `org.matrix.msc4140.delay` (MSC4140): the send is a delayed event, sent that many ms from now. */
const delayOf = (c: Call) => queryInt(c, "org.matrix.msc4140.delay", { min: 0 });

/**
 * `org.matrix.msc4354.sticky_duration_ms` (MSC4354, with experimental_features.msc4354_enabled; ignored
 * otherwise, as Synapse): the message is a sticky event. The first value counts, as in Synapse.
 */
const stickyOf = (c: Call) => {
  if (!c.s.config.experimental_features.msc4354_enabled) return undefined;
  const v = c.query[STICKY_QUERY_PARAM];
  return parseStickyDurationParam(Array.isArray(v) ? v[0] : v);
};

/** The servers a join may go through: `via`, else the deprecated `server_name` (as Synapse, MSC4156). */
function joinVia(c: Call): string[] {
  const via = queryList(c, "via");
  return via.length > 0 ? via : queryList(c, "server_name");
}

export function roomRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/createRoom", auth: "token", op: "createRoom", handler: (c) => createRoom(s, c.requester, c.body()) });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/join/:roomIdOrAlias", auth: "token",
    handler: (c) => joinRoom(s, c.requester, c.params.roomIdOrAlias!, c.bodyOrEmpty(), undefined, joinVia(c)),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/rooms/:roomId/join", auth: "token",
    handler: (c) => joinRoom(s, c.requester, c.params.roomId!, c.bodyOrEmpty(), undefined, joinVia(c)),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/knock/:roomIdOrAlias", auth: "token", op: "knockRoom",
    handler: (c) => knockRoom(s, c.requester, c.params.roomIdOrAlias!, c.bodyOrEmpty(), joinVia(c)),
  });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/rooms/:roomId/leave", auth: "token", handler: async (c) => (await leaveRoom(s, c.requester, c.params.roomId!, c.bodyOrEmpty()), {}) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/rooms/:roomId/forget", auth: "token", handler: async (c) => (await forgetRoom(s, c.requester, c.params.roomId!), {}) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/rooms/:roomId/invite", auth: "token", op: "inviteUser", handler: async (c) => (await inviteUser(s, c.requester, c.params.roomId!, c.body()), ok()) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/rooms/:roomId/kick", auth: "token", op: "kickUser", handler: async (c) => (await kickUser(s, c.requester, c.params.roomId!, c.body()), ok()) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/rooms/:roomId/ban", auth: "token", op: "banUser", handler: async (c) => (await banUser(s, c.requester, c.params.roomId!, c.body()), ok()) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/rooms/:roomId/unban", auth: "token", op: "unbanUser", handler: async (c) => (await unbanUser(s, c.requester, c.params.roomId!, c.body()), ok()) });

  // POST without a transaction id is what older clients send (as Synapse serves it): no idempotency.
  for (const [method, path] of [["PUT", "/rooms/:roomId/send/:eventType/:txnId"], ["POST", "/rooms/:roomId/send/:eventType"]] as const) {
    clientRoute<AuthedCall>(app, s, {
      method, path, auth: "token",
      handler: (c) => {
        const delay = delayOf(c);
        if (delay === undefined) {
          const content = c.body();
          return sendMessage(s, c.requester, c.params.roomId!, c.params.eventType!, c.params.txnId, content, { ts: queryString(c, "ts"), stickyDurationMs: stickyOf(c) });
        }
        // A retry may come without its body (Synapse answers it from its transaction cache).
        const content = c.bodyOrUndefined();
        return scheduleDelayedEvent(s, c.requester, { roomId: c.params.roomId!, type: c.params.eventType!, txnId: c.params.txnId, content, delay, stickyDurationMs: stickyOf(c) });
      },
    });
  }
  for (const path of ["/rooms/:roomId/state/:eventType", "/rooms/:roomId/state/:eventType/", "/rooms/:roomId/state/:eventType/:stateKey"]) {
    clientRoute<AuthedCall>(app, s, {
      method: "PUT", path, auth: "token",
      handler: (c) => {
        const delay = delayOf(c);
        if (delay === undefined) return sendStateEvent(s, c.requester, c.params.roomId!, c.params.eventType!, c.params.stateKey ?? "", c.body(), { ts: queryString(c, "ts") });
        return scheduleDelayedEvent(s, c.requester, { roomId: c.params.roomId!, type: c.params.eventType!, stateKey: c.params.stateKey ?? "", content: c.body(), delay });
      },
    });
    clientRoute<AuthedCall>(app, s, {
      method: "GET", path, auth: "token",
      handler: async (c) => {
        // `format` (spec v1.16): `content` (the default) or `event`, the whole event.
        const format = queryString(c, "format") ?? "content";
        if (format !== "content" && format !== "event") throw new MatrixError("M_INVALID_PARAM", "format must be content or event", 400);
        const event = await getRoomStateEvent(s, c.requester, c.params.roomId!, c.params.eventType!, c.params.stateKey ?? "");
        return format === "event" ? event : event.content;
      },
    });
  }
  for (const [method, path] of [["PUT", "/rooms/:roomId/redact/:eventId/:txnId"], ["POST", "/rooms/:roomId/redact/:eventId"]] as const) {
    clientRoute<AuthedCall>(app, s, {
      method, path, auth: "token",
      handler: (c) => redactEvent(s, c.requester, c.params.roomId!, c.params.eventId!, c.params.txnId, c.bodyOrEmpty()),
    });
  }

  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/rooms/:roomId/state", auth: "token", handler: (c) => getRoomState(s, c.requester, c.params.roomId!) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/rooms/:roomId/event/:eventId", auth: "token", handler: (c) => getRoomEvent(s, c.requester, c.params.roomId!, c.params.eventId!) });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/messages", auth: "token",
    handler: (c) => getMessages(s, c.requester, c.params.roomId!, messagesQuery(s, c)),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/context/:eventId", auth: "token",
    handler: (c) => getContext(s, c.requester, c.params.roomId!, c.params.eventId!, queryInt(c, "limit", { min: 0 }) ?? 10, parseFilterParam(queryString(c, "filter"), filterOptions(s))),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/rooms/:roomId/members", auth: "token",
    handler: async (c) => ({
      chunk: await getMembers(s, c.requester, c.params.roomId!, {
        at: queryString(c, "at"),
        membership: queryString(c, "membership"),
        notMembership: queryString(c, "not_membership"),
      }),
    }),
  });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/rooms/:roomId/joined_members", auth: "token", handler: (c) => getJoinedMembers(s, c.requester, c.params.roomId!) });
  clientRoute<AuthedCall>(app, s, { method: "POST", path: "/rooms/:roomId/upgrade", auth: "token", op: "upgradeRoom", handler: (c) => upgradeRoom(s, c.requester, c.params.roomId!, c.body()) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/joined_rooms", auth: "token", handler: (c) => getJoinedRooms(s, c.requester) });
}

/** The query of a /messages request (also the admin API's): from, to, dir, limit, filter. */
export function messagesQuery(s: Services, c: Call): MessagesRequest {
  // The spec requires dir; without it Synapse paginates forwards, and so do we.
  const dir = queryString(c, "dir") ?? "f";
  if (dir !== "b" && dir !== "f") throw new MatrixError("M_INVALID_PARAM", "dir must be b or f", 400);
  return { from: queryString(c, "from"), to: queryString(c, "to"), dir, limit: queryInt(c, "limit", { min: 0 }), filter: parseFilterParam(queryString(c, "filter"), filterOptions(s)) };
}
