// Uploading content: POST /_matrix/media/v3/upload (a new mxc URI) and PUT /_matrix/media/v3/upload/
// {serverName}/{mediaId} (content for an mxc URI reserved by POST /media/v1/create). The body streams to
// a temporary file (max_upload_size enforced before and while reading), reaches its store (a rename on
// local disk, a streamed upload to a bucket: storage.ts), and only then gets its row; thumbnails are
// pre-generated after, and their failure never fails the upload.
// Spec: Client-Server API "Content repository", uploads.
import { requireNotGuest } from "../accounts/guest-access.ts";
import type { Readable } from "node:stream";
import { MatrixError, forbidden, notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { checkMediaRef, mxcUri, newMediaId, type MediaRef } from "./ids.ts";
import { unlinkQuietly } from "./files.ts";
import type { HeldFile } from "./storage.ts";
import { tooLarge, writeToTemp } from "./write-stream.ts";
import { pregenerateThumbnails } from "./thumbnails.ts";
import { requireNotSuspended } from "../accounts/moderation.ts";
import { checkUploadQuota } from "./upload-quota.ts";

export interface UploadInput {
  body: Readable | AsyncIterable<Uint8Array>;
  /** The Content-Length header, if sent (chunked uploads have none). */
  contentLength: string | undefined;
  contentType: string | undefined;
  filename: string | undefined;
}

interface UploadMeta {
  mediaType: string;
  uploadName: string | null;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|"[^"\\\\\\x00-\\x1f]*"))*[ \\t]*$`);
const MAX_FILENAME = 1024;

export function isValidMediaType(t: string): boolean {
  return t.length <= 255 && MEDIA_TYPE.test(t);
}

export function isValidUploadName(name: string): boolean {
  return name.length <= MAX_FILENAME && !/[\x00-\x1f\x7f]/.test(name) && !name.includes("\uFFFD");
}

/** Checks the headers and the size announced, before a byte of the body is read. */
export function checkUpload(s: Services, input: UploadInput): UploadMeta {
  if (input.contentLength !== undefined) {
    if (!/^\d+$/.test(input.contentLength)) throw new MatrixError("M_INVALID_PARAM", "Content-Length value is invalid", 400);
    if (Number(input.contentLength) > s.config.max_upload_size) throw tooLarge(s.config.max_upload_size);
  }
  const mediaType = input.contentType?.trim() || "application/octet-stream";
  if (!isValidMediaType(mediaType)) throw new MatrixError("M_INVALID_PARAM", "Content-Type is not a valid media type", 400);
  const name = input.filename || null;
  if (name !== null && !isValidUploadName(name))
    throw new MatrixError("M_INVALID_PARAM", "Invalid filename parameter", 400);
  return { mediaType, uploadName: name };
}

/**
 * Writes the body to its final place (the media stores, storage.ts) and returns its size and a local file
 * of it for thumbnails; the caller writes the row (or removes what was stored). The uploader's quotas are
 * checked on the size announced, then on the size received, before anything reaches a store.
 */
async function storeBody(s: Services, ref: MediaRef, input: UploadInput, mediaType: string, userId: string): Promise<{ held: HeldFile; size: number }> {
  if (input.contentLength !== undefined) await checkUploadQuota(s, userId, Number(input.contentLength));
  const tmp = await writeToTemp(s.media.files, input.body, s.config.max_upload_size);
  try {
    await checkUploadQuota(s, userId, tmp.size);
  } catch (err) {
    await unlinkQuietly(tmp.path);
    throw err;
  }
  const held = await s.media.storage.adopt(s.media.files.contentKey(ref), tmp.path, { local: true, contentType: mediaType });
  return { held, size: tmp.size };
}

/** Undoes a store whose row could not be written: the stored content goes again (a bucket's failure only logged). */
async function unstore(s: Services, ref: MediaRef, held: HeldFile): Promise<void> {
  if (s.media.storage.hasRemote) await s.media.storage.removeRemote(ref).catch((err) => s.log.warn({ err, mxc: mxcUri(ref) }, "removing an unrecorded upload failed"));
  await s.media.storage.removeLocal(ref);
  await held.release();
}

async function afterUpload(s: Services, ref: MediaRef, mediaType: string, held: HeldFile): Promise<void> {
  s.media.uploads.notify(mxcUri(ref));
  try {
    await pregenerateThumbnails(s, ref, mediaType, held.path);
  } catch (err) {
    if (err instanceof MatrixError) s.log.info({ mxc: mxcUri(ref), reason: err.message }, "no thumbnails for this upload");
    else s.log.warn({ err, mxc: mxcUri(ref) }, "thumbnail pre-generation failed");
  } finally {
    await held.release();
  }
}

/**
 * Makes a finished temporary file new local media (URL preview images): stored, then the row; what was
 * stored is removed if either fails. Thumbnails are pre-generated as for uploads.
 */
export async function adoptTempFile(s: Services, tmp: { path: string; size: number }, meta: UploadMeta, userId: string | null): Promise<MediaRef> {
  const ref = { origin: s.config.server_name, mediaId: newMediaId() };
  const held = await s.media.storage.adopt(s.media.files.contentKey(ref), tmp.path, { local: true, contentType: meta.mediaType });
  try {
    const now = s.clock.now();
    const ok = await s.media.store.insert({ ...ref, ...meta, mediaLength: tmp.size, userId, createdTs: now, uploadedTs: now, unusedExpiresTs: null, authenticated: s.config.enable_authenticated_media });
    if (!ok) throw new Error("media id collision");
  } catch (err) {
    await unstore(s, ref, held);
    throw err;
  }
  await afterUpload(s, ref, meta.mediaType, held);
  return ref;
}

/** POST /upload: stores the body as new local media; returns its mxc URI. */
export async function uploadMedia(s: Services, r: Requester, input: UploadInput): Promise<{ content_uri: string }> {
  requireNotGuest(r, "uploadMedia");
  requireNotSuspended(r, "Uploading media");
  const meta = checkUpload(s, input);
  const ref = { origin: s.config.server_name, mediaId: newMediaId() };
  const stored = await storeBody(s, ref, input, meta.mediaType, r.userId);
  const now = s.clock.now();
  try {
    const ok = await s.media.store.insert({
      ...ref, ...meta, mediaLength: stored.size, userId: r.userId, createdTs: now, uploadedTs: now, unusedExpiresTs: null,
      authenticated: s.config.enable_authenticated_media,
    });
    if (!ok) throw new Error("media id collision");
  } catch (err) {
    await unstore(s, ref, stored.held);
    throw err;
  }
  await afterUpload(s, ref, meta.mediaType, stored.held);
  return { content_uri: mxcUri(ref) };
}

/** PUT /upload/{serverName}/{mediaId}: the content of an mxc URI the requester reserved with /create. */
export async function uploadToCreated(s: Services, r: Requester, serverName: string, mediaId: string, input: UploadInput): Promise<Record<string, never>> {
  requireNotGuest(r, "uploadMedia");
  requireNotSuspended(r, "Uploading media");
  const ref = checkMediaRef(serverName, mediaId);
  if (ref.origin !== s.config.server_name) throw notFound("Non-local server name specified");
  const key = mxcUri(ref);
  if (s.media.uploading.has(key)) throw new MatrixError("M_CANNOT_OVERWRITE_MEDIA", "Media ID cannot be overwritten", 409);
  s.media.uploading.add(key);
  try {
    const row = await s.media.store.get(ref);
    if (!row) throw notFound("Unknown media ID");
    if (row.userId !== r.userId) throw forbidden("You may not upload to this media ID");
    if (row.uploadedTs !== null) throw new MatrixError("M_CANNOT_OVERWRITE_MEDIA", "Media ID has already been uploaded to", 409);
    if (row.unusedExpiresTs !== null && row.unusedExpiresTs < s.clock.now()) throw notFound("Media ID has expired");
    const meta = checkUpload(s, input);
    const stored = await storeBody(s, ref, input, meta.mediaType, r.userId);
    try {
      const ok = await s.media.store.completePending(ref, { ...meta, mediaLength: stored.size, uploadedTs: s.clock.now(), authenticated: s.config.enable_authenticated_media });
      if (!ok) throw new MatrixError("M_CANNOT_OVERWRITE_MEDIA", "Media ID has already been uploaded to", 409);
    } catch (err) {
      await unstore(s, ref, stored.held);
      throw err;
    }
    await afterUpload(s, ref, meta.mediaType, stored.held);
    return {};
  } finally {
    s.media.uploading.delete(key);
  }
}

/** POST /media/v1/create: reserves an mxc URI for content uploaded later (rc_media_create, pending cap). */
export async function createMedia(s: Services, r: Requester): Promise<{ content_uri: string; unused_expires_at: number }> {
  requireNotGuest(r, "uploadMedia");
  requireNotSuspended(r, "Uploading media");
  s.ratelimiter.check(`media_create:${r.userId}`, s.config.rc_media_create);
  const now = s.clock.now();
  if ((await s.media.store.countPending(r.userId, now)) >= s.config.max_pending_media_uploads)
    throw new MatrixError("M_LIMIT_EXCEEDED", "You have too many uploads pending", 429, { retry_after_ms: 60_000 });
  const ref = { origin: s.config.server_name, mediaId: newMediaId() };
  const expires = now + s.config.unused_expiration_time;
  await s.media.store.insert({
    ...ref, mediaType: null, uploadName: null, mediaLength: null, userId: r.userId, createdTs: now, uploadedTs: null,
    unusedExpiresTs: expires, authenticated: s.config.enable_authenticated_media,
  });
  return { content_uri: mxcUri(ref), unused_expires_at: expires };
}
