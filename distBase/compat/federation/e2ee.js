import { federationClaimKeys, federationQueryKeys, federationUserDevices } from "../../domain/federation/e2ee/serve-keys.js";
import { federationRoute } from "./route.js";
export function federationE2eeRoutes(app, s) {
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
        handler: (c) => federationUserDevices(s, c.params.userId),
    });
}
