import { clientRoute, queryString } from "../http.js";
import { uploadKeys } from "../../domain/e2ee/upload-keys.js";
import { queryKeys } from "../../domain/e2ee/query-keys.js";
import { claimKeys } from "../../domain/e2ee/claim-keys.js";
import { keyChanges } from "../../domain/e2ee/key-changes.js";
import { uploadCrossSigningKeys } from "../../domain/e2ee/cross-signing.js";
import { uploadSignatures } from "../../domain/e2ee/signatures.js";
export function e2eKeyRoutes(app, s) {
    clientRoute(app, s, {
        method: "POST", path: "/keys/upload", auth: "token",
        handler: (c) => uploadKeys(s, c.requester, c.body()),
    });
    clientRoute(app, s, {
        method: "POST", path: "/keys/query", auth: "token",
        handler: (c) => queryKeys(s, c.requester, c.body()),
    });
    clientRoute(app, s, {
        method: "POST", path: "/keys/claim", auth: "token",
        handler: (c) => claimKeys(s, c.body()),
    });
    clientRoute(app, s, {
        method: "GET", path: "/keys/changes", auth: "token",
        handler: (c) => keyChanges(s, c.requester, queryString(c, "from", true), queryString(c, "to", true)),
    });
    clientRoute(app, s, {
        // Also under /unstable, where Synapse still serves it (older clients and test tools call it there).
        method: "POST", path: "/keys/device_signing/upload", auth: "token", op: "uploadCrossSigningKeys", versions: ["r0", "v3", "unstable"],
        handler: (c) => {
            const body = c.body();
            return uploadCrossSigningKeys(s, c.requester, body, { path: c.req.originalUrl, method: c.req.method, body, clientIp: c.clientIp });
        },
    });
    clientRoute(app, s, {
        method: "POST", path: "/keys/signatures/upload", auth: "token", op: "uploadSignatures", versions: ["r0", "v3", "unstable"],
        handler: (c) => uploadSignatures(s, c.requester, c.body()),
    });
}
