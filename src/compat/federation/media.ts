// Our media for other servers (signed): GET /_matrix/federation/v1/media/download/{mediaId} and
// /thumbnail/{mediaId}, answered with the spec's multipart/mixed body (src/domain/media/federation.ts),
// streamed from disk. timeout_ms waits for content still being uploaded, as on the client endpoints.
// Spec: Server-Server API "Content Repository".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { federationDownload, federationThumbnail, type MultipartMedia } from "../../domain/media/federation.ts";
import { queryInt, type Call } from "../http.ts";
import { thumbnailParams } from "../media/params.ts";
import { sendStreamed } from "../stream-reply.ts";
import { federationRoute } from "./route.ts";

function send(c: Call, m: MultipartMedia) {
  c.reply.code(200).header("content-type", m.contentType).header("content-length", String(m.contentLength));
  return sendStreamed(c.reply, m.body, "a federation media answer");
}

export function federationMediaRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "GET", path: "/media/download/:mediaId", auth: "signed",
    handler: async (c) => send(c, await federationDownload(s, c.params.mediaId!, { timeoutMs: queryInt(c, "timeout_ms", { min: 0 }) })),
  });
  federationRoute(app, s, {
    method: "GET", path: "/media/thumbnail/:mediaId", auth: "signed",
    handler: async (c) => {
      const params = thumbnailParams(c);
      return send(c, await federationThumbnail(s, c.params.mediaId!, params, { timeoutMs: queryInt(c, "timeout_ms", { min: 0 }) }));
    },
  });
}
