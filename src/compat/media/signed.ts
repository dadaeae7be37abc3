// Routes of the signed browser media URLs the GraphQL face hands out (src/domain/media/browser-urls.ts):
// GET /_impl/media/v1/download/{serverName}/{mediaId} and /thumbnail/..., no access token; the signature
// stands for the viewer's authentication. Served with the same headers as the authenticated endpoints.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { queryString, route, type Call } from "../http.ts";
import { checkBrowserMediaUrl } from "../../domain/media/browser-urls.ts";
import { checkMediaRef } from "../../domain/media/ids.ts";
import { findMedia, findThumbnail } from "../../domain/media/download.ts";
import { mediaHeaders } from "../../domain/media/serving.ts";
import { sendFile } from "./send-file.ts";
import { thumbnailParams } from "./params.ts";

function signed(c: Call) {
  return { user: queryString(c, "user"), exp: queryString(c, "exp"), sig: queryString(c, "sig") };
}

export function signedMediaRoutes(app: FastifyInstance, s: Services): void {
  route(app, s, ["/_impl/media/v1/download/:serverName/:mediaId"], {
    method: "GET", path: "", auth: "none",
    handler: async (c) => {
      const ref = checkMediaRef(c.params.serverName!, c.params.mediaId!);
      await checkBrowserMediaUrl(s, ref, signed(c));
      const m = await findMedia(s, { serverName: ref.origin, mediaId: ref.mediaId, access: "client" });
      return sendFile(c.req, c.reply, { length: m.length, open: m.object.open, headers: mediaHeaders(m.mediaType, m.uploadName) });
    },
  });
  route(app, s, ["/_impl/media/v1/thumbnail/:serverName/:mediaId"], {
    method: "GET", path: "", auth: "none",
    handler: async (c) => {
      const ref = checkMediaRef(c.params.serverName!, c.params.mediaId!);
      const t = thumbnailParams(c);
      await checkBrowserMediaUrl(s, ref, signed(c), { width: t.width, height: t.height, method: t.method });
      const th = await findThumbnail(s, { serverName: ref.origin, mediaId: ref.mediaId, access: "client" }, t);
      return sendFile(c.req, c.reply, { length: th.length, open: th.open, headers: mediaHeaders(th.mediaType, `thumbnail.${th.mediaType.split("/")[1]}`, { thumbnail: true }) });
    },
  });
}
