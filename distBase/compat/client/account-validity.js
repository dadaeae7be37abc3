import { adminRoute, clientRoute, queryString, route } from "../http.js";
import { adminSetAccountValidity, renewAccount, sendRenewalMail } from "../../domain/accounts/account-validity.js";
const VERSIONS = ["r0", "v1", "v3", "unstable"];
export function accountValidityRoutes(app, s) {
    const renew = async (c) => {
        const page = await renewAccount(s, queryString(c, "token"));
        return c.reply.code(page.status).type("text/html; charset=utf-8").send(page.html);
    };
    clientRoute(app, s, { method: "GET", path: "/account_validity/renew", auth: "none", versions: VERSIONS, handler: renew });
    route(app, s, ["/_synapse/client/account_validity/renew"], { method: "GET", path: "", auth: "none", handler: renew });
    clientRoute(app, s, {
        method: "POST", path: "/account_validity/send_mail", auth: "token", allowExpired: true, versions: VERSIONS,
        handler: async (c) => { await sendRenewalMail(s, c.requester); return {}; },
    });
    adminRoute(app, s, {
        method: "POST", path: "/account_validity/validity", auth: "token", op: "admin",
        handler: (c) => adminSetAccountValidity(s, c.requester, c.body()),
    });
}
