// Serving our media to other servers: the answer of GET /_matrix/federation/v1/media/download/{mediaId}
// and /thumbnail/{mediaId} (Server-Server API "Content Repository"): multipart/mixed with exactly two
// parts, a JSON part (the media's metadata: currently always {}) and the file with its Content-Type and
// Content-Disposition. Local media only. The route (X-Matrix authentication) is a thin face over this.
import { createReadStream } from "node:fs";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { Services } from "../services.ts";
import { findMedia, findThumbnail } from "./download.ts";
import { contentDisposition, servedContentType } from "./serving.ts";
import type { ThumbnailRequest } from "./thumbnails.ts";

export interface MultipartMedia {
  /** `multipart/mixed; boundary=…` */
  contentType: string;
  contentLength: number;
  body: Readable;
}

function multipart(file: { path: string; length: number }, partHeaders: Record<string, string>): MultipartMedia {
  const boundary = randomBytes(16).toString("hex");
  const head = Buffer.from(
    `--${boundary}\r\nContent-Type: application/json\r\n\r\n{}\r\n` +
      `--${boundary}\r\n${Object.entries(partHeaders).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts() {
    yield head;
    yield* createReadStream(file.path);
    yield tail;
  }
  return {
    contentType: `multipart/mixed; boundary=${boundary}`,
    contentLength: head.length + file.length + tail.length,
    body: Readable.from(parts(), { objectMode: false }),
  };
}

/** The multipart answer to a remote server's download of our media `mediaId`. */
export async function federationDownload(s: Services, mediaId: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<MultipartMedia> {
  const m = await findMedia(s, { serverName: s.config.server_name, mediaId, access: "federation", ...opts });
  const type = servedContentType(m.mediaType);
  return multipart(m, { "Content-Type": type, "Content-Disposition": contentDisposition(type, m.uploadName) });
}

/** The multipart answer to a remote server's thumbnail request for our media `mediaId`. */
export async function federationThumbnail(s: Services, mediaId: string, t: ThumbnailRequest, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<MultipartMedia> {
  const th = await findThumbnail(s, { serverName: s.config.server_name, mediaId, access: "federation", ...opts }, t);
  return multipart(th, { "Content-Type": th.mediaType, "Content-Disposition": contentDisposition(th.mediaType, `thumbnail.${th.mediaType.split("/")[1]}`, true) });
}
