export class MultipartError extends Error {
    constructor(message) {
        super(`Invalid multipart answer: ${message}`);
        this.name = "MultipartError";
    }
}
/** Caps of the small pieces (the file part is as large as the caller's own cap allows). */
const MAX_PREAMBLE = 4096;
const MAX_HEADERS = 16 * 1024;
const MAX_JSON_PART = 64 * 1024;
const MAX_EPILOGUE = 4096;
const CRLF = Buffer.from("\r\n");
/** The boundary of a `multipart/mixed` Content-Type, or undefined when it is not one. */
export function multipartBoundary(contentType) {
    if (!contentType)
        return undefined;
    const [type, ...params] = contentType.split(";");
    if (type.trim().toLowerCase() !== "multipart/mixed")
        return undefined;
    for (const p of params) {
        const eq = p.indexOf("=");
        if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== "boundary")
            continue;
        let value = p.slice(eq + 1).trim();
        if (value.startsWith('"') && value.endsWith('"') && value.length >= 2)
            value = value.slice(1, -1);
        // RFC 2046: 1 to 70 characters of bchars, not ending in a space.
        if (/^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/.test(value))
            return value;
        return undefined;
    }
    return undefined;
}
/**
 * Pulls bytes from a stream on demand, keeping what was read but not consumed in one buffer that grows by
 * doubling (many tiny chunks cost linear time, not quadratic). What it hands out is copied: the buffer is
 * reused as reading goes on.
 */
class ByteReader {
    store = Buffer.alloc(0);
    start = 0;
    end = 0;
    done = false;
    it;
    constructor(source) {
        this.it = source[Symbol.asyncIterator]();
    }
    /** The bytes read and not yet consumed (a view: valid until the next read). */
    get buffered() {
        return this.store.subarray(this.start, this.end);
    }
    /** Consumes `n` buffered bytes, returning a copy of them. */
    consume(n) {
        const out = Buffer.from(this.store.subarray(this.start, this.start + n));
        this.start += n;
        return out;
    }
    /** Reads one more chunk; false at the end of the stream. */
    async more() {
        if (this.done)
            return false;
        const r = await this.it.next();
        if (r.done) {
            this.done = true;
            return false;
        }
        const chunk = Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value);
        const held = this.end - this.start;
        if (this.end + chunk.length > this.store.length) {
            // Grow when over half full, else move what is held to the front.
            const next = held + chunk.length > this.store.length / 2 ? Buffer.allocUnsafe(Math.max(4096, 2 * (held + chunk.length))) : this.store;
            this.store.copy(next, 0, this.start, this.end);
            this.store = next;
            this.start = 0;
            this.end = held;
        }
        chunk.copy(this.store, this.end);
        this.end += chunk.length;
        return true;
    }
    /** Consumes and returns the bytes before `delim` (dropping `delim` itself), reading at most `max` before it. */
    async until(delim, max, what) {
        let from = 0;
        for (;;) {
            const view = this.buffered;
            const at = view.indexOf(delim, from);
            if (at >= 0) {
                if (at > max)
                    throw new MultipartError(`${what} is too large`);
                const out = this.consume(at);
                this.start += delim.length;
                return out;
            }
            if (view.length > max + delim.length)
                throw new MultipartError(`${what} is too large`);
            from = Math.max(0, view.length - delim.length + 1);
            if (!(await this.more()))
                throw new MultipartError(`the answer ended inside ${what}`);
        }
    }
    /** Consumes `n` bytes (reading as needed). */
    async take(n, what) {
        while (this.end - this.start < n)
            if (!(await this.more()))
                throw new MultipartError(`the answer ended inside ${what}`);
        return this.consume(n);
    }
    /**
     * Bytes up to `delim`, yielded as they arrive; the delimiter is consumed, not yielded, and what follows
     * it (the closing "--", an epilogue) is read and dropped, up to `maxAfter` bytes.
     */
    async *stream(delim, what, maxAfter) {
        let from = 0;
        for (;;) {
            const view = this.buffered;
            const at = view.indexOf(delim, from);
            if (at >= 0) {
                if (at > 0)
                    yield this.consume(at);
                let after = this.end - this.start - delim.length;
                this.start = this.end;
                while (after <= maxAfter && (await this.more())) {
                    after += this.end - this.start;
                    this.start = this.end;
                }
                return;
            }
            // Everything but a possible start of the delimiter can go.
            const safe = view.length - (delim.length - 1);
            if (safe > 0)
                yield this.consume(safe);
            from = 0;
            if (!(await this.more()))
                throw new MultipartError(`the answer ended inside ${what}`);
        }
    }
}
/** A part's header block (empty when the part starts with its blank line), consumed with that blank line. */
async function readHeaders(r, what) {
    while (r.buffered.length < 2)
        if (!(await r.more()))
            throw new MultipartError(`the answer ended inside ${what}`);
    if (r.buffered.subarray(0, 2).equals(CRLF)) {
        await r.take(2, what);
        return {};
    }
    return parseHeaders(await r.until(Buffer.from("\r\n\r\n"), MAX_HEADERS, what));
}
function parseHeaders(block) {
    const out = {};
    const text = block.toString("latin1");
    if (text === "")
        return out;
    for (const line of text.split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon <= 0)
            throw new MultipartError("a part header line is malformed");
        out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    return out;
}
/**
 * Reads the two parts of a federation media answer. The file part's body is the rest of the answer: read
 * it to its end (which also reads the closing delimiter), or destroy the source.
 */
export async function readMediaMultipart(source, boundary) {
    const r = new ByteReader(source);
    const dash = Buffer.from(`--${boundary}`);
    const delimiter = Buffer.concat([CRLF, dash]);
    // The first boundary may start the body (no preamble) or follow a preamble and CRLF.
    await r.until(dash, MAX_PREAMBLE, "the preamble");
    if (!(await r.take(2, "a boundary")).equals(CRLF))
        throw new MultipartError("the first part is missing");
    const jsonHeaders = await readHeaders(r, "the JSON part's headers");
    const type = jsonHeaders["content-type"]?.split(";")[0]?.trim().toLowerCase();
    if (type !== undefined && type !== "application/json")
        throw new MultipartError(`the first part is ${type}, not JSON`);
    const jsonBytes = await r.until(delimiter, MAX_JSON_PART, "the JSON part");
    let metadata;
    try {
        metadata = JSON.parse(jsonBytes.toString("utf8"));
    }
    catch {
        throw new MultipartError("the first part is not JSON");
    }
    if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))
        throw new MultipartError("the first part is not a JSON object");
    if (!(await r.take(2, "a boundary")).equals(CRLF))
        throw new MultipartError("the file part is missing");
    const fileHeaders = await readHeaders(r, "the file part's headers");
    return { metadata: metadata, file: { headers: fileHeaders, body: r.stream(delimiter, "the file part", MAX_EPILOGUE) } };
}
/** The filename of a Content-Disposition value (RFC 6266: filename*=utf-8''… preferred over filename=). */
export function dispositionFilename(value) {
    if (!value)
        return null;
    const star = /(?:^|;)\s*filename\*\s*=\s*utf-8''([^;\s]+)/i.exec(value);
    if (star) {
        try {
            return decodeURIComponent(star[1]);
        }
        catch {
            return null;
        }
    }
    const plain = /(?:^|;)\s*filename\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]+)/i.exec(value);
    if (!plain)
        return null;
    const v = plain[1];
    return v.startsWith('"') ? v.slice(1, -1).replace(/\\(.)/g, "$1") : v;
}
