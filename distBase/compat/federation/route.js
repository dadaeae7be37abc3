import { authenticateRequest } from "../../domain/federation/request-auth.js";
import { FEDERATION_ENVELOPE_DEPTH, MAX_JSON_DEPTH } from "../../domain/json-limits.js";
import { BRANDS, route } from "../http.js";
/** Authenticates a federation request: the origin server, or a MatrixError (401/400 M_UNAUTHORIZED). */
export async function federationOrigin(call) {
    const { req, s } = call;
    const headers = req.raw.headersDistinct.authorization ?? [];
    // Only PUT and POST carry a signed body (as Synapse: a GET's body is ignored).
    const content = req.method === "PUT" || req.method === "POST" ? call.body() : undefined;
    return authenticateRequest({ serverName: s.config.server_name, keyRing: s.keyRing, now: s.clock.now() }, { method: req.method, uri: req.originalUrl, authorization: headers, content });
}
/** A Server-Server API route under both brands. */
export function federationRoute(app, s, spec) {
    const version = spec.version ?? "v1";
    route(app, s, BRANDS.map((b) => `/${b}/federation/${version}${spec.path}`), {
        method: spec.method,
        path: "",
        auth: "none",
        // A transaction or membership body wraps content a client could send: its envelope adds levels.
        bodyDepth: MAX_JSON_DEPTH + FEDERATION_ENVELOPE_DEPTH,
        handler: async (call) => {
            const origin = spec.auth === "signed" ? await federationOrigin(call) : "";
            // A server that signs a request to us is up: if we were backing off from it, stop (as Synapse does).
            if (origin)
                s.federationSender.remoteIsUp(origin);
            return spec.handler(Object.assign(call, { origin }));
        },
    });
}
