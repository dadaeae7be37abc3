// Which store a media file goes to and is read from (config: media_store, media_storage_providers).
// The primary store takes every file: local disk under media_store_path (a rename), or a bucket
// (media_store.backend: s3). Providers (Synapse's media_storage_providers) take a copy of local media
// (store_local) and of cached remote media (store_remote), before the client is answered
// (store_synchronous) or in the background. Reads try the primary store, then each provider in order;
// a file only a provider holds is streamed from it, and fetched back to local disk when a thumbnail must
// be rendered from it, as Synapse does. With a bucket as primary store, files still on local disk from
// before the switch are read last. Deletes reach every store: the buckets first, so one that cannot
// be reached fails the delete and changes nothing. With local disk alone (the default) every call goes
// straight to the local store: no extra lookups, no copies.
import { createWriteStream } from "node:fs";
import { rename } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import type { Logger } from "pino";
import type { MediaBackend, StoredObject } from "./backend.ts";
import { unlinkQuietly, type MediaFiles } from "./files.ts";
import type { MediaRef } from "./ids.ts";
import { LocalBackend } from "./local-backend.ts";

export interface ProviderSlot {
  backend: MediaBackend;
  storeLocal: boolean;
  storeRemote: boolean;
  synchronous: boolean;
}

/** A local file holding an object's bytes, valid until release(). */
export interface HeldFile {
  path: string;
  release(): Promise<void>;
}

const NOTHING_TO_RELEASE = async () => {};

export class MediaStorage {
  /** Uploads to asynchronous providers still running (awaited on shutdown). */
  private readonly background = new Set<Promise<unknown>>();
  /** Local disk alone: every call is the local store's own. */
  readonly simple: boolean;
  /** Stores off this machine (the primary one if it is a bucket, and the providers). */
  private readonly remote: MediaBackend[];
  /**
   * Read last when a bucket is the primary store: files still on local disk from before the switch (a
   * server moved to a bucket keeps serving its old media until they are copied up).
   */
  private readonly leftOnDisk: MediaBackend | null;

  constructor(readonly files: MediaFiles, readonly primary: MediaBackend, readonly providers: ProviderSlot[], private readonly log: Logger) {
    this.simple = primary.isLocalDisk && providers.length === 0;
    this.remote = [primary, ...providers.map((p) => p.backend)].filter((b) => !b.isLocalDisk);
    this.leftOnDisk = primary.isLocalDisk ? null : new LocalBackend(files);
  }

  /**
   * Makes the finished scratch file `tmp` the object `key`: in the primary store (moved in on local disk,
   * uploaded to a bucket), then in the providers that take it. Returns a local file of the bytes (for
   * thumbnails) until release(). When the primary store or a synchronous provider fails, whatever was
   * stored is removed again, the scratch file too, and the error (502 M_UNKNOWN for a bucket) thrown.
   */
  async adopt(key: string, tmp: string, o: { local: boolean; contentType?: string }): Promise<HeldFile> {
    let held: HeldFile;
    try {
      if (this.primary.isLocalDisk) {
        await this.primary.putFile(key, tmp, { move: true });
        held = { path: this.files.pathOf(key), release: NOTHING_TO_RELEASE };
      } else {
        await this.primary.putFile(key, tmp, { move: false, contentType: o.contentType });
        held = { path: tmp, release: () => unlinkQuietly(tmp) };
      }
    } catch (err) {
      await unlinkQuietly(tmp);
      throw err;
    }
    if (this.providers.length === 0) return held;
    const slots = this.providers.filter((p) => (o.local ? p.storeLocal : p.storeRemote));
    const done: MediaBackend[] = [this.primary];
    try {
      for (const p of slots.filter((p) => p.synchronous)) {
        await p.backend.putFile(key, held.path, { move: false, contentType: o.contentType });
        done.push(p.backend);
      }
    } catch (err) {
      for (const b of done) await b.delete(key).catch((e) => this.log.warn({ err: e, store: b.description, key }, "media store: undoing a write failed"));
      await held.release();
      throw err;
    }
    const later = slots.filter((p) => !p.synchronous).map((p) =>
      p.backend.putFile(key, held.path, { move: false, contentType: o.contentType })
        .catch((err) => this.log.warn({ err, store: p.backend.description, key }, "media store: background upload failed")));
    if (later.length === 0) return held;
    const all = Promise.all(later);
    this.track(all);
    // The scratch file (a bucket as primary store) outlives the caller until the background uploads read it.
    return held.release === NOTHING_TO_RELEASE ? held : { path: held.path, release: async () => void this.track(all.then(() => unlinkQuietly(tmp))) };
  }

  private track(p: Promise<unknown>): Promise<unknown> {
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
    return p;
  }

  /** The object `key` in the first store holding it, or null. */
  find(key: string): Promise<StoredObject | null> {
    return this.simple ? this.primary.find(key) : this.findAnywhere(key);
  }

  private async findAnywhere(key: string): Promise<StoredObject | null> {
    const hit = await this.primary.find(key);
    if (hit) return hit;
    for (const p of this.providers) {
      const found = await p.backend.find(key);
      if (found) return found;
    }
    return this.leftOnDisk ? this.leftOnDisk.find(key) : null;
  }

  /**
   * Runs `fn` on a local file of `obj` (stored as `key`): the file itself on local disk; else it is
   * fetched back (streamed) into the local store when that is the primary one, or into a scratch file
   * removed afterwards.
   */
  async withLocalFile<T>(key: string, obj: StoredObject, fn: (path: string) => Promise<T>): Promise<T> {
    if (obj.localPath !== null) return fn(obj.localPath);
    const tmp = await this.files.tempPath();
    try {
      const range = await obj.open();
      await pipeline(range.chunks, createWriteStream(tmp, { flags: "wx" }));
      if (this.primary.isLocalDisk) {
        const dest = this.files.pathOf(key);
        await this.files.ensureDirFor(dest);
        await rename(tmp, dest);
        return await fn(dest);
      }
      return await fn(tmp);
    } finally {
      await unlinkQuietly(tmp);
    }
  }

  /** Removes `ref`'s content and thumbnails from every bucket (throws, 502, if one cannot be reached). */
  async removeRemote(ref: MediaRef): Promise<void> {
    for (const b of this.remote) {
      await b.deletePrefix(this.files.thumbnailPrefix(ref));
      await b.delete(this.files.contentKey(ref));
    }
  }

  /** Whether deletes must reach a bucket before the row goes. */
  get hasRemote(): boolean {
    return this.remote.length > 0;
  }

  /** Removes `ref`'s content and thumbnails from local disk (missing files are fine). */
  removeLocal(ref: MediaRef): Promise<void> {
    return this.files.remove(ref);
  }

  /** Waits for background uploads, then lets the stores go. */
  async close(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
    for (const b of [this.primary, ...this.providers.map((p) => p.backend)]) await b.close();
  }

  /** Resolves when no background upload is running (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
  }
}
