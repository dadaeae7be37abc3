// Media in an S3-compatible bucket (AWS S3, MinIO, Ceph, Garage, R2 ...) behind the MediaBackend seam:
// objects are named prefix + the media-store-relative key (files.ts). Files go up streamed (lib-storage:
// one PUT for small files, a multipart upload of bounded parts for large ones, aborted on failure, so an
// object appears whole or not at all); downloads are a GetObject with the HTTP Range asked for, its first
// chunk read before anything is answered. Any failure to reach the bucket is the M_UNKNOWN 502 a failed
// upstream gets (never a bare 500). The endpoint is the operator's own configuration, not user input,
// so it is reached directly rather than through the outbound-address policy.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import {
  DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type StorageClass,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { Logger } from "pino";
import type { S3Options } from "../../config/media-storage.ts";
import { MatrixError, notFound } from "../errors.ts";
import type { MediaBackend, StoredObject } from "./backend.ts";
import type { FileRange } from "./file-range.ts";

/** The answer when the bucket cannot be reached or refuses: the store is an upstream that failed. */
export function storageUnavailable(): MatrixError {
  return new MatrixError("M_UNKNOWN", "The media store is unavailable", 502);
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NotFound" || e?.name === "NoSuchKey" || e?.$metadata?.httpStatusCode === 404;
}

export function s3Client(o: S3Options): S3Client {
  return new S3Client({
    region: o.region,
    ...(o.endpoint_url ? { endpoint: o.endpoint_url } : {}),
    forcePathStyle: o.force_path_style,
    ...(o.access_key_id
      ? { credentials: { accessKeyId: o.access_key_id, secretAccessKey: o.secret_access_key!, ...(o.session_token ? { sessionToken: o.session_token } : {}) } }
      : {}),
    // Checksums only where S3 requires them: S3-compatible servers differ in which trailing checksums
    // (aws-chunked bodies) they understand, and every one of them takes a plain body.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });
}

export class S3Backend implements MediaBackend {
  readonly isLocalDisk = false;
  readonly description: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(private readonly o: S3Options, private readonly log: Logger) {
    this.client = s3Client(o);
    this.bucket = o.bucket;
    this.prefix = o.prefix;
    this.description = `s3://${o.bucket}/${o.prefix}${o.endpoint_url ? ` at ${o.endpoint_url}` : ""}`;
  }

  private fail(err: unknown, what: string, key: string): MatrixError {
    if (err instanceof MatrixError) return err;
    this.log.warn({ err, store: this.description, key }, `media store: ${what} failed`);
    return storageUnavailable();
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, opts: { length?: number; contentType?: string } = {}): Promise<void> {
    const upload = new Upload({
      client: this.client,
      queueSize: 2,
      partSize: 8 * 1024 * 1024,
      params: {
        Bucket: this.bucket, Key: this.prefix + key, Body: body instanceof Readable ? body : Readable.from(body),
        ...(opts.length !== undefined ? { ContentLength: opts.length } : {}),
        ...(opts.contentType ? { ContentType: opts.contentType } : {}),
        ...(this.o.storage_class ? { StorageClass: this.o.storage_class as StorageClass } : {}),
      },
    });
    try {
      await upload.done();
    } catch (err) {
      throw this.fail(err, "upload", key);
    }
  }

  async putFile(key: string, file: string, opts: { move: boolean; contentType?: string }): Promise<void> {
    const { size } = await stat(file);
    const body = createReadStream(file);
    try {
      await this.put(key, body, { length: size, contentType: opts.contentType });
    } finally {
      body.destroy(); // a failed upload may leave it unread: its file descriptor goes now
    }
  }

  async find(key: string): Promise<StoredObject | null> {
    const length = await this.size(key);
    if (length === null) return null;
    return { length, localPath: null, open: (start?: number, end?: number) => this.open(key, length, start, end) };
  }

  async open(key: string, expectedLength: number, start = 0, end = expectedLength - 1): Promise<FileRange> {
    const length = Math.max(0, end - start + 1);
    const whole = start === 0 && end === expectedLength - 1;
    let body: Readable;
    try {
      const res = await this.client.send(new GetObjectCommand({
        Bucket: this.bucket, Key: this.prefix + key, ...(whole || length === 0 ? {} : { Range: `bytes=${start}-${end}` }),
      }));
      body = res.Body as Readable;
      if (length === 0) {
        body.destroy();
        return { length: 0, chunks: (async function* () {})(), close: async () => {} };
      }
      if (res.ContentLength !== length) {
        body.destroy();
        throw notFound("Media not found");
      }
    } catch (err) {
      if (isNotFound(err) || (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode === 416) throw notFound("Media not found");
      throw this.fail(err, "download", key);
    }
    const it = body[Symbol.asyncIterator]();
    let first: Buffer;
    try {
      const r = await it.next();
      if (r.done) throw new Error("the object ended early");
      first = r.value as Buffer;
    } catch (err) {
      body.destroy();
      throw this.fail(err, "download", key);
    }
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      body.destroy();
    };
    async function* chunks(): AsyncGenerator<Buffer> {
      try {
        let got = first.length;
        yield first;
        while (got < length) {
          const r = await it.next();
          if (r.done) throw new Error(`the media object ended ${length - got} bytes early`);
          got += (r.value as Buffer).length;
          yield r.value as Buffer;
        }
      } finally {
        await close();
      }
    }
    return { length, chunks: chunks(), close };
  }

  async size(key: string): Promise<number | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
      return res.ContentLength ?? 0;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw this.fail(err, "lookup", key);
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.size(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw this.fail(err, "delete", key);
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    try {
      let token: string | undefined;
      do {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, ContinuationToken: token }));
        const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
        if (keys.length) {
          const res = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
          if (res.Errors?.length) throw new Error(`could not delete ${res.Errors.length} objects: ${res.Errors[0]!.Code} ${res.Errors[0]!.Message}`);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw this.fail(err, "delete", prefix);
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
