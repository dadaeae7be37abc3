// The media store on local disk under media_store_path, behind the MediaBackend seam: a file reaches its
// place by rename (whole, atomic on one file system), is read with file-range.ts and served straight
// from disk. This is the default store and the fast path: one stat to find a file, no copies.
import { createWriteStream } from "node:fs";
import { copyFile, rename, rm, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { MediaBackend, StoredObject } from "./backend.ts";
import { openFileRange, type FileRange } from "./file-range.ts";
import { unlinkQuietly, type MediaFiles } from "./files.ts";

export class LocalBackend implements MediaBackend {
  readonly isLocalDisk = true;
  readonly description: string;
  constructor(private readonly files: MediaFiles) {
    this.description = `local disk ${files.root}`;
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>): Promise<void> {
    const tmp = await this.files.tempPath();
    try {
      await pipeline(body, createWriteStream(tmp, { flags: "wx" }));
      await this.putFile(key, tmp, { move: true });
    } finally {
      await unlinkQuietly(tmp);
    }
  }

  async putFile(key: string, file: string, opts: { move: boolean }): Promise<void> {
    const dest = this.files.pathOf(key);
    await this.files.ensureDirFor(dest);
    if (opts.move) {
      await rename(file, dest);
      return;
    }
    const tmp = await this.files.tempPath();
    try {
      await copyFile(file, tmp);
      await rename(tmp, dest);
    } finally {
      await unlinkQuietly(tmp);
    }
  }

  find(key: string): Promise<StoredObject | null> {
    const file = this.files.pathOf(key);
    return stat(file).then(
      (st) => ({ length: st.size, localPath: file, open: (start?: number, end?: number) => openFileRange(file, st.size, start, end) }),
      () => null,
    );
  }

  open(key: string, expectedLength: number, start?: number, end?: number): Promise<FileRange> {
    return openFileRange(this.files.pathOf(key), expectedLength, start, end);
  }

  size(key: string): Promise<number | null> {
    return stat(this.files.pathOf(key)).then((st) => st.size, () => null);
  }

  async exists(key: string): Promise<boolean> {
    return (await this.size(key)) !== null;
  }

  delete(key: string): Promise<void> {
    return unlinkQuietly(this.files.pathOf(key));
  }

  deletePrefix(prefix: string): Promise<void> {
    // Prefixes are folders here (a thumbnail folder ends in "/").
    return rm(this.files.pathOf(prefix), { recursive: true, force: true });
  }

  async close(): Promise<void> {}
}
