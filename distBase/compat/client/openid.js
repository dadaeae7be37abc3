import { clientRoute } from "../http.js";
import { requestOpenIdToken } from "../../domain/accounts/openid.js";
export function openIdRoutes(app, s) {
    clientRoute(app, s, {
        method: "POST", path: "/user/:userId/openid/request_token", auth: "token", op: "requestOpenIdToken",
        handler: (c) => {
            c.bodyOrEmpty(); // a body, if any, must be JSON (its content is ignored, as Synapse)
            return requestOpenIdToken(s, c.requester, c.params.userId);
        },
    });
}
