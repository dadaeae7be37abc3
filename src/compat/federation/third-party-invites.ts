// Third-party invites over federation: PUT (or POST) /3pid/onbind (the identity server, unsigned) and PUT
// /exchange_third_party_invite/{roomId} (the invitee's server, signed). Thin: the rules are in
// src/domain/threepids/third-party-invite-exchange.ts. Spec: Server-Server API "Third-party invites".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { federationRoute } from "./route.ts";
import { exchangeThirdPartyInvite, onThirdPartyBind } from "../../domain/threepids/third-party-invite-exchange.ts";

export function federationThirdPartyInviteRoutes(app: FastifyInstance, s: Services): void {
  // The spec says PUT; identity servers (Sydent) send POST, which Synapse accepts too.
  for (const method of ["PUT", "POST"] as const)
    federationRoute(app, s, { method, path: "/3pid/onbind", auth: "none", handler: (c) => onThirdPartyBind(s, c.body()) });
  federationRoute(app, s, {
    method: "PUT", path: "/exchange_third_party_invite/:roomId", auth: "signed",
    handler: (c) => exchangeThirdPartyInvite(s, c.origin, c.params.roomId!, c.body()),
  });
}
