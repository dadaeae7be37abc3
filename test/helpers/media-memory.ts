// What the media memory tests share (test/http/media-memory.test.ts on local disk, media-s3-memory.test.ts on
// an S3 bucket): a streamed upload of N bytes that never holds the body, an RSS sampler around a step, and a
// download that counts its bytes without keeping them.
import type { BenchServer } from "../../bench/homeserver.ts";

const CHUNK = 64 * 1024;

/** POSTs `bytes` bytes of 42s to the legacy upload route as a stream (64 KiB chunks, never one buffer). */
export async function uploadStream(base: string, token: string, bytes: number): Promise<{ status: number; json: any }> {
  async function* body() {
    const chunk = new Uint8Array(CHUNK).fill(42);
    for (let sent = 0; sent < bytes; sent += CHUNK) yield sent + CHUNK <= bytes ? chunk : chunk.subarray(0, bytes - sent);
  }
  const res = await fetch(`${base}/_matrix/media/v3/upload?filename=big.bin`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream", "content-length": String(bytes) },
    body: body() as unknown as Blob,
    duplex: "half",
  } as RequestInit);
  return { status: res.status, json: await res.json() };
}

/** Runs `fn` while sampling the server's RSS every 20 ms; returns fn's result and the peak seen. */
export async function sampledRss<T>(hs: BenchServer, fn: () => Promise<T>): Promise<[T, number]> {
  let peak = hs.rssBytes();
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, hs.rssBytes());
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let result: T;
  try {
    result = await fn();
  } finally {
    done = true;
    await sampler;
  }
  return [result, Math.max(peak, hs.rssBytes())];
}

/** Downloads `id` of bench.local whole, counting (not keeping) its bytes; `last` is its final byte. */
export async function downloadCounted(hs: BenchServer, token: string, id: string): Promise<{ status: number; n: number; last: number }> {
  const res = await fetch(`${hs.base}/_matrix/client/v1/media/download/bench.local/${id}`, { headers: { authorization: `Bearer ${token}` } });
  let n = 0;
  let last = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    n += chunk.length;
    last = chunk[chunk.length - 1]!;
  }
  return { status: res.status, n, last };
}
