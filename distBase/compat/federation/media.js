import { federationDownload, federationThumbnail } from "../../domain/media/federation.js";
import { queryInt } from "../http.js";
import { thumbnailParams } from "../media/params.js";
import { sendStreamed } from "../stream-reply.js";
import { federationRoute } from "./route.js";
function send(c, m) {
    c.reply.code(200).header("content-type", m.contentType).header("content-length", String(m.contentLength));
    return sendStreamed(c.reply, m.body, "a federation media answer");
}
export function federationMediaRoutes(app, s) {
    federationRoute(app, s, {
        method: "GET", path: "/media/download/:mediaId", auth: "signed",
        handler: async (c) => send(c, await federationDownload(s, c.params.mediaId, { timeoutMs: queryInt(c, "timeout_ms", { min: 0 }) })),
    });
    federationRoute(app, s, {
        method: "GET", path: "/media/thumbnail/:mediaId", auth: "signed",
        handler: async (c) => {
            const params = thumbnailParams(c);
            return send(c, await federationThumbnail(s, c.params.mediaId, params, { timeoutMs: queryInt(c, "timeout_ms", { min: 0 }) }));
        },
    });
}
