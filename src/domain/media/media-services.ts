// The media repository's shared machinery, one per server (on Services.media): the repository, the
// file layout and the stores the files live in, who waits for which pending upload, ids being uploaded right now, in-flight remote fetches
// and thumbnail renders (each done once however many ask), and the two outside seams: the federation
// fetcher of remote media and the DNS resolver URL previews use.
import { lookup } from "node:dns/promises";
import type { Readable } from "node:stream";
import type { Sql } from "../../storage/sql.ts";
import type { Db } from "../../storage/database.ts";
import { MediaStore } from "../store/media.ts";
import { MediaFiles } from "./files.ts";
import type { Logger } from "pino";
import type { MediaConfig } from "../../config/media.ts";
import type { MediaBackend } from "./backend.ts";
import { LocalBackend } from "./local-backend.ts";
import { LazyS3Backend } from "./lazy-backend.ts";
import { MediaStorage } from "./storage.ts";

/** What the origin server answered for a remote media download. */
export interface RemoteMedia {
  /** Null when the origin sent none (served as application/octet-stream). */
  mediaType: string | null;
  /** The filename of the origin's Content-Disposition, if any. */
  uploadName: string | null;
  body: Readable | AsyncIterable<Uint8Array>;
}

/**
 * Fetches media from its origin server (Server-Server API GET /_matrix/federation/v1/media/download/
 * {mediaId}, its multipart/mixed answer unpacked, or the redirect it names followed). Throws a
 * MatrixError M_NOT_FOUND when the origin has no such media; anything else thrown means "unreachable".
 */
export interface RemoteMediaFetcher {
  download(origin: string, mediaId: string, opts: { maxBytes: number; timeoutMs: number }): Promise<RemoteMedia>;
}

/** Resolves a host name to every address it has (IPv4 and IPv6). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Wakes downloads waiting for the content of a created-but-not-yet-uploaded mxc URI. */
export class UploadSignals {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Resolves when `key` is signalled or after `ms` (true if signalled). */
  wait(key: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const set = this.waiters.get(key) ?? new Set();
      this.waiters.set(key, set);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0) this.waiters.delete(key);
        signal?.removeEventListener("abort", abort);
        resolve(ok);
      };
      const wake = () => done(true);
      const abort = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      set.add(wake);
      signal?.addEventListener("abort", abort);
    });
  }

  notify(key: string): void {
    for (const wake of [...(this.waiters.get(key) ?? [])]) wake();
  }

  /** Wakes everyone (shutdown). */
  wakeAll(): void {
    for (const key of [...this.waiters.keys()]) this.notify(key);
  }
}

/** Runs one job per key at a time; callers asking for a key already running share its result. */
export class OncePerKey<T> {
  private readonly running = new Map<string, Promise<T>>();
  run(key: string, fn: () => Promise<T>): Promise<T> {
    let p = this.running.get(key);
    if (!p) {
      p = fn().finally(() => this.running.delete(key));
      this.running.set(key, p);
    }
    return p;
  }
}

export class MediaServices {
  readonly store: MediaStore;
  readonly files: MediaFiles;
  /** Where the bytes go and come from: local disk, a bucket, storage providers (storage.ts). */
  readonly storage: MediaStorage;
  readonly uploads = new UploadSignals();
  /** Media ids whose content is being uploaded right now (PUT /upload/{serverName}/{mediaId}). */
  readonly uploading = new Set<string>();
  readonly remoteFetches = new OncePerKey<void>();
  readonly renders = new OncePerKey<unknown>();
  readonly previews = new OncePerKey<string>();
  /** Set once federation exists; without it, remote media answers as an unreachable origin does. */
  remoteFetcher: RemoteMediaFetcher | undefined;
  /** DNS for URL previews (tests map names to loopback addresses here). */
  resolver: Resolver = systemResolver;

  constructor(db: Db, sql: Sql, config: Pick<MediaConfig, "media_store_path" | "media_store" | "media_storage_providers">, serverName: string, log: Logger) {
    this.store = new MediaStore(db, sql);
    this.files = new MediaFiles(config.media_store_path, serverName);
    const primary: MediaBackend = config.media_store.backend === "s3" ? new LazyS3Backend(config.media_store.s3, log) : new LocalBackend(this.files);
    const providers = config.media_storage_providers.map((p) => ({
      backend: new LazyS3Backend(p.s3, log), storeLocal: p.store_local, storeRemote: p.store_remote, synchronous: p.store_synchronous,
    }));
    this.storage = new MediaStorage(this.files, primary, providers, log);
  }
}
