/** The whole body as text, or undefined when it is longer than `maxBytes` (the stream is destroyed). */
export async function readCappedText(body, maxBytes) {
    const chunks = [];
    let size = 0;
    for await (const chunk of body) {
        size += chunk.length;
        if (size > maxBytes) {
            body.destroy();
            return undefined;
        }
        chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString("utf8");
}
