// Uploads through a signed URL, for the GraphQL face: a mutation reserves an mxc URI (POST /media/v1/create's
// operation, with its rate limit and pending cap) and hands back a short-lived URL signed for the uploader;
// a plain `PUT` of the bytes to that URL, with no Authorization header, is the spec's PUT /upload/{serverName}
// /{mediaId} for that user (uploadToCreated: quotas, size limit, thumbnails). Chosen over the GraphQL
// multipart request spec: a browser sends a File as the PUT body as it is (fetch/XHR with upload progress),
// nothing is buffered through the GraphQL layer, and the URL works behind CDNs and proxies that know
// nothing of GraphQL. The signature (browser-urls.ts's HMAC, use "upload") binds media, user and expiry.
// Spec: Client-Server API "Content repository" (POST /media/v1/create, PUT /media/v3/upload/...).
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { MatrixError } from "../errors.ts";
import { parseMxc, type MediaRef } from "./ids.ts";
import { checkBrowserMediaUrl, signedParams } from "./browser-urls.ts";
import { createMedia, uploadToCreated, type UploadInput } from "./upload.ts";

/** An upload URL is valid this long (and never past the reserved mxc URI's own expiry). */
export const UPLOAD_URL_LIFETIME_MS = 600_000;

export interface SignedUpload {
  /** The reserved mxc:// URI the content will have. */
  contentUri: string;
  /** Where to PUT the bytes (Content-Type: the media type; ?filename= may be appended). */
  uploadUrl: string;
  /** When the upload URL stops working (ms since the epoch). */
  expiresAt: number;
}

/** Reserves an mxc URI for `r` and signs a URL to PUT its content to. */
export async function createSignedUpload(s: Services, r: Requester): Promise<SignedUpload> {
  const created = await createMedia(s, r);
  const ref = parseMxc(created.content_uri)!;
  const exp = Math.min(s.clock.now() + UPLOAD_URL_LIFETIME_MS, created.unused_expires_at);
  const q = signedParams(s, ref, r.userId, exp, "upload");
  return {
    contentUri: created.content_uri,
    uploadUrl: `${s.config.public_baseurl}_impl/media/v1/upload/${encodeURIComponent(ref.origin)}/${ref.mediaId}?${q}`,
    expiresAt: exp,
  };
}

/**
 * PUT to a signed upload URL: the signature stands for the uploader's authentication (a bad or expired
 * one is M_FORBIDDEN before a byte is read); then the spec's upload to a created mxc URI, as that user.
 */
export async function uploadBySignedUrl(s: Services, ref: MediaRef, p: { user?: string; exp?: string; sig?: string }, input: UploadInput): Promise<Record<string, never>> {
  const user = await checkBrowserMediaUrl(s, ref, p, "upload");
  if (user.locked) throw new MatrixError("M_FORBIDDEN", "Invalid or expired media URL", 403);
  const r: Requester = { userId: user.userId, deviceId: null, isGuest: user.isGuest, isAdmin: user.isAdmin, accessTokenId: null, suspended: user.suspended };
  return uploadToCreated(s, r, ref.origin, ref.mediaId, input);
}
