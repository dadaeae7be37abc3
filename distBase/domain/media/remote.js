// The cache of remote media: a local download of mxc://other.server/id fetches the file from its origin
// through the RemoteMediaFetcher (federation), stores it under remote_content and records its metadata;
// later requests are served from the cache until media_retention drops it. Without a fetcher (federation
// not configured) the origin counts as unreachable: 502, as Synapse answers then.
// Spec: Client-Server API "Content repository" (remote media), Server-Server API "Content Repository".
import { rename } from "node:fs/promises";
import { MatrixError } from "../errors.js";
import { mxcUri } from "./ids.js";
import { unlinkQuietly } from "./files.js";
import { writeToTemp } from "./write-stream.js";
import { isValidMediaType, isValidUploadName } from "./upload.js";
const unreachable = () => new MatrixError("M_UNKNOWN", "Failed to fetch remote media", 502);
/** Fetches and caches `ref` (once, however many ask at the same time). */
export function fetchRemoteMedia(s, ref, timeoutMs) {
    return s.media.remoteFetches.run(mxcUri(ref), async () => {
        const fetcher = s.media.remoteFetcher;
        if (!fetcher)
            throw unreachable();
        const limit = s.config.max_upload_size;
        let remote;
        try {
            remote = await fetcher.download(ref.origin, ref.mediaId, { maxBytes: limit, timeoutMs });
        }
        catch (err) {
            if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND")
                throw err;
            if (err instanceof MatrixError && err.errcode === "M_TOO_LARGE")
                throw new MatrixError("M_TOO_LARGE", "Content is too large to serve", 502);
            s.log.warn({ err, mxc: mxcUri(ref) }, "remote media fetch failed");
            throw unreachable();
        }
        let tmp;
        try {
            tmp = await writeToTemp(s.media.files, remote.body, limit, () => new MatrixError("M_TOO_LARGE", "Content is too large to serve", 502));
        }
        catch (err) {
            // Only our own limit speaks for itself: a body cut or failed by the origin (whatever the transport
            // called it) is a failed fetch, never the client's fault. The temp file is gone already.
            if (err instanceof MatrixError && err.errcode === "M_TOO_LARGE")
                throw err;
            s.log.warn({ err, mxc: mxcUri(ref) }, "remote media download failed");
            throw unreachable();
        }
        const dest = s.media.files.contentPath(ref);
        try {
            await s.media.files.ensureDirFor(dest);
            await rename(tmp.path, dest);
            const now = s.clock.now();
            await s.media.store.insert({
                ...ref,
                // The origin is untrusted input: a malformed type or name is dropped, not stored.
                mediaType: remote.mediaType && isValidMediaType(remote.mediaType) ? remote.mediaType : null,
                uploadName: remote.uploadName && isValidUploadName(remote.uploadName) ? remote.uploadName : null, mediaLength: tmp.size, userId: null,
                createdTs: now, uploadedTs: now, unusedExpiresTs: null, authenticated: s.config.enable_authenticated_media,
            });
        }
        catch (err) {
            await unlinkQuietly(tmp.path);
            await unlinkQuietly(dest);
            throw err;
        }
    });
}
