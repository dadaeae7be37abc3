// A bucket store whose client library is loaded with its first use: the AWS SDK costs ~100 ms and
// ~30 MB at start (measured here), which a server keeping its media on local disk never pays. Only
// servers configured with media_store.backend s3 or media_storage_providers build one.
import type { Readable } from "node:stream";
import type { Logger } from "pino";
import type { S3Options } from "../../config/media-storage.ts";
import type { MediaBackend, StoredObject } from "./backend.ts";
import type { FileRange } from "./file-range.ts";

export class LazyS3Backend implements MediaBackend {
  readonly isLocalDisk = false;
  readonly description: string;
  private loading: Promise<MediaBackend> | undefined;

  constructor(private readonly o: S3Options, private readonly log: Logger) {
    this.description = `s3://${o.bucket}/${o.prefix}${o.endpoint_url ? ` at ${o.endpoint_url}` : ""}`;
  }

  private real(): Promise<MediaBackend> {
    return (this.loading ??= import("./s3-backend.ts").then(({ S3Backend }) => new S3Backend(this.o, this.log)));
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, opts?: { length?: number; contentType?: string }): Promise<void> {
    return (await this.real()).put(key, body, opts);
  }
  async putFile(key: string, file: string, opts: { move: boolean; contentType?: string }): Promise<void> {
    return (await this.real()).putFile(key, file, opts);
  }
  async find(key: string): Promise<StoredObject | null> {
    return (await this.real()).find(key);
  }
  async open(key: string, expectedLength: number, start?: number, end?: number): Promise<FileRange> {
    return (await this.real()).open(key, expectedLength, start, end);
  }
  async size(key: string): Promise<number | null> {
    return (await this.real()).size(key);
  }
  async exists(key: string): Promise<boolean> {
    return (await this.real()).exists(key);
  }
  async delete(key: string): Promise<void> {
    return (await this.real()).delete(key);
  }
  async deletePrefix(prefix: string): Promise<void> {
    return (await this.real()).deletePrefix(prefix);
  }
  async close(): Promise<void> {
    if (this.loading) await (await this.loading).close();
  }
}
