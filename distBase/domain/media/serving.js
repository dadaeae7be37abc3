// The headers media is served with (Client-Server API "Serving inline content" and the download
// endpoints' Content-Disposition rules; Synapse's add_file_headers): inline only for a safe list of types,
// attachment otherwise, the file name per RFC 6266/5987, a sandboxing Content-Security-Policy,
// Cross-Origin-Resource-Policy and Referrer-Policy (the contract names no-referrer).
/** Types a browser may show inline (Synapse's INLINE_CONTENT_TYPES; SVG is left out on purpose). */
export const INLINE_CONTENT_TYPES = new Set([
    "text/css", "text/plain", "text/csv", "application/json", "application/ld+json",
    "image/jpeg", "image/gif", "image/png", "image/apng", "image/webp", "image/avif",
    "video/mp4", "video/webm", "video/ogg", "video/quicktime",
    "audio/mp4", "audio/webm", "audio/aac", "audio/mpeg", "audio/ogg", "audio/wave", "audio/wav", "audio/x-wav", "audio/x-pn-wav", "audio/flac", "audio/x-flac",
]);
/** Text types served with `; charset=UTF-8` when the upload named no charset (Synapse's TEXT_CONTENT_TYPES). */
const TEXT_CONTENT_TYPES = new Set([
    "text/css", "text/csv", "text/html", "text/calendar", "text/plain", "text/javascript",
    "application/json", "application/ld+json", "application/rtf", "image/svg+xml", "text/xml",
]);
export const MEDIA_CSP = "sandbox; default-src 'none'; script-src 'none'; plugin-types application/pdf; style-src 'unsafe-inline'; media-src 'self'; object-src 'self';";
/** RFC 2616 token characters: a filename made only of them can go unquoted. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export function essence(mediaType) {
    return mediaType.split(";", 1)[0].trim().toLowerCase();
}
/** `inline` or `attachment`, with `filename=` (a token) or `filename*=utf-8''…` (RFC 5987) when named. */
export function contentDisposition(mediaType, uploadName, forceInline = false) {
    const kind = forceInline || INLINE_CONTENT_TYPES.has(essence(mediaType)) ? "inline" : "attachment";
    if (!uploadName)
        return kind;
    if (TOKEN.test(uploadName))
        return `${kind}; filename=${uploadName}`;
    const encoded = encodeURIComponent(uploadName).replace(/['()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
    return `${kind}; filename*=utf-8''${encoded}`;
}
export function servedContentType(mediaType) {
    const type = mediaType || "application/octet-stream";
    return TEXT_CONTENT_TYPES.has(type.toLowerCase()) ? `${type}; charset=UTF-8` : type;
}
/** Every header of a media (or thumbnail) response but Content-Length and ranges. */
export function mediaHeaders(mediaType, uploadName, opts = {}) {
    const type = servedContentType(mediaType);
    return {
        "content-type": type,
        "content-disposition": contentDisposition(type, uploadName, opts.thumbnail),
        "content-security-policy": MEDIA_CSP,
        "x-content-security-policy": "sandbox;",
        "cross-origin-resource-policy": "cross-origin",
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff",
        "x-robots-tag": "noindex, nofollow, noarchive, noimageindex",
        "cache-control": "public,max-age=86400,s-maxage=0,proxy-revalidate",
    };
}
