// Serving our media to other servers: the answer of GET /_matrix/federation/v1/media/download/{mediaId}
// and /thumbnail/{mediaId} (Server-Server API "Content Repository"): multipart/mixed with exactly two
// parts, a JSON part (the media's metadata: currently always {}) and the file with its Content-Type and
// Content-Disposition. Local media only. The route (X-Matrix authentication) is a thin face over this.
import { randomBytes } from "node:crypto";
import { findMedia, findThumbnail } from "./download.js";
import { contentDisposition, servedContentType } from "./serving.js";
import { openFileRange } from "./file-range.js";
/** The file is opened (and its first bytes read) before anything is answered: a file that cannot be is 404. */
async function multipart(file, partHeaders) {
    const opened = await openFileRange(file.path, file.length);
    const boundary = randomBytes(16).toString("hex");
    const head = Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n{}\r\n` +
        `--${boundary}\r\n${Object.entries(partHeaders).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    async function* parts() {
        try {
            yield head;
            if (file.length > 0)
                yield* opened.chunks;
            yield tail;
        }
        finally {
            await opened.close();
        }
    }
    return { contentType: `multipart/mixed; boundary=${boundary}`, contentLength: head.length + file.length + tail.length, body: parts() };
}
/** The multipart answer to a remote server's download of our media `mediaId`. */
export async function federationDownload(s, mediaId, opts = {}) {
    const m = await findMedia(s, { serverName: s.config.server_name, mediaId, access: "federation", ...opts });
    const type = servedContentType(m.mediaType);
    return multipart(m, { "Content-Type": type, "Content-Disposition": contentDisposition(type, m.uploadName) });
}
/** The multipart answer to a remote server's thumbnail request for our media `mediaId`. */
export async function federationThumbnail(s, mediaId, t, opts = {}) {
    const th = await findThumbnail(s, { serverName: s.config.server_name, mediaId, access: "federation", ...opts }, t);
    return multipart(th, { "Content-Type": th.mediaType, "Content-Disposition": contentDisposition(th.mediaType, `thumbnail.${th.mediaType.split("/")[1]}`, true) });
}
