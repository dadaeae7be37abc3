import { request } from "undici";
import { MatrixError, notFound } from "../domain/errors.js";
import { OutboundIpPolicy } from "../domain/net/ip-ranges.js";
import { outboundAgent } from "../domain/net/outbound-agent.js";
import { fedPath } from "./client.js";
import { FederationError } from "./errors.js";
import { dispositionFilename, multipartBoundary, readMediaMultipart } from "./multipart.js";
/** Room for the multipart framing and the JSON part beyond the file's own cap. */
const FRAMING_BYTES = 128 * 1024;
/** An error answer is read up to this much (to see its errcode). */
const MAX_ERROR_BODY = 64 * 1024;
const MAX_REDIRECTS = 5;
function header(h, name) {
    const v = h[name];
    return Array.isArray(v) ? v[0] : v;
}
async function readSmall(body) {
    const chunks = [];
    let size = 0;
    try {
        for await (const c of body) {
            size += c.length;
            if (size > MAX_ERROR_BODY)
                break;
            chunks.push(c);
        }
    }
    catch {
        // whatever arrived is enough to look for an errcode
    }
    finally {
        body.destroy();
    }
    try {
        return JSON.parse(Buffer.concat(chunks).toString("utf8"));
    }
    catch {
        return undefined;
    }
}
/** An answer saying the endpoint does not exist there (Synapse's is_unknown_endpoint). */
function isUnknownEndpoint(status, json) {
    const errcode = json?.errcode;
    return ((status === 404 || status === 405) && (errcode === undefined || errcode === "M_UNRECOGNIZED")) || (status === 400 && errcode === "M_UNRECOGNIZED");
}
export class FederationMediaFetcher {
    s;
    policy;
    agent;
    constructor(s) {
        this.s = s;
        this.policy = new OutboundIpPolicy({ blacklist: s.config.ip_range_blacklist, whitelist: s.config.ip_range_whitelist });
        s.onClose.push(() => this.agent?.close());
    }
    async download(origin, mediaId, opts) {
        const fed = this.s.federation;
        const limits = { maxBytes: opts.maxBytes + FRAMING_BYTES, timeoutMs: opts.timeoutMs, query: { timeout_ms: opts.timeoutMs } };
        const res = await this.call(() => fed.getStream(origin, fedPath `/_matrix/federation/v1/media/download/${mediaId}`, limits));
        if (res.status >= 200 && res.status < 300)
            return this.unpack(origin, res, opts);
        const json = await readSmall(res.body);
        if (!isUnknownEndpoint(res.status, json))
            throw this.failure(origin, res.status, json);
        // An origin from before authenticated media: its legacy endpoint, asked not to go further itself.
        const legacy = await this.call(() => fed.getStream(origin, fedPath `/_matrix/media/v3/download/${origin}/${mediaId}`, { ...limits, maxBytes: opts.maxBytes, query: { allow_remote: "false", timeout_ms: opts.timeoutMs } }));
        if (legacy.status >= 200 && legacy.status < 300)
            return this.plain(legacy);
        throw this.failure(origin, legacy.status, await readSmall(legacy.body));
    }
    /** A too-large answer is M_TOO_LARGE; anything else the request threw stays as it is (unreachable). */
    async call(fn) {
        try {
            return await fn();
        }
        catch (err) {
            if (err instanceof FederationError && err.kind === "too_large")
                throw new MatrixError("M_TOO_LARGE", "Remote media is too large", 502);
            throw err;
        }
    }
    failure(origin, status, json) {
        if (status === 404)
            return notFound("Remote media not found");
        return new FederationError("remote", origin, `status ${status}`, { status, body: json });
    }
    plain(res) {
        return { mediaType: header(res.headers, "content-type") ?? null, uploadName: dispositionFilename(header(res.headers, "content-disposition")), body: res.body };
    }
    async unpack(origin, res, opts) {
        const boundary = multipartBoundary(header(res.headers, "content-type"));
        if (!boundary) {
            res.body.destroy();
            throw new FederationError("invalid_response", origin, "the media answer is not multipart/mixed");
        }
        let parts;
        try {
            parts = await readMediaMultipart(res.body, boundary);
        }
        catch (err) {
            res.body.destroy();
            throw new FederationError("invalid_response", origin, err.message);
        }
        const location = parts.file.headers["location"];
        if (location !== undefined) {
            res.body.destroy();
            return this.followLocation(origin, location, opts);
        }
        const source = res.body;
        const file = parts.file.body;
        async function* fileBytes() {
            try {
                yield* file;
            }
            finally {
                source.destroy();
            }
        }
        return {
            mediaType: parts.file.headers["content-type"] ?? null,
            uploadName: dispositionFilename(parts.file.headers["content-disposition"]),
            body: fileBytes(),
        };
    }
    /** GETs the URL a multipart answer names, unsigned, every hop through the address policy. */
    async followLocation(origin, location, opts) {
        let url;
        try {
            url = new URL(location);
        }
        catch {
            throw new FederationError("invalid_response", origin, "the media answer names an invalid Location");
        }
        this.agent ??= outboundAgent(this.policy, { headersTimeoutMs: opts.timeoutMs, bodyTimeoutMs: 60_000 });
        for (let hop = 0;; hop++) {
            if (url.protocol !== "https:" && url.protocol !== "http:")
                throw new FederationError("invalid_response", origin, "the media Location is not http(s)");
            let res;
            try {
                res = await request(url, { method: "GET", dispatcher: this.agent, headers: { "user-agent": "Weft" } });
            }
            catch (err) {
                throw new FederationError("unreachable", origin, `fetching the media Location failed: ${err.message}`);
            }
            res.body.on("error", () => { });
            const next = header(res.headers, "location");
            if (res.statusCode >= 300 && res.statusCode < 400 && next !== undefined && hop < MAX_REDIRECTS) {
                res.body.destroy();
                url = new URL(next, url);
                continue;
            }
            if (res.statusCode === 404) {
                res.body.destroy();
                throw notFound("Remote media not found");
            }
            if (res.statusCode < 200 || res.statusCode >= 300) {
                res.body.destroy();
                throw new FederationError("remote", origin, `the media Location answered ${res.statusCode}`, { status: res.statusCode });
            }
            const declared = Number(header(res.headers, "content-length"));
            if (Number.isFinite(declared) && declared > opts.maxBytes) {
                res.body.destroy();
                throw new MatrixError("M_TOO_LARGE", "Remote media is too large", 502);
            }
            return { mediaType: header(res.headers, "content-type") ?? null, uploadName: dispositionFilename(header(res.headers, "content-disposition")), body: res.body };
        }
    }
}
