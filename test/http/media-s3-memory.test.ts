// A 100 MB upload to, and download from, an S3 bucket as the primary store (media_store.backend: s3,
// s3rver in the test process) streams: the server — `weft start` in its own process, configured by a
// homeserver.yaml as operators run it — must not grow its resident memory (RSS) by more than 40 MB while
// the body goes to a scratch file and up to the bucket in 8 MiB multipart parts, nor while the object is
// streamed back out of the bucket. The method is media-memory.test.ts's: the baseline is the peak of
// three 40 MB warm-up uploads and downloads, so 100 MB may need no more memory than 40 MB did, within
// 40 MB, while a server buffering the body would grow by 100 MB. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startBenchServer, type BenchServer } from "../../bench/homeserver.ts";
import { downloadCounted, sampledRss, uploadStream } from "../helpers/media-memory.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";

const TOTAL = 100 * 1024 * 1024;

describe.each(backends())("a 100 MB upload to an S3 bucket on %s", (backend) => {
  let s3: TestS3;
  let hs: BenchServer;
  let token: string;
  beforeAll(async () => {
    s3 = await startS3();
    hs = await startBenchServer(backend, { config: { max_upload_size: "200M", media_store: { backend: "s3", ...s3.options("big/") } } });
    token = await hs.register("uploader");
  });
  afterAll(async () => {
    await hs?.stop();
    await s3?.close();
  });

  it("streams up and back down without the server's RSS growing by more than 40 MB", async () => {
    const [, warm] = await sampledRss(hs, async () => {
      for (let i = 0; i < 3; i++) {
        const w = await uploadStream(hs.base, token, 40 * 1024 * 1024);
        expect(w.status).toBe(200);
        expect(await downloadCounted(hs, token, w.json.content_uri.split("/").pop())).toEqual({ status: 200, n: 40 * 1024 * 1024, last: 42 });
      }
    });
    const baseline = Math.max(warm, hs.rssBytes());
    const [up, peak] = await sampledRss(hs, () => uploadStream(hs.base, token, TOTAL));
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const growth = peak - baseline;
    console.log(`upload: RSS baseline ${(baseline / 2 ** 20).toFixed(1)} MB, peak ${(peak / 2 ** 20).toFixed(1)} MB, growth ${(growth / 2 ** 20).toFixed(1)} MB`);
    expect(growth).toBeLessThan(40 * 1024 * 1024);
    const id = up.json.content_uri.split("/").pop();
    const objects = await s3.keys("big/local_content/");
    expect(objects.filter((k) => k.endsWith(`/${id}`)).length).toBe(1);

    // Back down: the whole object streams through (counted, not kept), and its last bytes by range.
    const [got, downPeak] = await sampledRss(hs, () => downloadCounted(hs, token, id));
    expect(got).toEqual({ status: 200, n: TOTAL, last: 42 });
    console.log(`download: peak ${(downPeak / 2 ** 20).toFixed(1)} MB, growth ${((downPeak - baseline) / 2 ** 20).toFixed(1)} MB`);
    expect(downPeak - baseline).toBeLessThan(40 * 1024 * 1024);
    const tail = await fetch(`${hs.base}/_matrix/client/v1/media/download/bench.local/${id}`, { headers: { authorization: `Bearer ${token}`, range: "bytes=-4" } });
    expect([tail.status, tail.headers.get("content-range")]).toEqual([206, `bytes ${TOTAL - 4}-${TOTAL - 1}/${TOTAL}`]);
    expect([...new Uint8Array(await tail.arrayBuffer())]).toEqual([42, 42, 42, 42]);
  });
});
