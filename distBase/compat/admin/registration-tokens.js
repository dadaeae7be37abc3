import { adminRoute, queryBool } from "../http.js";
import { createRegistrationToken, deleteRegistrationToken, getRegistrationToken, listRegistrationTokens, updateRegistrationToken, } from "../../domain/admin/registration-tokens.js";
export function registrationTokenRoutes(app, s) {
    adminRoute(app, s, {
        method: "GET", path: "/registration_tokens", auth: "token", op: "admin",
        handler: async (c) => ({ registration_tokens: await listRegistrationTokens(s, c.requester, queryBool(c, "valid")) }),
    });
    adminRoute(app, s, {
        method: "POST", path: "/registration_tokens/new", auth: "token", op: "admin",
        handler: (c) => createRegistrationToken(s, c.requester, c.bodyOrEmpty()),
    });
    adminRoute(app, s, {
        method: "GET", path: "/registration_tokens/:token", auth: "token", op: "admin",
        handler: (c) => getRegistrationToken(s, c.requester, c.params.token),
    });
    adminRoute(app, s, {
        method: "PUT", path: "/registration_tokens/:token", auth: "token", op: "admin",
        handler: (c) => updateRegistrationToken(s, c.requester, c.params.token, c.bodyOrEmpty()),
    });
    adminRoute(app, s, {
        method: "DELETE", path: "/registration_tokens/:token", auth: "token", op: "admin",
        handler: async (c) => { await deleteRegistrationToken(s, c.requester, c.params.token); return {}; },
    });
}
