// Moving an existing media store into buckets (Synapse's s3_media_upload script, as a Weft command:
// `weft media-upload`): every file under media_store_path's content and thumbnail folders is uploaded,
// under its relative path as key, to the buckets that should hold it — the primary store when it is a
// bucket (media_store.backend: s3), and the storage providers that take local (store_local) or remote
// (store_remote) media — unless an object of the same size is there already. With deleteLocal, a file
// is removed from disk once every bucket holds it. Runs beside a running server (uploads are whole or
// absent; a file is deleted only after its upload), and again after an interruption.
import { readdir, stat } from "node:fs/promises";
import type { Logger } from "pino";
import type { MediaConfig } from "../../config/media.ts";
import type { MediaBackend } from "./backend.ts";
import { MediaFiles, unlinkQuietly } from "./files.ts";
import { LazyS3Backend } from "./lazy-backend.ts";

export interface CopyResult {
  /** Files uploaded now. */
  uploaded: number;
  /** Files every bucket had already. */
  present: number;
  /** Files removed from local disk (deleteLocal). */
  deleted: number;
}

const FOLDERS = [["local_content", true], ["local_thumbnails", true], ["remote_content", false], ["remote_thumbnails", false]] as const;

async function* filesUnder(root: string, dir: string): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(`${root}/${dir}`, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) yield* filesUnder(root, rel);
    else if (e.isFile()) yield rel;
  }
}

/** The buckets configured, and which of them take local and remote media. Throws when there is none. */
function targets(config: MediaConfig, log: Logger): { local: MediaBackend[]; remote: MediaBackend[]; all: MediaBackend[] } {
  const primary = config.media_store.backend === "s3" ? [new LazyS3Backend(config.media_store.s3, log)] : [];
  const providers = config.media_storage_providers.map((p) => ({ p, b: new LazyS3Backend(p.s3, log) }));
  const local = [...primary, ...providers.filter(({ p }) => p.store_local).map(({ b }) => b)];
  const remote = [...primary, ...providers.filter(({ p }) => p.store_remote).map(({ b }) => b)];
  return { local, remote, all: [...primary, ...providers.map(({ b }) => b)] };
}

export async function copyLocalMediaToBuckets(
  config: MediaConfig & { server_name: string },
  log: Logger,
  opts: { deleteLocal: boolean; progress?: (key: string, what: "uploaded" | "present") => void },
): Promise<CopyResult> {
  const files = new MediaFiles(config.media_store_path, config.server_name);
  const t = targets(config, log);
  if (t.local.length === 0 && t.remote.length === 0) throw new Error("no bucket takes media: set media_store.backend to s3, or media_storage_providers with store_local or store_remote");
  const out: CopyResult = { uploaded: 0, present: 0, deleted: 0 };
  try {
    for (const [folder, isLocal] of FOLDERS) {
      const buckets = isLocal ? t.local : t.remote;
      if (buckets.length === 0) continue;
      for await (const key of filesUnder(files.root, folder)) {
        const file = files.pathOf(key);
        const { size } = await stat(file);
        let uploaded = false;
        for (const b of buckets) {
          if ((await b.size(key)) === size) continue;
          await b.putFile(key, file, { move: false });
          uploaded = true;
        }
        if (uploaded) out.uploaded++;
        else out.present++;
        opts.progress?.(key, uploaded ? "uploaded" : "present");
        if (opts.deleteLocal) {
          await unlinkQuietly(file);
          out.deleted++;
        }
      }
    }
  } finally {
    for (const b of t.all) await b.close();
  }
  return out;
}
