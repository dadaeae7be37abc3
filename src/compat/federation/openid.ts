// GET /_matrix/federation/v1/openid/userinfo?access_token=: a third party exchanges a user's OpenID token
// for the user id. Unsigned (the caller is no server). Spec: Server-Server API "OpenID".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { openIdUserInfo } from "../../domain/accounts/openid.ts";
import { queryString } from "../http.ts";
import { federationRoute } from "./route.ts";

export function federationOpenIdRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "GET", path: "/openid/userinfo", auth: "none",
    handler: (c) => openIdUserInfo(s, queryString(c, "access_token")),
  });
}
