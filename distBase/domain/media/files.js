// Where media lives on disk under media_store_path: local content, the cache of remote content, their
// thumbnails, and a tmp folder for files being written (a file reaches its place only by rename, whole).
// Ids are validated before they get here (ids.ts); directories are sharded by a hash of the id.
import { createHash, randomBytes } from "node:crypto";
import { mkdir, rm, unlink } from "node:fs/promises";
import path from "node:path";
export class MediaFiles {
    root;
    localOrigin;
    constructor(root, localOrigin) {
        this.root = root;
        this.localOrigin = localOrigin;
    }
    shard(ref, kind) {
        const h = createHash("sha256").update(ref.mediaId).digest("hex");
        const base = ref.origin === this.localOrigin ? `local_${kind}` : path.join(`remote_${kind}`, encodeURIComponent(ref.origin));
        return path.join(this.root, base, h.slice(0, 2), h.slice(2, 4));
    }
    contentPath(ref) {
        return path.join(this.shard(ref, "content"), ref.mediaId);
    }
    thumbnailDir(ref) {
        return path.join(this.shard(ref, "thumbnails"), ref.mediaId);
    }
    thumbnailPath(ref, t) {
        const type = t.mediaType.replace("/", "-");
        return path.join(this.thumbnailDir(ref), `${t.width}-${t.height}-${type}-${t.method}${t.animated ? "-animated" : ""}`);
    }
    /** A fresh temporary file name (same file system as the store, so rename is atomic). */
    async tempPath() {
        const dir = path.join(this.root, "tmp");
        await mkdir(dir, { recursive: true });
        return path.join(dir, randomBytes(12).toString("hex"));
    }
    async ensureDirFor(file) {
        await mkdir(path.dirname(file), { recursive: true });
    }
    /** Removes a media item's content and thumbnails (missing files are fine). */
    async remove(ref) {
        await unlinkQuietly(this.contentPath(ref));
        await rm(this.thumbnailDir(ref), { recursive: true, force: true });
    }
}
export async function unlinkQuietly(file) {
    try {
        await unlink(file);
    }
    catch (err) {
        if (err.code !== "ENOENT")
            throw err;
    }
}
