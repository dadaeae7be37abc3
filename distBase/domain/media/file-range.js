// Reading a stored media file to serve it: opened (and checked to be a regular file of the length the
// answer will declare) and its first bytes read before anything is answered, so a missing, replaced or
// unreadable file is the spec's 404 rather than a broken answer; after that, exactly the promised bytes
// or an error — a file that shrinks or fails while it is being served never passes for a complete one.
// Spec: Client-Server API "Content repository" (downloads); Server-Server API "Content Repository".
import { open } from "node:fs/promises";
import { MatrixError, notFound } from "../errors.js";
const CHUNK = 64 * 1024;
/** Opens `path` to serve `[start, end]` of it (the whole file by default); 404 M_NOT_FOUND when it cannot. */
export async function openFileRange(path, expectedLength, start = 0, end = expectedLength - 1) {
    let fh;
    try {
        fh = await open(path, "r");
    }
    catch {
        throw notFound("Media not found");
    }
    const length = Math.max(0, end - start + 1);
    let first;
    try {
        const st = await fh.stat();
        if (!st.isFile() || st.size < expectedLength)
            throw notFound("Media not found");
        first = await readExactly(fh, start, Math.min(CHUNK, length));
    }
    catch (err) {
        await fh.close().catch(() => { });
        throw err instanceof MatrixError ? err : notFound("Media not found");
    }
    let closed = false;
    const close = async () => {
        if (closed)
            return;
        closed = true;
        await fh.close().catch(() => { });
    };
    async function* chunks() {
        try {
            if (first.length > 0)
                yield first;
            for (let at = start + first.length; at <= end;) {
                const chunk = await readExactly(fh, at, Math.min(CHUNK, end - at + 1));
                at += chunk.length;
                yield chunk;
            }
        }
        finally {
            await close();
        }
    }
    return { length, chunks: chunks(), close };
}
/** `n` bytes at `position`, or an error when the file ends first (it shrank under us). */
async function readExactly(fh, position, n) {
    const buf = Buffer.allocUnsafe(n);
    let got = 0;
    while (got < n) {
        const { bytesRead } = await fh.read(buf, got, n - got, position + got);
        if (bytesRead === 0)
            throw new Error(`the media file ended ${n - got} bytes early`);
        got += bytesRead;
    }
    return buf;
}
