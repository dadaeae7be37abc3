import { escapeHtml, htmlPage as page } from "../html-page.js";
import { MatrixError } from "../../domain/errors.js";
import { BRANDS, clientRoute, route } from "../http.js";
import { requestMsisdnToken } from "../../domain/threepids/msisdn.js";
import { requestEmailToken, submitEmailToken, SUBMIT_PATHS } from "../../domain/threepids/email-validation.js";
const firstValues = (c) => Object.fromEntries(Object.entries(c.query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
async function validate(c, s, purpose, params) {
    try {
        const { nextLink } = await submitEmailToken(s, purpose, params);
        if (nextLink)
            return c.reply.code(302).header("location", nextLink).header("cache-control", "no-store").send();
        return page(c.reply, 200, "Address validated", purpose === "password"
            ? "<p>Your e-mail address has been validated. Return to your application to choose your new password.</p>"
            : "<p>Your e-mail address has been validated. You may now return to your application.</p>");
    }
    catch (err) {
        if (!(err instanceof MatrixError))
            throw err;
        return page(c.reply, err.httpStatus, "Validation failed", `<p>${escapeHtml(err.message)}</p><p>Error code: <code>${err.errcode}</code></p>`);
    }
}
export function emailValidationRoutes(app, s) {
    const request = (path, purpose) => clientRoute(app, s, { method: "POST", path, auth: "none", handler: (c) => requestEmailToken(s, purpose, c.body(), c.clientIp) });
    request("/account/3pid/email/requestToken", "add");
    request("/register/email/requestToken", "register");
    request("/account/password/email/requestToken", "password");
    clientRoute(app, s, { method: "POST", path: "/register/msisdn/requestToken", auth: "none", handler: (c) => requestMsisdnToken(s, "register", c.body()) });
    clientRoute(app, s, { method: "POST", path: "/account/3pid/msisdn/requestToken", auth: "none", handler: (c) => requestMsisdnToken(s, "add", c.body()) });
    clientRoute(app, s, {
        method: "POST", path: "/account/password/msisdn/requestToken", auth: "none",
        handler: () => { throw new MatrixError("M_THREEPID_MEDIUM_NOT_SUPPORTED", "This server sends no SMS: phone numbers cannot be validated", 400); },
    });
    // The links in the mails. Registration and adding validate on GET (as Synapse); a password reset asks
    // for a click first, so that a mail scanner following links cannot validate it.
    const brandPaths = (p) => (p.startsWith("_matrix/") ? BRANDS.map((b) => `/${b}/${p.slice("_matrix/".length)}`) : [`/${p}`]);
    for (const purpose of ["register", "add"])
        route(app, s, brandPaths(SUBMIT_PATHS[purpose]), { method: "GET", path: "", auth: "none", handler: (c) => validate(c, s, purpose, firstValues(c)) });
    route(app, s, brandPaths(SUBMIT_PATHS.password), {
        method: "GET", path: "", auth: "none",
        handler: (c) => {
            const q = firstValues(c);
            const hidden = ["token", "client_secret", "sid"].map((k) => `<input type="hidden" name="${k}" value="${escapeHtml(q[k] ?? "")}">`).join("");
            return page(c.reply, 200, "Reset your password", `<p>Confirm that you asked to reset your password on ${escapeHtml(s.config.server_name)}.</p><form method="post">${hidden}<button type="submit">Confirm</button></form>`);
        },
    });
    route(app, s, brandPaths(SUBMIT_PATHS.password), {
        method: "POST", path: "", auth: "none",
        handler: (c) => {
            const form = new URLSearchParams(Buffer.isBuffer(c.req.body) ? c.req.body.toString("utf8") : typeof c.req.body === "string" ? c.req.body : "");
            return validate(c, s, "password", { token: form.get("token") ?? undefined, client_secret: form.get("client_secret") ?? undefined, sid: form.get("sid") ?? undefined });
        },
    });
}
