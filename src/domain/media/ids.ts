// Media identifiers: the mxc:// URI grammar, strict validation of incoming server names and media ids
// (before anything touches the disk), and new random media ids. Spec: Client-Server API "Matrix Content
// (mxc://) URIs": a media id is an opaque `[A-Za-z0-9_-]+` string.
import { MatrixError } from "../errors.ts";
import { randomString, tryParseServerName } from "../ids.ts";

const MEDIA_ID = /^[A-Za-z0-9_-]{1,255}$/;

export interface MediaRef {
  origin: string;
  mediaId: string;
}

/** A new local media id: 24 random letters and digits (as Synapse makes them). */
export function newMediaId(): string {
  return randomString(24);
}

export function isValidMediaId(id: string): boolean {
  return MEDIA_ID.test(id);
}

/** Checks a server name and media id from a request; M_INVALID_PARAM when either is malformed. */
export function checkMediaRef(origin: string, mediaId: string): MediaRef {
  if (!tryParseServerName(origin)) throw new MatrixError("M_INVALID_PARAM", "Invalid server name", 400);
  if (!isValidMediaId(mediaId)) throw new MatrixError("M_INVALID_PARAM", "Invalid media id", 400);
  return { origin, mediaId };
}

export function mxcUri(ref: MediaRef): string {
  return `mxc://${ref.origin}/${ref.mediaId}`;
}

/**
 * Whether `v` is an MXC URI as a client may set and be shown one (an avatar URL): `mxc://`, a server name,
 * `/` and a media id (any characters but `/?#` and spaces here, any length; the field's own length limit
 * applies). Looser than `parseMxc`, which media operations use; every avatar URL uses this one.
 */
export function isMxcUri(v: string): boolean {
  const m = /^mxc:\/\/([^/]+)\/([^/?#\s]+)$/.exec(v);
  return m !== null && tryParseServerName(m[1]!) !== undefined;
}

/**
 * An avatar URL as clients are shown it: `v` when it is an MXC URI (isMxcUri), else undefined (profiles
 * stored before the check, room state, member events and other servers' answers may hold any string; the
 * spec's response schemas allow only mxc:// URIs).
 */
export function shownMxc(v: unknown): string | undefined {
  return typeof v === "string" && isMxcUri(v) ? v : undefined;
}

/** Parses `mxc://server/id`; undefined when it is not a well-formed mxc URI. */
export function parseMxc(uri: unknown): MediaRef | undefined {
  if (typeof uri !== "string") return undefined;
  const m = /^mxc:\/\/([^/]+)\/([^/?#]+)$/.exec(uri);
  if (!m || !tryParseServerName(m[1]!) || !isValidMediaId(m[2]!)) return undefined;
  return { origin: m[1]!, mediaId: m[2]! };
}
