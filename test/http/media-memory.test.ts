// A 100 MB upload streams to disk: the server's resident memory (RSS) must not grow by more than 40 MB
// while it is received. The server runs in its own process (`weft start`, as operators run it) so the
// reading is its own and not the test runner's; RSS comes from /proc/<pid>/status, sampled every 20 ms
// while the upload is in flight. The baseline is the highest RSS seen during three 40 MB warm-up uploads:
// measured here, the first tens of megabytes a process streams raise its RSS by 15-30 MB once — socket
// read buffers are garbage collected only after V8 sees tens of megabytes of external memory, and malloc
// keeps what they used for reuse — after which further 100 MB uploads add 0-2 MB. So the test checks what
// streaming promises — a 100 MB upload needs no more memory than a 40 MB one did, within 40 MB — while a
// server buffering the body would grow by 100 MB. (Alone, the growth reads 0-10 MB on Node 24; beside the
// rest of the suite on two cores, V8 collects the read buffers later and 25-30 MB was seen.)
// On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startBenchServer, type BenchServer } from "../../bench/homeserver.ts";
import { sampledRss, uploadStream } from "../helpers/media-memory.ts";

const TOTAL = 100 * 1024 * 1024;

describe.each(backends())("a 100 MB upload on %s", (backend) => {
  let hs: BenchServer;
  let token: string;
  beforeAll(async () => {
    hs = await startBenchServer(backend, { config: { max_upload_size: "200M" } });
    token = await hs.register("uploader");
  });
  afterAll(async () => {
    await hs?.stop();
  });

  it("streams to disk without the server's RSS growing by more than 40 MB", async () => {
    const [, warm] = await sampledRss(hs, async () => {
      for (let i = 0; i < 3; i++) expect((await uploadStream(hs.base, token, 40 * 1024 * 1024)).status).toBe(200);
    });
    const baseline = Math.max(warm, hs.rssBytes());
    const [up, peak] = await sampledRss(hs, () => uploadStream(hs.base, token, TOTAL));
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const growth = peak - baseline;
    console.log(`RSS baseline ${(baseline / 2 ** 20).toFixed(1)} MB, peak ${(peak / 2 ** 20).toFixed(1)} MB, growth ${(growth / 2 ** 20).toFixed(1)} MB`);
    expect(growth).toBeLessThan(40 * 1024 * 1024);

    // The whole file arrived: its last bytes and total size through a range request.
    const id = up.json.content_uri.split("/").pop();
    const tail = await fetch(`${hs.base}/_matrix/client/v1/media/download/bench.local/${id}`, { headers: { authorization: `Bearer ${token}`, range: "bytes=-4" } });
    expect([tail.status, tail.headers.get("content-range")]).toEqual([206, `bytes ${TOTAL - 4}-${TOTAL - 1}/${TOTAL}`]);
    expect([...new Uint8Array(await tail.arrayBuffer())]).toEqual([42, 42, 42, 42]);
  });
});
