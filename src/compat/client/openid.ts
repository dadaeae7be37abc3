// POST /user/{userId}/openid/request_token: an OpenID token for a third party. Spec: Client-Server API "OpenID".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { requestOpenIdToken } from "../../domain/accounts/openid.ts";

export function openIdRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/user/:userId/openid/request_token", auth: "token", op: "requestOpenIdToken",
    handler: (c) => {
      c.bodyOrEmpty(); // a body, if any, must be JSON (its content is ignored, as Synapse)
      return requestOpenIdToken(s, c.requester, c.params.userId!);
    },
  });
}
