// Media helpers for tests: real images made with sharp (PNG, JPEG, an animated GIF), raw uploads and
// downloads over HTTP (bytes, not JSON), what the media store holds on disk and in the database (so a
// test can assert nothing was left behind), and a reader of multipart/mixed bodies.
import { readdirSync, existsSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import type { TestServer } from "./server.ts";

export const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 1 } } }).png().toBuffer();
export const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } }).jpeg().toBuffer();

/** An animated GIF of `frames` frames of width×height (each frame a different colour). */
export async function animatedGif(width: number, height: number, frames: number): Promise<Buffer> {
  const pages = await Promise.all(
    Array.from({ length: frames }, (_, i) =>
      sharp({ create: { width, height, channels: 3, background: { r: (i * 80) % 256, g: 100, b: 255 - ((i * 80) % 256) } } }).png().toBuffer(),
    ),
  );
  return sharp(pages, { join: { animated: true } }).gif({ delay: Array(frames).fill(100), loop: 0 }).toBuffer();
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  json: any;
}

export async function raw(t: TestServer, method: string, p: string, opts: { token?: string; body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(t.baseUrl + p, { method, headers, body: opts.body });
  const body = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, body, json };
}

/** POST /_matrix/media/v3/upload; returns the media id (expects 200). */
export async function upload(t: TestServer, token: string, body: Buffer, type?: string, filename?: string): Promise<{ mediaId: string; mxc: string }> {
  const q = filename !== undefined ? `?filename=${encodeURIComponent(filename)}` : "";
  const r = await raw(t, "POST", `/_matrix/media/v3/upload${q}`, { token, body, headers: type ? { "content-type": type } : {} });
  if (r.status !== 200) throw new Error(`upload failed: ${r.status} ${r.body.toString()}`);
  const mxc = r.json.content_uri as string;
  return { mxc, mediaId: mxc.split("/").pop()! };
}

/** Every file under the server's media store (relative paths), and the tmp folder's files. */
export function storeFiles(t: TestServer): { all: string[]; tmp: string[] } {
  const root = t.hs.services.config.media_store_path;
  const walk = (dir: string): string[] =>
    existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.relative(root, path.join(dir, e.name))])) : [];
  const all = walk(root);
  return { all, tmp: all.filter((f) => f.startsWith("tmp" + path.sep)) };
}

export async function mediaRowCount(t: TestServer): Promise<number> {
  return t.hs.services.db.media.count();
}

export interface Part {
  headers: Record<string, string>;
  body: Buffer;
}

/** Splits a multipart body on the boundary of its Content-Type (RFC 2046). */
export function parseMultipart(contentType: string, body: Buffer): Part[] {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  const delim = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delim);
  while (pos >= 0) {
    const start = pos + delim.length;
    if (body.subarray(start, start + 2).toString() === "--") break;
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), start);
    if (next < 0) throw new Error("unterminated part");
    const part = body.subarray(start + 2, next);
    const sep = part.indexOf("\r\n\r\n");
    const headers: Record<string, string> = {};
    for (const line of part.subarray(0, sep).toString("latin1").split("\r\n")) {
      const i = line.indexOf(":");
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    parts.push({ headers, body: part.subarray(sep + 4) });
    pos = next + 2;
  }
  return parts;
}
