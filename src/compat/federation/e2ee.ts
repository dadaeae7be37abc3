// Federation E2EE routes (signed): POST /user/keys/query, POST /user/keys/claim and
// GET /user/devices/{userId}, each a face over src/domain/federation/e2ee/serve-keys.ts.
// Spec: Server-Server API "End-to-End Encryption", "Device Management".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { federationClaimKeys, federationQueryKeys, federationUserDevices } from "../../domain/federation/e2ee/serve-keys.ts";
import { federationRoute } from "./route.ts";

export function federationE2eeRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "POST", path: "/user/keys/query", auth: "signed",
    handler: (c) => federationQueryKeys(s, c.body()),
  });
  federationRoute(app, s, {
    method: "POST", path: "/user/keys/claim", auth: "signed",
    handler: (c) => federationClaimKeys(s, c.body()),
  });
  federationRoute(app, s, {
    method: "GET", path: "/user/devices/:userId", auth: "signed",
    handler: (c) => federationUserDevices(s, c.params.userId!),
  });
}
