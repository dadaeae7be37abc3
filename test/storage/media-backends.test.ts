// The MediaBackend contract (src/domain/media/backend.ts), the same checks on both implementations:
// local disk under a temporary media_store_path, and an S3 bucket on a real local S3 server (s3rver) —
// a stream stored whole, or nothing when it fails midway; byte ranges; sizes; a missing object is 404
// M_NOT_FOUND / null; putFile copying or moving; deleting one object and every object under a prefix.
// No database is involved, so there is nothing to run on PostgreSQL.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MediaBackend } from "../../src/domain/media/backend.ts";
import { MediaFiles } from "../../src/domain/media/files.ts";
import { LocalBackend } from "../../src/domain/media/local-backend.ts";
import { LazyS3Backend } from "../../src/domain/media/lazy-backend.ts";
import { MatrixError } from "../../src/domain/errors.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";

async function readAll(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of chunks) out.push(c);
  return Buffer.concat(out);
}

let s3: TestS3;
const dirs: string[] = [];
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(path.join(tmpdir(), "weft-backend-"));
  dirs.push(d);
  return d;
}

const makers: [string, () => MediaBackend][] = [
  ["local disk", () => new LocalBackend(new MediaFiles(scratch(), "weft.test"))],
  ["an S3 bucket", () => new LazyS3Backend({ bucket: s3.bucket, region: "us-east-1", endpoint_url: s3.endpoint, access_key_id: "S3RVER", secret_access_key: "S3RVER", prefix: `p${dirs.length}-${Date.now()}/`, force_path_style: true }, pino({ level: "silent" }))],
];

describe.each(makers)("the media backend on %s", (_name, make) => {
  let b: MediaBackend;
  beforeAll(() => {
    b = make();
  });
  afterAll(async () => {
    await b?.close();
  });

  const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));

  it("stores a stream whole and reads it back, whole and by range", async () => {
    await b.put("local_content/aa/bb/one", Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000)]));
    expect(await b.size("local_content/aa/bb/one")).toBe(bytes.length);
    expect(await b.exists("local_content/aa/bb/one")).toBe(true);
    const whole = await b.open("local_content/aa/bb/one", bytes.length);
    expect(whole.length).toBe(bytes.length);
    expect((await readAll(whole.chunks)).equals(bytes)).toBe(true);
    const part = await b.open("local_content/aa/bb/one", bytes.length, 123_456, 123_465);
    expect(part.length).toBe(10);
    expect((await readAll(part.chunks)).equals(bytes.subarray(123_456, 123_466))).toBe(true);
    const found = await b.find("local_content/aa/bb/one");
    expect(found?.length).toBe(bytes.length);
    expect(found!.localPath !== null).toBe(b.isLocalDisk);
    const viaFound = await found!.open(299_990);
    expect((await readAll(viaFound.chunks)).equals(bytes.subarray(299_990))).toBe(true);
    // Closing before reading everything is fine.
    const early = await b.open("local_content/aa/bb/one", bytes.length);
    await early.close();
  });

  it("stores nothing from a stream that fails midway", async () => {
    async function* failing() {
      yield Buffer.alloc(1000, 1);
      throw new Error("the sender went away");
    }
    await expect(b.put("local_content/aa/bb/broken", failing())).rejects.toThrow();
    expect(await b.exists("local_content/aa/bb/broken")).toBe(false);
  });

  it("answers a missing object with null and 404 M_NOT_FOUND", async () => {
    expect(await b.find("local_content/zz/zz/none")).toBeNull();
    expect(await b.size("local_content/zz/zz/none")).toBeNull();
    const err = await b.open("local_content/zz/zz/none", 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MatrixError);
    expect([(err as MatrixError).errcode, (err as MatrixError).httpStatus]).toEqual(["M_NOT_FOUND", 404]);
    await b.delete("local_content/zz/zz/none"); // deleting what is not there is fine
  });

  it("copies or moves a finished file in", async () => {
    const src = path.join(scratch(), "file");
    writeFileSync(src, "file contents");
    await b.putFile("local_content/cc/dd/copied", src, { move: false });
    expect(existsSync(src)).toBe(true);
    await b.putFile("local_content/cc/dd/moved", src, { move: true });
    expect(existsSync(src)).toBe(!b.isLocalDisk); // a bucket always copies; the caller removes its file
    for (const key of ["local_content/cc/dd/copied", "local_content/cc/dd/moved"]) {
      const r = await b.open(key, 13);
      expect((await readAll(r.chunks)).toString(), key).toBe("file contents");
    }
  });

  it("deletes one object, and every object under a prefix", async () => {
    for (const name of ["32-32-image-png-crop", "96-96-image-png-crop"]) await b.put(`local_thumbnails/ee/ff/media1/${name}`, Readable.from([Buffer.from(name)]));
    await b.put("local_thumbnails/ee/ff/media10/32-32-image-png-crop", Readable.from([Buffer.from("other")]));
    await b.deletePrefix("local_thumbnails/ee/ff/media1/");
    expect(await b.exists("local_thumbnails/ee/ff/media1/32-32-image-png-crop")).toBe(false);
    expect(await b.exists("local_thumbnails/ee/ff/media1/96-96-image-png-crop")).toBe(false);
    expect(await b.exists("local_thumbnails/ee/ff/media10/32-32-image-png-crop")).toBe(true);
    await b.delete("local_content/cc/dd/copied");
    expect(await b.exists("local_content/cc/dd/copied")).toBe(false);
    expect(await b.exists("local_content/cc/dd/moved")).toBe(true);
  });
});
