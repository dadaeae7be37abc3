// Sends a stored media file over HTTP with its headers, Content-Length and single-range requests
// (RFC 9110 "Range Requests": 206 with Content-Range, 416 for a range past the end; other forms of Range
// are ignored and the whole file is sent).
import type { FastifyReply, FastifyRequest } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { FileRange } from "../../domain/media/file-range.ts";
import { sendStreamed } from "../stream-reply.ts";

export interface FileToSend {
  length: number;
  /** Reads [start, end] of it from its store (local disk or a bucket's ranged GET). */
  open(start: number, end: number): Promise<FileRange>;
  headers: Record<string, string>;
}

/** [start, end] (inclusive) of a `bytes=` range, "unsatisfiable", or undefined to send everything. */
export function parseRange(header: string | undefined, length: number): [number, number] | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return "unsatisfiable";
    return [Math.max(0, length - suffix), length - 1];
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? length - 1 : Math.min(Number(m[2]), length - 1);
  if (start >= length || end < start) return "unsatisfiable";
  return [start, end];
}

/** Sends the file (opened first: a file that cannot be read is 404; one failing later cuts the answer). */
export async function sendFile(req: FastifyRequest, reply: FastifyReply, file: FileToSend): Promise<FastifyReply> {
  reply.headers(file.headers).header("accept-ranges", "bytes");
  const range = parseRange(req.headers.range, file.length);
  if (range === "unsatisfiable") {
    reply.header("content-range", `bytes */${file.length}`);
    throw new MatrixError("M_UNKNOWN", "Requested range not satisfiable", 416);
  }
  const [start, end] = range ?? [0, file.length - 1];
  const opened = await file.open(start, end);
  reply.header("content-length", String(opened.length));
  if (range) reply.code(206).header("content-range", `bytes ${start}-${end}/${file.length}`);
  if (file.length === 0) {
    await opened.close();
    return reply.send("");
  }
  return sendStreamed(reply, opened.chunks, "a media file");
}
