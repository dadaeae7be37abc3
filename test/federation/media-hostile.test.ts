// Media over federation when a stream fails mid-flight, on SQLite and PostgreSQL. The client download path:
// a hostile origin cuts its multipart answer (or the legacy plain one) in the middle of the file, or
// stops sending — the client gets the status Synapse uses for a failed remote fetch (502 with an errcode),
// nothing is cached (no row, no file, no temp file), no "unhandled error" is logged, and the same media
// downloads whole once the origin answers honestly. The local re-serve: our own media file failing while
// it is streamed to another server (or to a client) aborts that response cleanly — never a second answer
// after headers went out, never a Fastify FST_ERR_* in the log.
import { mkdir, rm, truncate, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetch as undiciFetch } from "undici";
import { backends, insecureAgent } from "../helpers/server.ts";
import { signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { json, mediaMultipart, startHostilePeer, type HostilePeer } from "../helpers/hostile-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { storeFiles } from "../helpers/media.ts";
import { capturedLog, type CapturedLog } from "../helpers/captured-log.ts";

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer; json: any; error?: string }> {
  try {
    const res = await undiciFetch(url, { headers, dispatcher: insecureAgent });
    const body = Buffer.from(await res.arrayBuffer());
    let parsed: any;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body, json: parsed };
  } catch (err) {
    return { status: 0, body: Buffer.alloc(0), json: undefined, error: String((err as Error).cause ?? err) };
  }
}

