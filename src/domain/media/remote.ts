// The cache of remote media: a local download of mxc://other.server/id fetches the file from its origin
// through the RemoteMediaFetcher (federation), stores it under remote_content (in the primary store, and
// in the storage providers with store_remote: storage.ts) and records its metadata;
// later requests are served from the cache until media_retention drops it. Without a fetcher (federation
// not configured) the origin counts as unreachable: 502, as Synapse answers then.
// Spec: Client-Server API "Content repository" (remote media), Server-Server API "Content Repository".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { mxcUri, type MediaRef } from "./ids.ts";
import { writeToTemp } from "./write-stream.ts";
import { isValidMediaType, isValidUploadName } from "./upload.ts";

const unreachable = () => new MatrixError("M_UNKNOWN", "Failed to fetch remote media", 502);

/** Fetches and caches `ref` (once, however many ask at the same time). */
export function fetchRemoteMedia(s: Services, ref: MediaRef, timeoutMs: number): Promise<void> {
  return s.media.remoteFetches.run(mxcUri(ref), async () => {
    const fetcher = s.media.remoteFetcher;
    if (!fetcher) throw unreachable();
    const limit = s.config.max_upload_size;
    let remote;
    try {
      remote = await fetcher.download(ref.origin, ref.mediaId, { maxBytes: limit, timeoutMs });
    } catch (err) {
      if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND") throw err;
      if (err instanceof MatrixError && err.errcode === "M_TOO_LARGE") throw new MatrixError("M_TOO_LARGE", "Content is too large to serve", 502);
      s.log.warn({ err, mxc: mxcUri(ref) }, "remote media fetch failed");
      throw unreachable();
    }
    let tmp;
    try {
      tmp = await writeToTemp(s.media.files, remote.body, limit, () => new MatrixError("M_TOO_LARGE", "Content is too large to serve", 502));
    } catch (err) {
      // Only our own limit speaks for itself: a body cut or failed by the origin (whatever the transport
      // called it) is a failed fetch, never the client's fault. The temp file is gone already.
      if (err instanceof MatrixError && err.errcode === "M_TOO_LARGE") throw err;
      s.log.warn({ err, mxc: mxcUri(ref) }, "remote media download failed");
      throw unreachable();
    }
    const mediaType = remote.mediaType && isValidMediaType(remote.mediaType) ? remote.mediaType : null;
    const { storage } = s.media;
    const held = await storage.adopt(s.media.files.contentKey(ref), tmp.path, { local: false, contentType: mediaType ?? undefined });
    try {
      const now = s.clock.now();
      await s.media.store.insert({
        ...ref,
        // The origin is untrusted input: a malformed type or name is dropped, not stored.
        mediaType,
        uploadName: remote.uploadName && isValidUploadName(remote.uploadName) ? remote.uploadName : null, mediaLength: tmp.size, userId: null,
        createdTs: now, uploadedTs: now, unusedExpiresTs: null, authenticated: s.config.enable_authenticated_media,
      });
    } catch (err) {
      if (storage.hasRemote) await storage.removeRemote(ref).catch((e) => s.log.warn({ err: e, mxc: mxcUri(ref) }, "removing unrecorded remote media failed"));
      await storage.removeLocal(ref);
      throw err;
    } finally {
      await held.release();
    }
  });
}
