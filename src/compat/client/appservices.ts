// REST routes application services and clients use around bridges: the ping (POST
// /_matrix/client/v1/appservice/{appserviceId}/ping), third-party lookups (/thirdparty/...) and the
// services' per-network room directories (/directory/list/appservice/{networkId}/{roomId}).
// Spec: Client-Server API "Third-party Lookups", "Application service room directory"; Application
// Service API "Pinging". Each route parses, calls one domain operation.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall, type Call } from "../http.ts";
import { pingAppService } from "../../domain/appservices/ping.ts";
import { thirdPartyLookup, thirdPartyProtocol, thirdPartyProtocols, type LookupFields, type ThirdPartyKind } from "../../domain/appservices/third-party.ts";
import { setNetworkListing } from "../../domain/directory/network-lists.ts";

/** The lookup's fields: every query parameter but the access token (as Synapse). */
function lookupFields(c: Call): LookupFields {
  const out: LookupFields = {};
  for (const [k, v] of Object.entries(c.query)) if (k !== "access_token" && v !== undefined) out[k] = v;
  return out;
}

export function appServiceRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/appservice/:appserviceId/ping", auth: "token", versions: ["v1"],
    handler: (c) => pingAppService(s, c.requester, c.params.appserviceId!, c.body()),
  });

  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/thirdparty/protocols", auth: "token", handler: () => thirdPartyProtocols(s) });
  clientRoute<AuthedCall>(app, s, { method: "GET", path: "/thirdparty/protocol/:protocol", auth: "token", handler: (c) => thirdPartyProtocol(s, c.params.protocol!) });
  for (const kind of ["user", "location"] as ThirdPartyKind[]) {
    clientRoute<AuthedCall>(app, s, { method: "GET", path: `/thirdparty/${kind}/:protocol`, auth: "token", handler: (c) => thirdPartyLookup(s, kind, c.params.protocol!, lookupFields(c)) });
    clientRoute<AuthedCall>(app, s, { method: "GET", path: `/thirdparty/${kind}`, auth: "token", handler: (c) => thirdPartyLookup(s, kind, undefined, lookupFields(c)) });
  }

  const list = "/directory/list/appservice/:networkId/:roomId";
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: list, auth: "token",
    handler: async (c) => (await setNetworkListing(s, c.requester, c.params.networkId!, c.params.roomId!, c.body().visibility), {}),
  });
  clientRoute<AuthedCall>(app, s, {
    method: "DELETE", path: list, auth: "token",
    handler: async (c) => (await setNetworkListing(s, c.requester, c.params.networkId!, c.params.roomId!, "private"), {}),
  });
}