describe.each(backends())("media streams failing mid-flight on %s", (backend) => {
  let a: FederatedServer;
  let peer: HostilePeer;
  let alice: Session;
  let log: CapturedLog;

  beforeAll(async () => {
    log = capturedLog();
    peer = await startHostilePeer();
    a = await startFederatedServer({ backend, log: log.logger, config: { max_upload_size: "32M" } });
    alice = await registerUser(a, "alice");
  });
  afterAll(async () => {
    await Promise.all([a?.close(), peer?.close()]);
  });

  const download = (mediaId: string, q = "") => get(`${a.baseUrl}/_matrix/client/v1/media/download/${peer.serverName}/${mediaId}${q}`, { authorization: `Bearer ${alice.access_token}` });
  const nothingCached = async (mediaId: string) => {
    expect(await a.hs.services.db.media.count({ where: { origin: peer.serverName, mediaId } })).toBe(0);
    expect(storeFiles(a).tmp).toEqual([]);
    expect(storeFiles(a).all.filter((f) => f.includes(mediaId))).toEqual([]);
  };

  it("an origin that cuts its multipart answer mid-file: 502 with an errcode, nothing cached, then the whole file once it answers", async () => {
    const file = randomBytes(600 * 1024);
    const whole = mediaMultipart(file, "application/x-test");
    const cut = whole.body.subarray(0, 300 * 1024);
    for (const [i, then] of [["cutClose", "close"], ["cutAgain", "close"]] as const) {
      peer.answer = () => ({ kind: "partial", status: 200, headers: whole.headers, head: cut, then });
      const r = await download(i);
      expect([r.status, r.json?.errcode], r.body.toString().slice(0, 200)).toEqual([502, "M_UNKNOWN"]);
      await nothingCached(i);
    }
    // The same media, now answered whole: fetched again (the failure was not remembered as the file).
    peer.answer = () => ({ kind: "answer", status: 200, headers: whole.headers, body: whole.body });
    const ok = await download("cutClose");
    expect(ok.status).toBe(200);
    expect(ok.body.equals(file)).toBe(true);
    log.expectClean();
  });

  it("a legacy origin (no v1.11 endpoint) that cuts its plain answer mid-file: 502, nothing cached", async () => {
    const file = randomBytes(400 * 1024);
    peer.answer = (req) =>
      req.path.startsWith("/_matrix/federation/v1/media/")
        ? json(404, { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" })
        : { kind: "partial", status: 200, headers: { "content-type": "application/octet-stream", "content-length": String(file.length) }, head: file.subarray(0, 100 * 1024), then: "close" };
    const r = await download("legacyCut");
    expect([r.status, r.json?.errcode]).toEqual([502, "M_UNKNOWN"]);
    await nothingCached("legacyCut");
    log.expectClean();
  });

  it("a Location the origin names whose body is cut mid-file: 502 with an errcode (never the upload's 400), nothing cached", async () => {
    const files = await startHostilePeer(undefined, { tls: false });
    try {
      const file = randomBytes(300 * 1024);
      files.answer = () => ({ kind: "partial", status: 200, headers: { "content-type": "application/octet-stream", "content-length": String(file.length) }, head: file.subarray(0, 64 * 1024), then: "close" });
      const boundary = "loc";
      const body = `--${boundary}\r\nContent-Type: application/json\r\n\r\n{}\r\n--${boundary}\r\nLocation: ${files.url}/file\r\n\r\n\r\n--${boundary}--\r\n`;
      peer.answer = () => ({ kind: "answer", status: 200, headers: { "content-type": `multipart/mixed; boundary=${boundary}` }, body });
      const r = await download("locatedCut");
      expect([r.status, r.json?.errcode], r.body.toString().slice(0, 200)).toEqual([502, "M_UNKNOWN"]);
      expect(files.requests.map((q) => q.path)).toEqual(["/file"]);
      await nothingCached("locatedCut");
      log.expectClean();
    } finally {
      await files.close();
    }
  });

  it("an origin that never answers: the fetch gives up after the client's timeout_ms, 504 (or 502) with an errcode, nothing cached", async () => {
    peer.answer = () => ({ kind: "hang" });
    const started = Date.now();
    const r = await download("stalled", "?timeout_ms=1500");
    expect([502, 504]).toContain(r.status);
    expect(r.json?.errcode).toEqual(expect.any(String));
    expect(Date.now() - started).toBeLessThan(15_000);
    await nothingCached("stalled");
    log.expectClean();
  });

  const uploadFile = async (content: Buffer): Promise<string> => {
    const up = await undiciFetch(`${a.baseUrl}/_matrix/media/v3/upload`, {
      method: "POST",
      body: content,
      headers: { authorization: `Bearer ${alice.access_token}`, "content-type": "application/octet-stream" },
      dispatcher: insecureAgent,
    });
    expect(up.status).toBe(200);
    return ((await up.json()) as { content_uri: string }).content_uri.split("/").pop()!;
  };
  const fedHeaders = (path: string) => ({ authorization: signedBy(peer.serverName, peer.key, a.serverName, { method: "GET", path }) });

  it("our own file unreadable when asked for (replaced by a directory): 404 M_NOT_FOUND on the federation and client endpoints, nothing logged", async () => {
    const content = randomBytes(64 * 1024);
    const mediaId = await uploadFile(content);
    const path = a.hs.services.media.files.contentPath({ origin: a.serverName, mediaId });
    await rm(path);
    await mkdir(path);
    const fedPath = `/_matrix/federation/v1/media/download/${mediaId}`;
    const fed = await get(a.baseUrl + fedPath, fedHeaders(fedPath));
    expect([fed.status, fed.json?.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const client = await get(`${a.baseUrl}/_matrix/client/v1/media/download/${a.serverName}/${mediaId}`, { authorization: `Bearer ${alice.access_token}` });
    expect([client.status, client.json?.errcode]).toEqual([404, "M_NOT_FOUND"]);
    await rm(path, { recursive: true });
    await writeFile(path, content);
    expect((await get(a.baseUrl + fedPath, fedHeaders(fedPath))).status).toBe(200);
    log.expectClean();
  });

  /** Starts a download, lets its headers arrive, shrinks the file under it, then reads the rest: it must fail. */
  const shrinkMidFlight = async (url: string, headers: Record<string, string>, path: string) => {
    const res = await undiciFetch(url, { headers, dispatcher: insecureAgent });
    expect(res.status).toBe(200);
    const declared = Number(res.headers.get("content-length"));
    await truncate(path, 0);
    let received = 0;
    let failed: unknown;
    try {
      for await (const chunk of res.body!) received += (chunk as Uint8Array).length;
    } catch (err) {
      failed = err;
    }
    // The answer is cut: never the declared length arriving as if whole.
    expect(failed, `received ${received} of ${declared} bytes without an error`).toBeDefined();
    expect(received).toBeLessThan(declared);
  };

  it("our own file shrinking while it is served: the federation re-serve and the client download are cut, no FST_ERR, no 500", async () => {
    const content = randomBytes(24 * 1024 * 1024);
    for (const via of ["federation", "client"] as const) {
      const mediaId = await uploadFile(content);
      const path = a.hs.services.media.files.contentPath({ origin: a.serverName, mediaId });
      const fedPath = `/_matrix/federation/v1/media/download/${mediaId}`;
      if (via === "federation") await shrinkMidFlight(a.baseUrl + fedPath, fedHeaders(fedPath), path);
      else await shrinkMidFlight(`${a.baseUrl}/_matrix/client/v1/media/download/${a.serverName}/${mediaId}`, { authorization: `Bearer ${alice.access_token}` }, path);
      // The server goes on answering (the connection was cut, not the server).
      expect((await get(`${a.baseUrl}/_matrix/client/versions`)).status).toBe(200);
    }
    log.expectClean();
  });
});
