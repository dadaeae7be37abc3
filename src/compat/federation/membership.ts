// Membership over federation, this server as the resident one: make_join / send_join v2, make_knock /
// send_knock v1, make_leave / send_leave v2, and invites of our users (invite v2); send_join, send_leave
// and invite v1 too, for older servers (answers wrapped in `[200, {...}]`). Each route reads the
// request and calls one domain operation (src/domain/federation/membership/). Spec: Server-Server API
// "Joining Rooms", "Knocking Rooms", "Leaving Rooms (Rejecting Invites)", "Inviting to a room".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { queryBool, queryList } from "../http.ts";
import { federationRoute } from "./route.ts";
import { makeMembership } from "../../domain/federation/membership/make-membership.ts";
import { sendJoinAnswer, sendMembership } from "../../domain/federation/membership/send-membership.ts";
import { receiveInvite, receiveInviteV1 } from "../../domain/federation/membership/receive-invite.ts";
import { sendKnockAnswer } from "../../domain/federation/membership/knock.ts";
import { MatrixError } from "../../domain/errors.ts";

export function federationMembershipRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "GET", path: "/make_join/:roomId/:userId", auth: "signed",
    // No `ver`: the spec's default, room version 1 only.
    handler: (c) => makeMembership(s, c.origin, c.params.roomId!, c.params.userId!, "join", queryList(c, "ver").length > 0 ? queryList(c, "ver") : undefined),
  });
  federationRoute(app, s, {
    method: "PUT", path: "/send_join/:roomId/:eventId", version: "v2", auth: "signed",
    handler: async (c) => {
      // omit_members=true: a partial-state join ("faster joins"), members left out of the answer.
      const omitMembers = queryBool(c, "omit_members") === true;
      const { room } = await sendMembership(s, c.origin, c.params.roomId!, c.params.eventId!, c.body(), "join");
      return sendJoinAnswer(s, room, c.params.eventId!, omitMembers);
    },
  });
  federationRoute(app, s, {
    method: "GET", path: "/make_knock/:roomId/:userId", auth: "signed",
    handler: (c) => {
      const ver = queryList(c, "ver");
      if (ver.length === 0) throw new MatrixError("M_MISSING_PARAM", "Missing required query parameter: ver", 400);
      return makeMembership(s, c.origin, c.params.roomId!, c.params.userId!, "knock", ver);
    },
  });
  federationRoute(app, s, {
    method: "PUT", path: "/send_knock/:roomId/:eventId", auth: "signed",
    handler: async (c) => sendKnockAnswer(s, (await sendMembership(s, c.origin, c.params.roomId!, c.params.eventId!, c.body(), "knock")).room),
  });
  federationRoute(app, s, {
    method: "GET", path: "/make_leave/:roomId/:userId", auth: "signed",
    handler: (c) => makeMembership(s, c.origin, c.params.roomId!, c.params.userId!, "leave"),
  });
  federationRoute(app, s, {
    method: "PUT", path: "/send_leave/:roomId/:eventId", version: "v2", auth: "signed",
    handler: async (c) => (await sendMembership(s, c.origin, c.params.roomId!, c.params.eventId!, c.body(), "leave"), {}),
  });
  federationRoute(app, s, {
    method: "PUT", path: "/invite/:roomId/:eventId", version: "v2", auth: "signed",
    handler: (c) => receiveInvite(s, c.origin, c.params.roomId!, c.params.eventId!, c.body()),
  });
  // The deprecated v1 endpoints older servers still call (as Synapse serves them): the same operations,
  // their answers wrapped in v1's `[200, {...}]`.
  federationRoute(app, s, {
    method: "PUT", path: "/send_join/:roomId/:eventId", auth: "signed",
    handler: async (c) => {
      const { room } = await sendMembership(s, c.origin, c.params.roomId!, c.params.eventId!, c.body(), "join");
      return [200, await sendJoinAnswer(s, room, c.params.eventId!)];
    },
  });
  federationRoute(app, s, {
    method: "PUT", path: "/send_leave/:roomId/:eventId", auth: "signed",
    handler: async (c) => (await sendMembership(s, c.origin, c.params.roomId!, c.params.eventId!, c.body(), "leave"), [200, {}]),
  });
  federationRoute(app, s, {
    method: "PUT", path: "/invite/:roomId/:eventId", auth: "signed",
    handler: async (c) => [200, await receiveInviteV1(s, c.origin, c.params.roomId!, c.params.eventId!, c.body())],
  });
}
