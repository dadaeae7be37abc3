// REST routes for end-to-end encryption keys: upload, query, claim, changes, cross-signing keys and
// signatures. Spec: Client-Server API "End-to-End Encryption", "Cross-signing". Guests may use the
// device key endpoints (as Synapse), not cross-signing.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryString, type AuthedCall } from "../http.ts";
import { uploadKeys } from "../../domain/e2ee/upload-keys.ts";
import { keysUploadFromBody } from "../../domain/e2ee/upload-body.ts";
import { keysQueryFromBody, queryKeys } from "../../domain/e2ee/query-keys.ts";
import { claimKeys, keysClaimFromBody } from "../../domain/e2ee/claim-keys.ts";
import { keyChanges } from "../../domain/e2ee/key-changes.ts";
import { crossSigningFromBody, uploadCrossSigningKeys } from "../../domain/e2ee/cross-signing.ts";
import { signaturesFromBody, uploadSignatures } from "../../domain/e2ee/signatures.ts";

export function e2eKeyRoutes(app: FastifyInstance, s: Services): void {
  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/keys/upload", auth: "token",
    handler: (c) => uploadKeys(s, c.requester, keysUploadFromBody(c.body())),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/keys/query", auth: "token",
    handler: (c) => queryKeys(s, c.requester, keysQueryFromBody(c.body())),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/keys/claim", auth: "token",
    handler: (c) => claimKeys(s, keysClaimFromBody(c.body())),
  });

  clientRoute<AuthedCall>(app, s, {
    method: "GET", path: "/keys/changes", auth: "token",
    handler: (c) => keyChanges(s, c.requester, queryString(c, "from", true), queryString(c, "to", true)),
  });

  clientRoute<AuthedCall>(app, s, {
    // Also under /unstable, where Synapse still serves it (older clients and test tools call it there).
    method: "POST", path: "/keys/device_signing/upload", auth: "token", op: "uploadCrossSigningKeys", versions: ["r0", "v3", "unstable"],
    handler: (c) => {
      const body = c.body();
      return uploadCrossSigningKeys(s, c.requester, crossSigningFromBody(body), { path: c.req.originalUrl, method: c.req.method, body, clientIp: c.clientIp });
    },
  });

  clientRoute<AuthedCall>(app, s, {
    method: "POST", path: "/keys/signatures/upload", auth: "token", op: "uploadSignatures", versions: ["r0", "v3", "unstable"],
    handler: (c) => uploadSignatures(s, c.requester, signaturesFromBody(c.body())),
  });
}
