// One POST to a push gateway (spec: Push Gateway API, POST /_matrix/push/v1/notify) through undici and
// the outbound address policy: a 2xx answer with a JSON object is a delivery, and its `rejected` list the
// pushkeys to drop; anything else — an error status, a body that is not JSON or too large, a refused
// address, a connection failure, a timeout — is a failure the queue retries. Gateways are untrusted.
import type { Dispatcher } from "undici";
import { undici } from "../../net/undici.ts";
import { readCappedText } from "../../net/capped-body.ts";

export type GatewayResult = { ok: true; rejected: string[] } | { ok: false; reason: string };

const MAX_RESPONSE_BYTES = 64 * 1024;

export async function postToGateway(dispatcher: Dispatcher, url: string, body: unknown, signal: AbortSignal): Promise<GatewayResult> {
  try {
    const res = await undici().request(url, {
      method: "POST",
      dispatcher,
      signal,
      headers: { "content-type": "application/json", "user-agent": "Weft" },
      body: JSON.stringify(body),
    });
    const text = await readCappedText(res.body, MAX_RESPONSE_BYTES);
    if (text === undefined) return { ok: false, reason: "response too large" };
    if (res.statusCode < 200 || res.statusCode >= 300) return { ok: false, reason: `status ${res.statusCode}` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { ok: false, reason: "response is not JSON" };
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { ok: false, reason: "response is not a JSON object" };
    const rejected = (parsed as { rejected?: unknown }).rejected;
    return { ok: true, rejected: Array.isArray(rejected) ? rejected.filter((k): k is string => typeof k === "string") : [] };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}
