// A real S3-compatible server for media storage tests: s3rver on a free loopback port, its objects in
// a temporary folder, one bucket made at start. Tests list and read the bucket with the AWS SDK (the
// same client library the server uses), stop the server to make the endpoint unreachable and start it
// again on the same port and data.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { Agent } from "node:http";
import path from "node:path";
import S3rver from "s3rver";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { freePort } from "./net.ts";

export const S3_KEY = { access_key_id: "S3RVER", secret_access_key: "S3RVER" };

export interface TestS3 {
  bucket: string;
  endpoint: string;
  client: S3Client;
  /** `media_store` / provider `config` options naming this bucket under `prefix`. */
  options(prefix?: string): Record<string, unknown>;
  /** Every object key in the bucket (under `prefix`), sorted. */
  keys(prefix?: string): Promise<string[]>;
  /** Stops answering (connections refused) until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3(bucket = "weft-media"): Promise<TestS3> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-s3-"));
  const port = await freePort();
  let server: S3rver | undefined;
  const start = async () => {
    if (server) return;
    const s = new S3rver({ address: "127.0.0.1", port, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
    await s.run();
    server = s;
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint, region: "us-east-1", forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY.access_key_id, secretAccessKey: S3_KEY.secret_access_key },
    requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED",
    // A connection per request: the server is stopped and started under the client.
    requestHandler: { httpAgent: new Agent({ keepAlive: false }), requestTimeout: 10_000 },
  });
  const stop = async () => {
    await server?.close();
    server = undefined;
  };
  return {
    bucket,
    endpoint,
    client,
    options: (prefix = "") => ({ bucket, endpoint_url: endpoint, ...S3_KEY, ...(prefix ? { prefix } : {}) }),
    async keys(prefix = "") {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
        out.push(...(page.Contents ?? []).map((o) => o.Key!));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out.sort();
    },
    stop,
    start,
    async close() {
      client.destroy();
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
