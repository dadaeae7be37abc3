// POST /_matrix/client/v1/appservice/{appserviceId}/ping (spec: Application Service API "Pinging"):
// a service asks the homeserver to call its POST /_matrix/app/v1/ping, to check that the two reach each
// other and that the hs_token is right. Only the service itself may ask (M_FORBIDDEN); without a URL it
// is M_URL_NOT_SET; a bad answer is 502 M_BAD_STATUS (with status and body), no answer 502
// M_CONNECTION_FAILED, too late 504 M_CONNECTION_TIMEOUT. A successful ping ends a backoff at once.
import { MatrixError } from "../errors.js";
import { appServiceById } from "../accounts/appservices.js";
import { APP_SERVICE_PREFIX, ServiceUnreachable } from "./client.js";
/** How much of a failing answer's body is quoted back. */
const MAX_QUOTED_BODY = 4096;
export async function pingAppService(s, r, appserviceId, body) {
    const as = r.appserviceId ? appServiceById(s.config, r.appserviceId) : undefined;
    if (!as)
        throw new MatrixError("M_FORBIDDEN", "Only application services can use the /appservice/ping endpoint", 403);
    if (as.id !== appserviceId)
        throw new MatrixError("M_FORBIDDEN", "Mismatching application service ID in path", 403);
    const txnId = body.transaction_id;
    if (txnId !== undefined && txnId !== null && typeof txnId !== "string")
        throw new MatrixError("M_BAD_JSON", "transaction_id must be a string", 400);
    if (as.url === null)
        throw new MatrixError("M_URL_NOT_SET", "Application service doesn't have a URL configured", 400);
    const started = performance.now();
    let answer;
    try {
        answer = await s.appservices.client.call(as, { method: "POST", path: `${APP_SERVICE_PREFIX}/ping`, body: typeof txnId === "string" ? { transaction_id: txnId } : {} });
    }
    catch (err) {
        if (!(err instanceof ServiceUnreachable))
            throw err;
        if (err.timedOut)
            throw new MatrixError("M_CONNECTION_TIMEOUT", "Connection to application service timed out", 504);
        throw new MatrixError("M_CONNECTION_FAILED", err.message, 502);
    }
    if (answer.status < 200 || answer.status >= 300)
        throw new MatrixError("M_BAD_STATUS", `Ping returned status ${answer.status}`, 502, { status: answer.status, body: answer.text.slice(0, MAX_QUOTED_BODY) });
    s.appservices.senders.retryNow(as.id);
    return { duration_ms: Math.round(performance.now() - started) };
}
