import { queryBool, queryList } from "../http.js";
import { federationRoute } from "./route.js";
import { makeMembership } from "../../domain/federation/membership/make-membership.js";
import { sendJoinAnswer, sendMembership } from "../../domain/federation/membership/send-membership.js";
import { receiveInvite } from "../../domain/federation/membership/receive-invite.js";
import { sendKnockAnswer } from "../../domain/federation/membership/knock.js";
import { MatrixError } from "../../domain/errors.js";
export function federationMembershipRoutes(app, s) {
    federationRoute(app, s, {
        method: "GET", path: "/make_join/:roomId/:userId", auth: "signed",
        // No `ver`: the spec's default, room version 1 only.
        handler: (c) => makeMembership(s, c.origin, c.params.roomId, c.params.userId, "join", queryList(c, "ver").length > 0 ? queryList(c, "ver") : undefined),
    });
    federationRoute(app, s, {
        method: "PUT", path: "/send_join/:roomId/:eventId", version: "v2", auth: "signed",
        handler: async (c) => {
            // omit_members=true: a partial-state join ("faster joins"), members left out of the answer.
            const omitMembers = queryBool(c, "omit_members") === true;
            const { room } = await sendMembership(s, c.origin, c.params.roomId, c.params.eventId, c.body(), "join");
            return sendJoinAnswer(s, room, c.params.eventId, omitMembers);
        },
    });
    federationRoute(app, s, {
        method: "GET", path: "/make_knock/:roomId/:userId", auth: "signed",
        handler: (c) => {
            const ver = queryList(c, "ver");
            if (ver.length === 0)
                throw new MatrixError("M_MISSING_PARAM", "Missing required query parameter: ver", 400);
            return makeMembership(s, c.origin, c.params.roomId, c.params.userId, "knock", ver);
        },
    });
    federationRoute(app, s, {
        method: "PUT", path: "/send_knock/:roomId/:eventId", auth: "signed",
        handler: async (c) => sendKnockAnswer(s, (await sendMembership(s, c.origin, c.params.roomId, c.params.eventId, c.body(), "knock")).room),
    });
    federationRoute(app, s, {
        method: "GET", path: "/make_leave/:roomId/:userId", auth: "signed",
        handler: (c) => makeMembership(s, c.origin, c.params.roomId, c.params.userId, "leave"),
    });
    federationRoute(app, s, {
        method: "PUT", path: "/send_leave/:roomId/:eventId", version: "v2", auth: "signed",
        handler: async (c) => (await sendMembership(s, c.origin, c.params.roomId, c.params.eventId, c.body(), "leave"), {}),
    });
    federationRoute(app, s, {
        method: "PUT", path: "/invite/:roomId/:eventId", version: "v2", auth: "signed",
        handler: (c) => receiveInvite(s, c.origin, c.params.roomId, c.params.eventId, c.body()),
    });
}
