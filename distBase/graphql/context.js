import { MatrixError } from "../domain/errors.js";
import { authenticate } from "../domain/accounts/authenticate.js";
import { bearerToken, parseBearer } from "../shared/http-auth.js";
import { createLoaders } from "./loaders.js";
import { noteRequester } from "../observability/request-context.js";
function makeContext(s, token, clientIp, userAgent) {
    let auth;
    const ctx = {
        s,
        clientIp,
        bearerToken: token,
        requester() {
            if (token === undefined)
                return Promise.reject(new MatrixError("M_MISSING_TOKEN", "Missing access token", 401));
            auth ??= authenticate(s, token, { seen: { ip: clientIp, userAgent } }).then((r) => {
                noteRequester(r.userId); // for the request's log line (HTTP; on a WebSocket there is no request)
                return r;
            });
            return auth;
        },
        forgetRequester() {
            auth = undefined;
            ctx.loaders = createLoaders(ctx);
        },
        loaders: undefined,
    };
    ctx.loaders = createLoaders(ctx);
    return ctx;
}
/** Context of one HTTP request (GET or POST /graphql). */
export function httpContext(s, req) {
    return makeContext(s, bearerToken(req), req.ip, req.headers["user-agent"] ?? null);
}
/**
 * Context of one operation on a WebSocket. The token comes from the connection_init payload
 * (`authorization: "Bearer <token>"` or `access_token: "<token>"`), else from the upgrade request itself.
 * It is checked per operation, so a token revoked while the socket is open stops working at once.
 */
export function wsContext(s, payload, upgrade) {
    return makeContext(s, connectionToken(payload) ?? bearerToken(upgrade), upgrade.ip, upgrade.headers["user-agent"] ?? null);
}
/** Reads the access token from a connection_init payload (absent when none is given). */
export function connectionToken(payload) {
    const fromHeader = parseBearer(payload?.authorization ?? payload?.Authorization);
    if (fromHeader)
        return fromHeader;
    const t = payload?.access_token;
    return typeof t === "string" && t !== "" ? t : undefined;
}
