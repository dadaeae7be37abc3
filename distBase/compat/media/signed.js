import { queryString, route } from "../http.js";
import { checkBrowserMediaUrl } from "../../domain/media/browser-urls.js";
import { checkMediaRef } from "../../domain/media/ids.js";
import { findMedia, findThumbnail } from "../../domain/media/download.js";
import { mediaHeaders } from "../../domain/media/serving.js";
import { sendFile } from "./send-file.js";
import { thumbnailParams } from "./params.js";
function signed(c) {
    return { user: queryString(c, "user"), exp: queryString(c, "exp"), sig: queryString(c, "sig") };
}
export function signedMediaRoutes(app, s) {
    route(app, s, ["/_impl/media/v1/download/:serverName/:mediaId"], {
        method: "GET", path: "", auth: "none",
        handler: async (c) => {
            const ref = checkMediaRef(c.params.serverName, c.params.mediaId);
            await checkBrowserMediaUrl(s, ref, signed(c));
            const m = await findMedia(s, { serverName: ref.origin, mediaId: ref.mediaId, access: "client" });
            return sendFile(c.req, c.reply, { path: m.path, length: m.length, headers: mediaHeaders(m.mediaType, m.uploadName) });
        },
    });
    route(app, s, ["/_impl/media/v1/thumbnail/:serverName/:mediaId"], {
        method: "GET", path: "", auth: "none",
        handler: async (c) => {
            const ref = checkMediaRef(c.params.serverName, c.params.mediaId);
            const t = thumbnailParams(c);
            await checkBrowserMediaUrl(s, ref, signed(c), { width: t.width, height: t.height, method: t.method });
            const th = await findThumbnail(s, { serverName: ref.origin, mediaId: ref.mediaId, access: "client" }, t);
            return sendFile(c.req, c.reply, { path: th.path, length: th.length, headers: mediaHeaders(th.mediaType, `thumbnail.${th.mediaType.split("/")[1]}`, { thumbnail: true }) });
        },
    });
}
