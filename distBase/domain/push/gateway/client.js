// One POST to a push gateway (spec: Push Gateway API, POST /_matrix/push/v1/notify) through undici and
// the outbound address policy: a 2xx answer with a JSON object is a delivery, and its `rejected` list the
// pushkeys to drop; anything else — an error status, a body that is not JSON or too large, a refused
// address, a connection failure, a timeout — is a failure the queue retries. Gateways are untrusted.
import { request } from "undici";
import { readCappedText } from "../../net/capped-body.js";
const MAX_RESPONSE_BYTES = 64 * 1024;
export async function postToGateway(dispatcher, url, body, signal) {
    try {
        const res = await request(url, {
            method: "POST",
            dispatcher,
            signal,
            headers: { "content-type": "application/json", "user-agent": "Weft" },
            body: JSON.stringify(body),
        });
        const text = await readCappedText(res.body, MAX_RESPONSE_BYTES);
        if (text === undefined)
            return { ok: false, reason: "response too large" };
        if (res.statusCode < 200 || res.statusCode >= 300)
            return { ok: false, reason: `status ${res.statusCode}` };
        let parsed;
        try {
            parsed = JSON.parse(text);
        }
        catch {
            return { ok: false, reason: "response is not JSON" };
        }
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
            return { ok: false, reason: "response is not a JSON object" };
        const rejected = parsed.rejected;
        return { ok: true, rejected: Array.isArray(rejected) ? rejected.filter((k) => typeof k === "string") : [] };
    }
    catch (err) {
        return { ok: false, reason: err.message };
    }
}
