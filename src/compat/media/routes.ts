// REST routes of the content repository (Client-Server API "Content repository"): the authenticated
// /_matrix/client/v1/media/* endpoints, uploads and /create under /_matrix/media/*, and the deprecated
// unauthenticated /_matrix/media/{r0,v3,v1}/* downloads, thumbnails, config and previews, as Synapse
// serves them, and the page about upload quotas. They live in their own Fastify context whose body parser hands upload bodies over as a
// stream, unread, leaving the JSON parsing of every other route alone.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { BRANDS, queryBool, queryInt, queryString, route, type AuthedCall, type Call, type RouteSpec } from "../http.ts";
import { createMedia, isValidMediaType, uploadMedia, uploadToCreated } from "../../domain/media/upload.ts";
import { MatrixError } from "../../domain/errors.ts";
import { findMedia, findThumbnail, type MediaAccess } from "../../domain/media/download.ts";
import { mediaHeaders } from "../../domain/media/serving.ts";
import { previewUrl } from "../../domain/media/preview/preview.ts";
import { mediaConfig } from "../../domain/media/config.ts";
import { sendFile } from "./send-file.ts";
import { thumbnailParams, uploadInput } from "./params.ts";
import { signedMediaRoutes } from "./signed.ts";
import { UPLOAD_LIMIT_PAGE } from "../../domain/media/upload-quota.ts";
import { htmlPage } from "../html-page.ts";

const LEGACY_VERSIONS = ["r0", "v3", "v1"];

/** A route under /{brand}/media/{version}/… for each version given. */
function mediaRoute<C extends Call>(app: FastifyInstance, s: Services, versions: string[], spec: RouteSpec<C>): void {
  route(app, s, BRANDS.flatMap((b) => versions.map((v) => `/${b}/media/${v}${spec.path}`)), spec);
}

/** A route under /{brand}/client/v1/media/… (authenticated media, spec v1.11). */
function authedMediaRoute<C extends Call>(app: FastifyInstance, s: Services, spec: RouteSpec<C>): void {
  route(app, s, BRANDS.map((b) => `/${b}/client/v1/media${spec.path}`), spec);
}

function timeoutMs(c: Call): number | undefined {
  return queryInt(c, "timeout_ms", { min: 0 });
}

async function download(c: Call, s: Services, access: MediaAccess) {
  const m = await findMedia(s, {
    serverName: c.params.serverName!, mediaId: c.params.mediaId!, access, timeoutMs: timeoutMs(c),
    allowRemote: access === "legacy" ? queryBool(c, "allow_remote") : undefined,
    bypassQuarantine: queryString(c, "admin_unsafely_bypass_quarantine") === "true" && c.requester?.isAdmin === true,
  });
  return sendFile(c.req, c.reply, { length: m.length, open: m.object.open, headers: mediaHeaders(m.mediaType, c.params.fileName ?? m.uploadName) });
}

async function thumbnail(c: Call, s: Services, access: MediaAccess) {
  const params = thumbnailParams(c);
  const t = await findThumbnail(s, { serverName: c.params.serverName!, mediaId: c.params.mediaId!, access, timeoutMs: timeoutMs(c) }, params);
  const name = `thumbnail.${t.mediaType.split("/")[1]}`;
  return sendFile(c.req, c.reply, { length: t.length, open: t.open, headers: mediaHeaders(t.mediaType, name, { thumbnail: true }) });
}

function preview(c: AuthedCall, s: Services) {
  return previewUrl(s, c.requester, queryString(c, "url", true), queryInt(c, "ts", { min: 0 }));
}

export function mediaRoutes(app: FastifyInstance, s: Services): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_req, payload, done) => done(null, payload));
    // Fastify refuses a malformed Content-Type with its own 415 before any parser runs: answer the
    // spec's 400 instead, before the body is touched.
    scope.addHook("onRequest", async (req) => {
      if (req.method !== "POST" && req.method !== "PUT") return;
      const type = req.headers["content-type"];
      if (type !== undefined && type.trim() !== "" && !isValidMediaType(type.trim()))
        throw new MatrixError("M_INVALID_PARAM", "Content-Type is not a valid media type", 400);
    });
    // An answer given before the body was read (413, 401 ...) closes the connection rather than
    // draining a body nobody wants.
    scope.addHook("onSend", async (req, reply, payload) => {
      if (!req.raw.complete) reply.header("connection", "close");
      return payload;
    });

    // Uploads.
    mediaRoute<AuthedCall>(scope, s, LEGACY_VERSIONS, { method: "POST", path: "/upload", auth: "token", op: "uploadMedia", handler: (c) => uploadMedia(s, c.requester, uploadInput(c)) });
    mediaRoute<AuthedCall>(scope, s, ["v3"], { method: "PUT", path: "/upload/:serverName/:mediaId", auth: "token", op: "uploadMedia", handler: (c) => uploadToCreated(s, c.requester, c.params.serverName!, c.params.mediaId!, uploadInput(c)) });
    mediaRoute<AuthedCall>(scope, s, ["v1"], { method: "POST", path: "/create", auth: "token", op: "uploadMedia", handler: (c) => createMedia(s, c.requester) });

    // Authenticated media (spec v1.11).
    authedMediaRoute<AuthedCall>(scope, s, { method: "GET", path: "/config", auth: "token", handler: () => mediaConfig(s) });
    authedMediaRoute<AuthedCall>(scope, s, { method: "GET", path: "/download/:serverName/:mediaId", auth: "token", handler: (c) => download(c, s, "client") });
    authedMediaRoute<AuthedCall>(scope, s, { method: "GET", path: "/download/:serverName/:mediaId/:fileName", auth: "token", handler: (c) => download(c, s, "client") });
    authedMediaRoute<AuthedCall>(scope, s, { method: "GET", path: "/thumbnail/:serverName/:mediaId", auth: "token", handler: (c) => thumbnail(c, s, "client") });
    authedMediaRoute<AuthedCall>(scope, s, { method: "GET", path: "/preview_url", auth: "token", op: "previewUrl", handler: (c) => preview(c, s) });

    // The deprecated unauthenticated endpoints.
    mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/download/:serverName/:mediaId", auth: "optional", handler: (c) => download(c, s, "legacy") });
    mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/download/:serverName/:mediaId/:fileName", auth: "optional", handler: (c) => download(c, s, "legacy") });
    mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/thumbnail/:serverName/:mediaId", auth: "optional", handler: (c) => thumbnail(c, s, "legacy") });
    mediaRoute<AuthedCall>(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/config", auth: "token", handler: () => mediaConfig(s) });
    mediaRoute<AuthedCall>(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/preview_url", auth: "token", op: "previewUrl", handler: (c) => preview(c, s) });

    signedMediaRoutes(scope, s);
  });
  // The page an upload quota's M_USER_LIMIT_EXCEEDED names when its limit has no info_uri of its own.
  route(app, s, [UPLOAD_LIMIT_PAGE], {
    method: "GET", path: "", auth: "none",
    handler: (c) => htmlPage(c.reply, 200, "Media upload limit exceeded", "<p>You have exceeded a media upload limit. Ask your server administrator for more information.</p>"),
  });
}
