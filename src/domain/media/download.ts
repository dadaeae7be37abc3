// Finding media to serve: local uploads (waiting up to timeout_ms for content still being uploaded),
// cached remote media (fetched from its origin on first use), the quarantine, and the rule that the
// unauthenticated legacy endpoints hide media stored while enable_authenticated_media was on.
// Spec: Client-Server API "Content repository" (downloads, thumbnails; v1.11 authenticated media).
import { MatrixError, notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import { checkMediaRef, mxcUri, type MediaRef } from "./ids.ts";
import type { MediaRow } from "../store/media.ts";
import { fetchRemoteMedia } from "./remote.ts";
import { thumbnailOf, type ThumbnailFile, type ThumbnailRequest } from "./thumbnails.ts";
import type { StoredObject } from "./backend.ts";

/** Synapse's DEFAULT_MAX_TIMEOUT_MS and MAXIMUM_ALLOWED_MAX_TIMEOUT_MS. */
export const DEFAULT_TIMEOUT_MS = 20_000;
export const MAX_TIMEOUT_MS = 60_000;

export type MediaAccess =
  /** The authenticated client endpoints (/_matrix/client/v1/media/...). */
  | "client"
  /** The deprecated unauthenticated /_matrix/media/v3/... endpoints. */
  | "legacy"
  /** A remote server asking for our media (federation media endpoints): local media only. */
  | "federation";

export interface MediaRequest {
  serverName: string;
  mediaId: string;
  access: MediaAccess;
  timeoutMs?: number;
  /** Legacy endpoints' allow_remote=false: answer 404 rather than fetch from the origin. */
  allowRemote?: boolean;
  /** A server admin's admin_unsafely_bypass_quarantine=true (Synapse). */
  bypassQuarantine?: boolean;
  signal?: AbortSignal;
}

export interface ServableMedia {
  ref: MediaRef;
  /** The stored bytes (in whichever store holds them: storage.ts). */
  object: StoredObject;
  mediaType: string | null;
  uploadName: string | null;
  length: number;
}

function visible(s: Services, row: MediaRow, req: MediaRequest): boolean {
  if (row.quarantinedBy !== null && !req.bypassQuarantine) return false;
  if (req.access === "legacy" && row.authenticated && s.config.enable_authenticated_media) return false;
  return true;
}

async function waitForUpload(s: Services, ref: MediaRef, row: MediaRow, req: MediaRequest): Promise<MediaRow> {
  const timeout = Math.min(Math.max(req.timeoutMs ?? DEFAULT_TIMEOUT_MS, 0), MAX_TIMEOUT_MS);
  // The wait is real time (performance.now), whatever clock stamps the rows.
  const deadline = performance.now() + timeout;
  let current: MediaRow | null = row;
  while (current && current.uploadedTs === null) {
    if (current.unusedExpiresTs !== null && current.unusedExpiresTs < s.clock.now()) throw notFound("Media not found");
    const left = deadline - performance.now();
    if (left <= 0 || req.signal?.aborted || s.inFlight.draining) throw new MatrixError("M_NOT_YET_UPLOADED", "Content has not yet been uploaded", 504);
    await s.media.uploads.wait(mxcUri(ref), left, req.signal);
    current = await s.media.store.get(ref);
  }
  if (!current) throw notFound("Media not found");
  return current;
}

/** The media `req` names, ready to serve, or the spec's error (404, 504 M_NOT_YET_UPLOADED, 502). */
export async function findMedia(s: Services, req: MediaRequest): Promise<ServableMedia> {
  const ref = checkMediaRef(req.serverName, req.mediaId);
  const local = ref.origin === s.config.server_name;
  if (!local && req.access === "federation") throw notFound("Not a local media item");
  let row = await s.media.store.get(ref);
  if (!row && !local) {
    const mayFetch = req.allowRemote !== false && !(req.access === "legacy" && s.config.enable_authenticated_media);
    if (!mayFetch) throw notFound("Media not found");
    await fetchRemoteMedia(s, ref, req.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    row = await s.media.store.get(ref);
  }
  if (!row || !visible(s, row, req)) throw notFound("Media not found");
  if (row.uploadedTs === null) row = await waitForUpload(s, ref, row, req);
  const object = await s.media.storage.find(s.media.files.contentKey(ref));
  if (!object) throw notFound("Media not found");
  const now = s.clock.now();
  if (row.lastAccessTs === null || now - row.lastAccessTs > 60_000) await s.media.store.touch(ref, now);
  return { ref, object, mediaType: row.mediaType, uploadName: row.uploadName, length: object.length };
}

/** A thumbnail of the media `req` names. */
export async function findThumbnail(s: Services, req: MediaRequest, t: ThumbnailRequest): Promise<ThumbnailFile> {
  const media = await findMedia(s, req);
  return thumbnailOf(s, media.ref, media.object, media.mediaType, t);
}
