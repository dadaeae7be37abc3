// Routes of the signed browser media URLs the GraphQL face hands out (src/domain/media/browser-urls.ts):
// GET /_impl/media/v1/download/{serverName}/{mediaId} and /thumbnail/..., no access token; the signature
// stands for the viewer's authentication. Served with the same headers as the authenticated endpoints.
// PUT /_impl/media/v1/upload/{serverName}/{mediaId} takes the content of an mxc URI reserved by the
// GraphQL createUpload mutation (src/domain/media/signed-upload.ts), the signature standing for the uploader.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { queryString, route, type Call } from "../http.ts";
import { checkBrowserMediaUrl } from "../../domain/media/browser-urls.ts";
import { checkMediaRef } from "../../domain/media/ids.ts";
import { findMedia, findThumbnail } from "../../domain/media/download.ts";
import { mediaHeaders } from "../../domain/media/serving.ts";
import { sendFile } from "./send-file.ts";
import { thumbnailParams, uploadInput } from "./params.ts";
import { uploadBySignedUrl } from "../../domain/media/signed-upload.ts";

function signed(c: Call) {
  return { user: queryString(c, "user"), exp: queryString(c, "exp"), sig: queryString(c, "sig") };
}

export function signedMediaRoutes(app: FastifyInstance, s: Services): void {
  route(app, s, ["/_impl/media/v1/upload/:serverName/:mediaId"], {
    method: "PUT", path: "", auth: "none",
    handler: (c) => uploadBySignedUrl(s, checkMediaRef(c.params.serverName!, c.params.mediaId!), signed(c), uploadInput(c)),
  });
  route(app, s, ["/_impl/media/v1/download/:serverName/:mediaId"], {
    method: "GET", path: "", auth: "none",
    handler: async (c) => {
      const ref = checkMediaRef(c.params.serverName!, c.params.mediaId!);
      await checkBrowserMediaUrl(s, ref, signed(c), "download");
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
