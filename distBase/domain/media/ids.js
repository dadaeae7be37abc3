// Media identifiers: the mxc:// URI grammar, strict validation of incoming server names and media ids
// (before anything touches the disk), and new random media ids. Spec: Client-Server API "Matrix Content
// (mxc://) URIs": a media id is an opaque `[A-Za-z0-9_-]+` string.
import { MatrixError } from "../errors.js";
import { randomString, tryParseServerName } from "../ids.js";
const MEDIA_ID = /^[A-Za-z0-9_-]{1,255}$/;
/** A new local media id: 24 random letters and digits (as Synapse makes them). */
export function newMediaId() {
    return randomString(24);
}
export function isValidMediaId(id) {
    return MEDIA_ID.test(id);
}
/** Checks a server name and media id from a request; M_INVALID_PARAM when either is malformed. */
export function checkMediaRef(origin, mediaId) {
    if (!tryParseServerName(origin))
        throw new MatrixError("M_INVALID_PARAM", "Invalid server name", 400);
    if (!isValidMediaId(mediaId))
        throw new MatrixError("M_INVALID_PARAM", "Invalid media id", 400);
    return { origin, mediaId };
}
export function mxcUri(ref) {
    return `mxc://${ref.origin}/${ref.mediaId}`;
}
/** Parses `mxc://server/id`; undefined when it is not a well-formed mxc URI. */
export function parseMxc(uri) {
    if (typeof uri !== "string")
        return undefined;
    const m = /^mxc:\/\/([^/]+)\/([^/?#]+)$/.exec(uri);
    if (!m || !tryParseServerName(m[1]) || !isValidMediaId(m[2]))
        return undefined;
    return { origin: m[1], mediaId: m[2] };
}
