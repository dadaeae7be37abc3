// REST routes of the user admin API (Synapse admin API "User Admin API"): list, details, create or
// modify, deactivate, reset password, admin status, whois (also the client API's /admin/whois), devices,
// joined rooms, memberships, login as a user. Served at /_impl/admin and /_synapse/admin; admins only.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { adminRoute, clientRoute, queryBool, queryInt, queryList, queryString, type AuthedCall } from "../http.ts";
import { isServerAdmin, listUsers, userDetails, userDevices, userJoinedRooms, userMemberships, whois } from "../../domain/admin/users.ts";
import { adminDeactivate, adminResetPassword, adminSuspend, loginAsUser, putUser, setServerAdmin } from "../../domain/admin/user-changes.ts";
import { allowCrossSigningReplacement } from "../../domain/admin/cross-signing-replacement.ts";

export function userAdminRoutes(app: FastifyInstance, s: Services): void {
  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/users", version: "v2", auth: "token", op: "admin",
    handler: (c) =>
      listUsers(s, c.requester, {
        from: queryInt(c, "from"),
        limit: queryInt(c, "limit"),
        userId: queryString(c, "user_id"),
        name: queryString(c, "name"),
        guests: queryBool(c, "guests"),
        deactivated: queryBool(c, "deactivated"),
        admins: queryBool(c, "admins"),
        notUserTypes: Array.isArray(c.query.not_user_type) ? c.query.not_user_type : c.query.not_user_type === undefined ? [] : [c.query.not_user_type],
        orderBy: queryString(c, "order_by"),
        dir: queryString(c, "dir"),
      }),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/users/:userId", version: "v2", auth: "token", op: "admin",
    handler: (c) => userDetails(s, c.requester, c.params.userId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/users/:userId", version: "v2", auth: "token", op: "admin",
    handler: async (c) => {
      const { created } = await putUser(s, c.requester, c.params.userId!, c.body());
      c.reply.code(created ? 201 : 200);
      return userDetails(s, c.requester, c.params.userId!);
    },
  });

  adminRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/suspend/:userId", auth: "token", op: "admin",
    handler: (c) => adminSuspend(s, c.requester, c.params.userId!, c.body()),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "POST", path: "/deactivate/:userId", auth: "token", op: "admin",
    handler: (c) => adminDeactivate(s, c.requester, c.params.userId!, c.bodyOrEmpty()),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "POST", path: "/reset_password/:userId", auth: "token", op: "admin",
    handler: async (c) => { await adminResetPassword(s, c.requester, c.params.userId!, c.body()); return {}; },
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/users/:userId/admin", auth: "token", op: "admin",
    handler: (c) => isServerAdmin(s, c.requester, c.params.userId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/users/:userId/admin", auth: "token", op: "admin",
    handler: async (c) => { await setServerAdmin(s, c.requester, c.params.userId!, c.body()); return {}; },
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/whois/:userId", auth: "token", op: "admin",
    handler: (c) => whois(s, c.requester, c.params.userId!),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/admin/whois/:userId", auth: "token",
    handler: (c) => whois(s, c.requester, c.params.userId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/users/:userId/devices", version: "v2", auth: "token", op: "admin",
    handler: (c) => userDevices(s, c.requester, c.params.userId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/users/:userId/joined_rooms", auth: "token", op: "admin",
    handler: (c) => userJoinedRooms(s, c.requester, c.params.userId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "GET", path: "/users/:userId/memberships", auth: "token", op: "admin",
    handler: (c) => userMemberships(s, c.requester, c.params.userId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "POST", path: "/users/:userId/_allow_cross_signing_replacement_without_uia", auth: "token", op: "admin",
    handler: (c) => allowCrossSigningReplacement(s, c.requester, c.params.userId!),
  });

  adminRoute<AuthedCall>(app, s, {
    method: "POST", path: "/users/:userId/login", auth: "token", op: "admin",
    handler: (c) => loginAsUser(s, c.requester, c.params.userId!, c.bodyOrEmpty()),
  });
}
