// Writes a byte stream to a temporary file in the media store, counting bytes as they pass: past the
// limit it stops reading and fails with M_TOO_LARGE. Any failure (limit, client abort, a truncated body,
// a disk error) removes the temporary file, so nothing is left behind.
import { createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { MatrixError } from "../errors.js";
import { unlinkQuietly } from "./files.js";
export function tooLarge(limit) {
    return new MatrixError("M_TOO_LARGE", `Upload request body is too large (the limit is ${limit} bytes)`, 413);
}
/** Streams `source` into a new temp file; the caller renames or removes it. */
export async function writeToTemp(files, source, limit, makeTooLarge = tooLarge) {
    const file = await files.tempPath();
    let size = 0;
    // Reading stops at the limit without destroying the source: an HTTP request body stays open so the
    // 413 can still be answered on its connection.
    const chunks = "iterator" in source && typeof source.iterator === "function" ? source.iterator({ destroyOnReturn: false }) : source;
    async function* counted() {
        for await (const chunk of chunks) {
            size += chunk.length;
            if (size > limit)
                throw makeTooLarge(limit);
            yield chunk;
        }
    }
    try {
        await pipeline(counted, createWriteStream(file, { flags: "wx" }));
    }
    catch (err) {
        await unlinkQuietly(file);
        if (err instanceof MatrixError)
            throw err;
        // The sender went away mid-body (a truncated or abandoned upload): nobody is left to answer.
        const code = err.code;
        if (code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || code === "ECONNABORTED")
            throw new MatrixError("M_UNKNOWN", "The upload was interrupted", 400);
        throw err;
    }
    return { path: file, size };
}
