// The layout of the media store: local content, the cache of remote content, their thumbnails (keys
// relative to media_store_path, the same keys name objects in a bucket), and a tmp folder for files being
// written (a file reaches its place only by rename, whole). Ids are validated before they get here
// (ids.ts); directories are sharded by a hash of the id.
import { createHash, randomBytes } from "node:crypto";
import { mkdir, rm, unlink } from "node:fs/promises";
import path from "node:path";
import type { MediaRef } from "./ids.ts";

export interface ThumbnailKey {
  width: number;
  height: number;
  method: string;
  mediaType: string;
  animated: boolean;
}

export class MediaFiles {
  constructor(readonly root: string, private readonly localOrigin: string) {}

  /** The folder of a media item's kind, relative to the store ("/"-separated: also the object key in a bucket). */
  private shard(ref: MediaRef, kind: "content" | "thumbnails"): string {
    const h = createHash("sha256").update(ref.mediaId).digest("hex");
    const base = ref.origin === this.localOrigin ? `local_${kind}` : `remote_${kind}/${encodeURIComponent(ref.origin)}`;
    return `${base}/${h.slice(0, 2)}/${h.slice(2, 4)}`;
  }

  isLocal(ref: MediaRef): boolean {
    return ref.origin === this.localOrigin;
  }

  /** The content's key (its path relative to the store, and its object key in a bucket after the prefix). */
  contentKey(ref: MediaRef): string {
    return `${this.shard(ref, "content")}/${ref.mediaId}`;
  }

  /** The folder holding every thumbnail of `ref`, ending in "/". */
  thumbnailPrefix(ref: MediaRef): string {
    return `${this.shard(ref, "thumbnails")}/${ref.mediaId}/`;
  }

  thumbnailKey(ref: MediaRef, t: ThumbnailKey): string {
    const type = t.mediaType.replace("/", "-");
    return `${this.thumbnailPrefix(ref)}${t.width}-${t.height}-${type}-${t.method}${t.animated ? "-animated" : ""}`;
  }

  /** The local file of a key. */
  pathOf(key: string): string {
    return path.join(this.root, key);
  }

  contentPath(ref: MediaRef): string {
    return this.pathOf(this.contentKey(ref));
  }

  thumbnailDir(ref: MediaRef): string {
    return this.pathOf(this.thumbnailPrefix(ref));
  }

  thumbnailPath(ref: MediaRef, t: ThumbnailKey): string {
    return this.pathOf(this.thumbnailKey(ref, t));
  }

  /** A fresh temporary file name (same file system as the store, so rename is atomic). */
  async tempPath(): Promise<string> {
    const dir = path.join(this.root, "tmp");
    await mkdir(dir, { recursive: true });
    return path.join(dir, randomBytes(12).toString("hex"));
  }

  async ensureDirFor(file: string): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
  }

  /** Removes a media item's content and thumbnails (missing files are fine). */
  async remove(ref: MediaRef): Promise<void> {
    await unlinkQuietly(this.contentPath(ref));
    await rm(this.thumbnailDir(ref), { recursive: true, force: true });
  }
}

export async function unlinkQuietly(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
