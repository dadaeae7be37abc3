// Reading an untrusted HTTP response body (push gateways, application services) with a size cap: the
// stream is cut off, and undefined returned, as soon as it passes the cap, so a hostile peer cannot make
// Weft buffer an unbounded answer.
import type { Dispatcher } from "undici";

/** The whole body as text, or undefined when it is longer than `maxBytes` (the stream is destroyed). */
export async function readCappedText(body: Dispatcher.ResponseData["body"], maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
