// The seam between the media repository and where its bytes live: a small store of named objects
// (keys are media-store-relative paths, files.ts) that can take a stream or a finished file whole, hand
// back a byte range, tell an object's size, and delete one object or every object under a prefix. The
// local disk (local-backend.ts) and S3-compatible buckets (s3-backend.ts) implement it; storage.ts
// decides which of them a file goes to and is read from.
import type { Readable } from "node:stream";
import type { FileRange } from "./file-range.ts";

/** An object found in a store: its length, and how to read [start, end] of it (first chunk read before it resolves). */
export interface StoredObject {
  length: number;
  /** The object's file when it is on local disk (sharp reads it in place), else null. */
  localPath: string | null;
  open(start?: number, end?: number): Promise<FileRange>;
}

export interface MediaBackend {
  /** For logs: "local disk /srv/media" or "s3://bucket/prefix". */
  readonly description: string;
  /** Whether this is the local disk (files can be moved in by rename and read in place). */
  readonly isLocalDisk: boolean;
  /** Stores `body` under `key`, whole or not at all (a failed or cut stream leaves nothing). */
  put(key: string, body: Readable | AsyncIterable<Uint8Array>, opts?: { length?: number; contentType?: string }): Promise<void>;
  /** Stores the finished file `file` under `key`; with `move` a local store may rename it into place. */
  putFile(key: string, file: string, opts: { move: boolean; contentType?: string }): Promise<void>;
  /** The object `key`, or null when there is none. */
  find(key: string): Promise<StoredObject | null>;
  /** Reads [start, end] (inclusive) of `key`, expected to be `expectedLength` long; 404 M_NOT_FOUND when missing. */
  open(key: string, expectedLength: number, start?: number, end?: number): Promise<FileRange>;
  size(key: string): Promise<number | null>;
  exists(key: string): Promise<boolean>;
  /** Removes `key` (a missing one is fine). */
  delete(key: string): Promise<void>;
  /** Removes every object whose key starts with `prefix`. */
  deletePrefix(prefix: string): Promise<void>;
  close(): Promise<void>;
}
