import { federationRoute } from "./route.js";
import { exchangeThirdPartyInvite, onThirdPartyBind } from "../../domain/threepids/third-party-invite-exchange.js";
export function federationThirdPartyInviteRoutes(app, s) {
    federationRoute(app, s, { method: "PUT", path: "/3pid/onbind", auth: "none", handler: (c) => onThirdPartyBind(s, c.body()) });
    federationRoute(app, s, {
        method: "PUT", path: "/exchange_third_party_invite/:roomId", auth: "signed",
        handler: (c) => exchangeThirdPartyInvite(s, c.origin, c.params.roomId, c.body()),
    });
}
