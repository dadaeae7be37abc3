// Finding media to serve: local uploads (waiting up to timeout_ms for content still being uploaded),
// cached remote media (fetched from its origin on first use), the quarantine, and the rule that the
// unauthenticated legacy endpoints hide media stored while enable_authenticated_media was on.
// Spec: Client-Server API "Content repository" (downloads, thumbnails; v1.11 authenticated media).
import { stat } from "node:fs/promises";
import { MatrixError, notFound } from "../errors.js";
import { checkMediaRef, mxcUri } from "./ids.js";
import { fetchRemoteMedia } from "./remote.js";
import { thumbnailOf } from "./thumbnails.js";
/** Synapse's DEFAULT_MAX_TIMEOUT_MS and MAXIMUM_ALLOWED_MAX_TIMEOUT_MS. */
export const DEFAULT_TIMEOUT_MS = 20_000;
export const MAX_TIMEOUT_MS = 60_000;
function visible(s, row, req) {
    if (row.quarantinedBy !== null && !req.bypassQuarantine)
        return false;
    if (req.access === "legacy" && row.authenticated && s.config.enable_authenticated_media)
        return false;
    return true;
}
async function waitForUpload(s, ref, row, req) {
    const timeout = Math.min(Math.max(req.timeoutMs ?? DEFAULT_TIMEOUT_MS, 0), MAX_TIMEOUT_MS);
    // The wait is real time (performance.now), whatever clock stamps the rows.
    const deadline = performance.now() + timeout;
    let current = row;
    while (current && current.uploadedTs === null) {
        if (current.unusedExpiresTs !== null && current.unusedExpiresTs < s.clock.now())
            throw notFound("Media not found");
        const left = deadline - performance.now();
        if (left <= 0 || req.signal?.aborted || s.inFlight.draining)
            throw new MatrixError("M_NOT_YET_UPLOADED", "Content has not yet been uploaded", 504);
        await s.media.uploads.wait(mxcUri(ref), left, req.signal);
        current = await s.media.store.get(ref);
    }
    if (!current)
        throw notFound("Media not found");
    return current;
}
/** The media `req` names, ready to serve, or the spec's error (404, 504 M_NOT_YET_UPLOADED, 502). */
export async function findMedia(s, req) {
    const ref = checkMediaRef(req.serverName, req.mediaId);
    const local = ref.origin === s.config.server_name;
    if (!local && req.access === "federation")
        throw notFound("Not a local media item");
    let row = await s.media.store.get(ref);
    if (!row && !local) {
        const mayFetch = req.allowRemote !== false && !(req.access === "legacy" && s.config.enable_authenticated_media);
        if (!mayFetch)
            throw notFound("Media not found");
        await fetchRemoteMedia(s, ref, req.timeoutMs ?? DEFAULT_TIMEOUT_MS);
        row = await s.media.store.get(ref);
    }
    if (!row || !visible(s, row, req))
        throw notFound("Media not found");
    if (row.uploadedTs === null)
        row = await waitForUpload(s, ref, row, req);
    const path = s.media.files.contentPath(ref);
    let length;
    try {
        length = (await stat(path)).size;
    }
    catch {
        throw notFound("Media not found");
    }
    const now = s.clock.now();
    if (row.lastAccessTs === null || now - row.lastAccessTs > 60_000)
        await s.media.store.touch(ref, now);
    return { ref, path, mediaType: row.mediaType, uploadName: row.uploadName, length };
}
/** A thumbnail of the media `req` names. */
export async function findThumbnail(s, req, t) {
    const media = await findMedia(s, req);
    return thumbnailOf(s, media.ref, media.path, media.mediaType, t);
}
