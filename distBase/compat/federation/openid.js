import { openIdUserInfo } from "../../domain/accounts/openid.js";
import { queryString } from "../http.js";
import { federationRoute } from "./route.js";
export function federationOpenIdRoutes(app, s) {
    federationRoute(app, s, {
        method: "GET", path: "/openid/userinfo", auth: "none",
        handler: (c) => openIdUserInfo(s, queryString(c, "access_token")),
    });
}
