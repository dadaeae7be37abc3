// REST routes of the content repository (Client-Server API "Content repository"): the authenticated
// /_matrix/client/v1/media/* endpoints, uploads and /create under /_matrix/media/*, and the deprecated
// unauthenticated /_matrix/media/{r0,v3,v1}/* downloads, thumbnails, config and previews, as Synapse
// serves them. They live in their own Fastify context whose body parser hands upload bodies over as a
// stream, unread, leaving the JSON parsing of every other route alone.
import { Readable } from "node:stream";
import { BRANDS, queryBool, queryInt, queryString, route } from "../http.js";
import { createMedia, isValidMediaType, uploadMedia, uploadToCreated } from "../../domain/media/upload.js";
import { MatrixError } from "../../domain/errors.js";
import { findMedia, findThumbnail } from "../../domain/media/download.js";
import { mediaHeaders } from "../../domain/media/serving.js";
import { previewUrl } from "../../domain/media/preview/preview.js";
import { mediaConfig } from "../../domain/media/config.js";
import { sendFile } from "./send-file.js";
import { thumbnailParams } from "./params.js";
import { signedMediaRoutes } from "./signed.js";
const LEGACY_VERSIONS = ["r0", "v3", "v1"];
/** A route under /{brand}/media/{version}/… for each version given. */
function mediaRoute(app, s, versions, spec) {
    route(app, s, BRANDS.flatMap((b) => versions.map((v) => `/${b}/media/${v}${spec.path}`)), spec);
}
/** A route under /{brand}/client/v1/media/… (authenticated media, spec v1.11). */
function authedMediaRoute(app, s, spec) {
    route(app, s, BRANDS.map((b) => `/${b}/client/v1/media${spec.path}`), spec);
}
function uploadInput(c) {
    const body = c.req.body;
    return {
        body: body ?? Readable.from([]),
        contentLength: c.req.headers["content-length"],
        contentType: c.req.headers["content-type"],
        filename: queryString(c, "filename"),
    };
}
function timeoutMs(c) {
    return queryInt(c, "timeout_ms", { min: 0 });
}
async function download(c, s, access) {
    const m = await findMedia(s, {
        serverName: c.params.serverName, mediaId: c.params.mediaId, access, timeoutMs: timeoutMs(c),
        allowRemote: access === "legacy" ? queryBool(c, "allow_remote") : undefined,
        bypassQuarantine: queryString(c, "admin_unsafely_bypass_quarantine") === "true" && c.requester?.isAdmin === true,
    });
    return sendFile(c.req, c.reply, { path: m.path, length: m.length, headers: mediaHeaders(m.mediaType, c.params.fileName ?? m.uploadName) });
}
async function thumbnail(c, s, access) {
    const params = thumbnailParams(c);
    const t = await findThumbnail(s, { serverName: c.params.serverName, mediaId: c.params.mediaId, access, timeoutMs: timeoutMs(c) }, params);
    const name = `thumbnail.${t.mediaType.split("/")[1]}`;
    return sendFile(c.req, c.reply, { path: t.path, length: t.length, headers: mediaHeaders(t.mediaType, name, { thumbnail: true }) });
}
function preview(c, s) {
    return previewUrl(s, c.requester, queryString(c, "url", true), queryInt(c, "ts", { min: 0 }));
}
export function mediaRoutes(app, s) {
    app.register(async (scope) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser("*", (_req, payload, done) => done(null, payload));
        // Fastify refuses a malformed Content-Type with its own 415 before any parser runs: answer the
        // spec's 400 instead, before the body is touched.
        scope.addHook("onRequest", async (req) => {
            if (req.method !== "POST" && req.method !== "PUT")
                return;
            const type = req.headers["content-type"];
            if (type !== undefined && type.trim() !== "" && !isValidMediaType(type.trim()))
                throw new MatrixError("M_INVALID_PARAM", "Content-Type is not a valid media type", 400);
        });
        // An answer given before the body was read (413, 401 ...) closes the connection rather than
        // draining a body nobody wants.
        scope.addHook("onSend", async (req, reply, payload) => {
            if (!req.raw.complete)
                reply.header("connection", "close");
            return payload;
        });
        // Uploads.
        mediaRoute(scope, s, LEGACY_VERSIONS, { method: "POST", path: "/upload", auth: "token", op: "uploadMedia", handler: (c) => uploadMedia(s, c.requester, uploadInput(c)) });
        mediaRoute(scope, s, ["v3"], { method: "PUT", path: "/upload/:serverName/:mediaId", auth: "token", op: "uploadMedia", handler: (c) => uploadToCreated(s, c.requester, c.params.serverName, c.params.mediaId, uploadInput(c)) });
        mediaRoute(scope, s, ["v1"], { method: "POST", path: "/create", auth: "token", op: "uploadMedia", handler: (c) => createMedia(s, c.requester) });
        // Authenticated media (spec v1.11).
        authedMediaRoute(scope, s, { method: "GET", path: "/config", auth: "token", handler: () => mediaConfig(s) });
        authedMediaRoute(scope, s, { method: "GET", path: "/download/:serverName/:mediaId", auth: "token", handler: (c) => download(c, s, "client") });
        authedMediaRoute(scope, s, { method: "GET", path: "/download/:serverName/:mediaId/:fileName", auth: "token", handler: (c) => download(c, s, "client") });
        authedMediaRoute(scope, s, { method: "GET", path: "/thumbnail/:serverName/:mediaId", auth: "token", handler: (c) => thumbnail(c, s, "client") });
        authedMediaRoute(scope, s, { method: "GET", path: "/preview_url", auth: "token", op: "previewUrl", handler: (c) => preview(c, s) });
        // The deprecated unauthenticated endpoints.
        mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/download/:serverName/:mediaId", auth: "optional", handler: (c) => download(c, s, "legacy") });
        mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/download/:serverName/:mediaId/:fileName", auth: "optional", handler: (c) => download(c, s, "legacy") });
        mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/thumbnail/:serverName/:mediaId", auth: "optional", handler: (c) => thumbnail(c, s, "legacy") });
        mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/config", auth: "token", handler: () => mediaConfig(s) });
        mediaRoute(scope, s, LEGACY_VERSIONS, { method: "GET", path: "/preview_url", auth: "token", op: "previewUrl", handler: (c) => preview(c, s) });
        signedMediaRoutes(scope, s);
    });
}
