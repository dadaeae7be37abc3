// Serving our media to other servers: the answer of GET /_matrix/federation/v1/media/download/{mediaId}
// and /thumbnail/{mediaId} (Server-Server API "Content Repository"): multipart/mixed with exactly two
// parts, a JSON part (the media's metadata: currently always {}) and the file with its Content-Type and
// Content-Disposition. Local media only. The route (X-Matrix authentication) is a thin face over this.
import { randomBytes } from "node:crypto";
import type { Services } from "../services.ts";
import { findMedia, findThumbnail } from "./download.ts";
import { contentDisposition, servedContentType } from "./serving.ts";
import type { ThumbnailRequest } from "./thumbnails.ts";
import type { FileRange } from "./file-range.ts";

export interface MultipartMedia {
  /** `multipart/mixed; boundary=…` */
  contentType: string;
  contentLength: number;
  /** The bytes: exactly contentLength of them, or an error (the file failed while it was read). */
  body: AsyncGenerator<Buffer>;
}

/** The file is opened (and its first bytes read) before anything is answered: a file that cannot be is 404. */
async function multipart(file: { length: number; open(): Promise<FileRange> }, partHeaders: Record<string, string>): Promise<MultipartMedia> {
  const opened = await file.open();
  const boundary = randomBytes(16).toString("hex");
  const head = Buffer.from(
    `--${boundary}\r\nContent-Type: application/json\r\n\r\n{}\r\n` +
      `--${boundary}\r\n${Object.entries(partHeaders).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts() {
    try {
      yield head;
      if (file.length > 0) yield* opened.chunks;
      yield tail;
    } finally {
      await opened.close();
    }
  }
  return { contentType: `multipart/mixed; boundary=${boundary}`, contentLength: head.length + file.length + tail.length, body: parts() };
}

/** The multipart answer to a remote server's download of our media `mediaId`. */
export async function federationDownload(s: Services, mediaId: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<MultipartMedia> {
  const m = await findMedia(s, { serverName: s.config.server_name, mediaId, access: "federation", ...opts });
  const type = servedContentType(m.mediaType);
  return multipart({ length: m.length, open: () => m.object.open() }, { "Content-Type": type, "Content-Disposition": contentDisposition(type, m.uploadName) });
}

/** The multipart answer to a remote server's thumbnail request for our media `mediaId`. */
export async function federationThumbnail(s: Services, mediaId: string, t: ThumbnailRequest, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<MultipartMedia> {
  const th = await findThumbnail(s, { serverName: s.config.server_name, mediaId, access: "federation", ...opts }, t);
  return multipart(th, { "Content-Type": th.mediaType, "Content-Disposition": contentDisposition(th.mediaType, `thumbnail.${th.mediaType.split("/")[1]}`, true) });
}
