// The client of identity servers a user names (spec: Identity Service API v2): bind and unbind, hashed
// lookup, and storing a third-party invite. Identity servers are untrusted input: https only, addresses
// checked against ip_range_blacklist / ip_range_whitelist, bounded answers, every field validated.
import { request } from "undici";
import { MatrixError } from "../errors.js";
import { OutboundIpPolicy } from "../net/ip-ranges.js";
import { outboundAgent } from "../net/outbound-agent.js";
import { signRequest } from "../federation/request-auth.js";
import { isPlainObject } from "../events/types.js";
/** An identity server is named like a server: host[:port], no scheme (as Synapse takes `id_server`). */
const ID_SERVER = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]{1,255})(?::\d{1,5})?$/;
const MAX_ANSWER_BYTES = 64 * 1024;
const TIMEOUT_MS = 30_000;
export function checkIdServer(idServer) {
    if (!ID_SERVER.test(idServer))
        throw new MatrixError("M_INVALID_PARAM", "id_server must be a server name such as example.org or example.org:8090", 400);
    return idServer;
}
/** The one dispatcher for identity servers (built on first use, closed at shutdown). */
export class IdentityServerAgent {
    s;
    agent;
    constructor(s) {
        this.s = s;
    }
    get() {
        if (!this.agent) {
            const { config } = this.s();
            const policy = new OutboundIpPolicy({ blacklist: config.ip_range_blacklist, whitelist: config.ip_range_whitelist });
            const insecure = config.use_insecure_ssl_client_just_for_testing_do_not_use;
            this.agent = outboundAgent(policy, { headersTimeoutMs: TIMEOUT_MS, bodyTimeoutMs: TIMEOUT_MS, ...(insecure ? { rejectUnauthorized: false } : {}) });
        }
        return this.agent;
    }
    async close() {
        await this.agent?.close();
    }
}
export class IdentityServerError extends Error {
    idServer;
    status;
    body;
    constructor(idServer, status, body, message) {
        super(message);
        this.idServer = idServer;
        this.status = status;
        this.body = body;
    }
}
/** Was the connection refused by the outbound address policy (outbound-agent.ts)? */
function blocked(err) {
    for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth++)
        if (e.name === "BlockedAddressError" || e.code === "EBLOCKED")
            return true;
    return false;
}
/** One request to an identity server; the parsed JSON object of a 2xx answer, else IdentityServerError. */
export async function isRequest(s, idServer, req) {
    const url = `https://${idServer}/_matrix/identity/v2${req.path}`;
    const headers = { "user-agent": "Weft", accept: "application/json" };
    const content = req.body === undefined ? undefined : JSON.stringify(req.body);
    if (content !== undefined)
        headers["content-type"] = "application/json";
    if (req.accessToken)
        headers.authorization = `Bearer ${req.accessToken}`;
    if (req.signed) {
        const key = s.signingKeys[0];
        if (!key)
            throw new MatrixError("M_UNKNOWN", "This server has no signing key", 500);
        headers.authorization = signRequest({ method: req.method, uri: `/_matrix/identity/v2${req.path}`, origin: s.config.server_name, destination: idServer, content: req.body }, key);
    }
    let status;
    let text;
    try {
        const res = await request(url, { method: req.method, headers, body: content, dispatcher: s.identityServers.get(), signal: AbortSignal.timeout(TIMEOUT_MS) });
        status = res.statusCode;
        const chunks = [];
        let size = 0;
        for await (const chunk of res.body) {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
                res.body.destroy();
                throw new Error("answer too large");
            }
            chunks.push(chunk);
        }
        text = Buffer.concat(chunks).toString("utf8");
    }
    catch (err) {
        if (blocked(err))
            throw new MatrixError("M_SERVER_NOT_TRUSTED", `This server may not contact ${idServer} (ip_range_blacklist)`, 400);
        throw new IdentityServerError(idServer, 0, undefined, `The identity server ${idServer} could not be reached: ${err.message}`);
    }
    let body;
    try {
        body = text ? JSON.parse(text) : {};
    }
    catch {
        throw new IdentityServerError(idServer, status, undefined, `The identity server ${idServer} did not answer JSON`);
    }
    if (status < 200 || status >= 300)
        throw new IdentityServerError(idServer, status, body, `The identity server ${idServer} answered ${status}`);
    if (!isPlainObject(body))
        throw new IdentityServerError(idServer, status, body, `The identity server ${idServer} did not answer a JSON object`);
    return body;
}
/** Maps an identity server's refusal to the client's error: its own errcode when it gave one. */
export function toClientError(err) {
    if (err instanceof MatrixError)
        return err;
    if (err instanceof IdentityServerError) {
        const b = err.body;
        if (isPlainObject(b) && typeof b.errcode === "string" && /^M_[A-Z_]+$/.test(b.errcode) && err.status >= 400 && err.status < 500)
            return new MatrixError(b.errcode, typeof b.error === "string" ? b.error.slice(0, 500) : err.message, 400);
        return new MatrixError("M_UNKNOWN", err.message, 502);
    }
    throw err;
}
