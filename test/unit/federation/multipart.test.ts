// The streaming multipart/mixed reader of federation media answers (src/federation/multipart.ts): both
// parts read whatever the chunking (one byte at a time, a delimiter split across chunks), the file handed
// on before the answer has fully arrived (streamed, not held whole), the caps and malformed answers
// refused, Location parts, and the Content-Type / Content-Disposition helpers.
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { dispositionFilename, multipartBoundary, MultipartError, readMediaMultipart } from "../../../src/federation/multipart.ts";

const B = "b0undary";
const answer = (file: Buffer, fileHeaders = "Content-Type: image/png\r\n", json = "{}") =>
  Buffer.concat([Buffer.from(`--${B}\r\nContent-Type: application/json\r\n\r\n${json}\r\n--${B}\r\n${fileHeaders}\r\n`), file, Buffer.from(`\r\n--${B}--\r\n`)]);

async function* chunked(buf: Buffer, size: number) {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function readAll(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of it) out.push(c);
  return Buffer.concat(out);
}

describe("readMediaMultipart", () => {
  it("reads the metadata and the file, however the answer is chunked", async () => {
    // The file holds near-delimiters: CRLF, dashes and a boundary prefix.
    const file = Buffer.concat([randomBytes(300), Buffer.from(`\r\n--${B.slice(0, 5)}\r\n--`), randomBytes(300)]);
    const whole = answer(file);
    for (const size of [1, 2, 3, 7, 11, 64, whole.length]) {
      const m = await readMediaMultipart(chunked(whole, size), B);
      expect(m.metadata).toEqual({});
      expect(m.file.headers).toEqual({ "content-type": "image/png" });
      expect((await readAll(m.file.body)).equals(file), `chunks of ${size}`).toBe(true);
    }
  });

  it("hands the file on while the answer is still arriving", async () => {
    const chunk = randomBytes(64 * 1024);
    let pulled = 0;
    async function* source() {
      yield Buffer.from(`--${B}\r\nContent-Type: application/json\r\n\r\n{"k":1}\r\n--${B}\r\nContent-Type: application/octet-stream\r\n\r\n`);
      for (let i = 0; i < 200; i++) {
        pulled++;
        yield chunk;
      }
      yield Buffer.from(`\r\n--${B}--\r\n`);
    }
    const m = await readMediaMultipart(source(), B);
    expect(m.metadata).toEqual({ k: 1 });
    let total = 0;
    let pulledAtFirst: number | undefined;
    for await (const c of m.file.body) {
      pulledAtFirst ??= pulled;
      total += c.length;
    }
    expect(pulledAtFirst).toBeLessThanOrEqual(2);
    expect(total).toBe(200 * chunk.length);
  });

  it("reads a part that names a Location, and a preamble before the first boundary", async () => {
    const body = Buffer.from(`preamble text\r\n--${B}\r\nContent-Type: application/json\r\n\r\n{}\r\n--${B}\r\nLocation: https://cdn.example/f\r\n\r\n\r\n--${B}--\r\n`);
    const m = await readMediaMultipart(chunked(body, 5), B);
    expect(m.file.headers).toEqual({ location: "https://cdn.example/f" });
    expect((await readAll(m.file.body)).length).toBe(0);
  });

  it("refuses malformed answers", async () => {
    const bad = async (body: Buffer | string, message: RegExp) =>
      expect(readMediaMultipart(chunked(Buffer.from(body), 16), B).then(async (m) => readAll(m.file.body))).rejects.toThrow(message);
    await bad(`no boundary at all ${"x".repeat(5000)}`, /preamble is too large/);
    await bad(`--${B}\r\nContent-Type: application/json\r\n\r\n{}\r\n--${B}--\r\n`, /file part is missing/);
    await bad(`--${B}\r\nContent-Type: application/json\r\n\r\nnot json\r\n--${B}\r\n\r\nx\r\n--${B}--`, /not JSON/);
    await bad(`--${B}\r\nContent-Type: application/json\r\n\r\n[1]\r\n--${B}\r\n\r\nx\r\n--${B}--`, /not a JSON object/);
    await bad(`--${B}\r\nContent-Type: text/html\r\n\r\n{}\r\n--${B}\r\n\r\nx\r\n--${B}--`, /not JSON/);
    await bad(`--${B}\r\nContent-Type: application/json\r\n\r\n{"a":"${"y".repeat(70_000)}"}\r\n--${B}\r\n\r\nx\r\n--${B}--`, /JSON part is too large/);
    await bad(`--${B}\r\nContent-Type: application/json\r\n\r\n{}\r\n--${B}\r\nContent-Type: image/png\r\n\r\ntruncated file`, /ended inside the file part/);
    await bad(`--${B}\r\nContent-Type: application/json\r\n\r\n{}\r\n--${B}\r\nno colon here\r\n\r\nx\r\n--${B}--`, /header line is malformed/);
    await expect(readMediaMultipart(chunked(Buffer.from("--x"), 4), B)).rejects.toBeInstanceOf(MultipartError);
  });
});

describe("multipart helpers", () => {
  it("finds the boundary of multipart/mixed only", () => {
    expect(multipartBoundary("multipart/mixed; boundary=abc123")).toBe("abc123");
    expect(multipartBoundary('Multipart/Mixed; charset=x; boundary="a b:c"')).toBe("a b:c");
    expect(multipartBoundary("multipart/form-data; boundary=abc")).toBeUndefined();
    expect(multipartBoundary("multipart/mixed")).toBeUndefined();
    expect(multipartBoundary(`multipart/mixed; boundary=${"a".repeat(71)}`)).toBeUndefined();
    expect(multipartBoundary(undefined)).toBeUndefined();
  });

  it("reads Content-Disposition file names (RFC 6266)", () => {
    expect(dispositionFilename("inline; filename=red.png")).toBe("red.png");
    expect(dispositionFilename("attachment; filename*=utf-8''pic%20one.png")).toBe("pic one.png");
    expect(dispositionFilename('attachment; filename="a \\"quoted\\" name.txt"')).toBe('a "quoted" name.txt');
    expect(dispositionFilename("attachment; filename=plain.txt; filename*=utf-8''better.txt")).toBe("better.txt");
    expect(dispositionFilename("attachment; filename*=utf-8''%E0%A4%A")).toBeNull();
    expect(dispositionFilename("inline")).toBeNull();
    expect(dispositionFilename(undefined)).toBeNull();
  });
});
