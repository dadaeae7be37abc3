// Media over federation between Weft servers over TLS, on SQLite and PostgreSQL: a user of A downloads
// media uploaded on B through A's authenticated media endpoint (A fetches it from B's signed
// /_matrix/federation/v1/media/download, unpacking the multipart/mixed answer as it streams, caches it,
// serves it and its thumbnails, also once B is gone); B's federation media endpoints by their rules
// (signature required, 404s, multipart/mixed with the file or a thumbnail); and against a peer: the
// legacy /_matrix/media/v3/download fallback for a server without the v1.11 endpoint, a Location
// followed (and refused when it points at a blocked address), the origin's 404, and a file over
// max_upload_size refused — leaving nothing behind.
import { createServer, type Server } from "node:http";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { fetch as undiciFetch } from "undici";
import { backends, insecureAgent, type TestServer } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { parseMultipart, png, storeFiles } from "../helpers/media.ts";

interface Raw {
  status: number;
  headers: Headers;
  body: Buffer;
  json: any;
}

async function raw(t: TestServer, method: string, p: string, opts: { token?: string; body?: Buffer; headers?: Record<string, string> } = {}): Promise<Raw> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await undiciFetch(t.baseUrl + p, { method, headers, body: opts.body, dispatcher: insecureAgent });
  const body = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers as unknown as Headers, body, json };
}

async function upload(t: TestServer, token: string, body: Buffer, type: string, filename?: string): Promise<string> {
  const q = filename ? `?filename=${encodeURIComponent(filename)}` : "";
  const r = await raw(t, "POST", `/_matrix/media/v3/upload${q}`, { token, body, headers: { "content-type": type } });
  expect(r.status, r.body.toString()).toBe(200);
  return (r.json.content_uri as string).split("/").pop()!;
}

describe.each(backends())("federation media on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let bob: Session;
  let files: Server;
  let filesPort: number;

  beforeAll(async () => {
    peer = await startRecordingPeer();
    [a, b] = await Promise.all([
      // Only 127.0.0.1 is let through (not all of loopback): 127.0.0.2 plays a private address.
      startFederatedServer({ backend, config: { max_upload_size: "300K", ip_range_whitelist: ["127.0.0.1/32"] } }),
      startFederatedServer({ backend }),
    ]);
    peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    // A plain HTTP file server for Location answers, on 127.0.0.1 and 127.0.0.2.
    files = createServer((req, res) => {
      const body = Buffer.from(`file at ${req.url}`);
      res.writeHead(200, { "content-type": "text/plain", "content-length": body.length, "content-disposition": "attachment; filename=located.txt" });
      res.end(body);
    });
    await new Promise<void>((r) => files.listen(0, "0.0.0.0", () => r()));
    filesPort = (files.address() as { port: number }).port;
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), peer?.close(), new Promise((r) => files?.close(r))]);
  });

  const download = (origin: string, mediaId: string) => raw(a, "GET", `/_matrix/client/v1/media/download/${origin}/${mediaId}`, { token: alice.access_token });
  const nothingLeft = async (mediaIds: string[]) => {
    expect(await a.hs.services.db.media.count({ where: { mediaId: { in: mediaIds } } })).toBe(0);
    expect(storeFiles(a).tmp).toEqual([]);
  };

  it("B serves its media to signed requests as multipart/mixed: the file, a thumbnail; 401 unsigned, 404 unknown", async () => {
    const image = await png(120, 80);
    const mediaId = await upload(b, bob.access_token, image, "image/png", "pic one.png");
    const get = (path: string, signed = true) => {
      const r = { method: "GET" as const, path };
      return federationCall(b.baseUrl, { ...r, authorization: signed ? signedBy(a.serverName, a.hs.services.signingKeys[0]!, b.serverName, r) : undefined });
    };
    const rawGet = async (path: string) => {
      const r = { method: "GET" as const, path };
      const res = await undiciFetch(b.baseUrl + path, { headers: { authorization: signedBy(a.serverName, a.hs.services.signingKeys[0]!, b.serverName, r) }, dispatcher: insecureAgent });
      return { type: res.headers.get("content-type")!, length: res.headers.get("content-length"), body: Buffer.from(await res.arrayBuffer()), status: res.status };
    };
    const res = await rawGet(`/_matrix/federation/v1/media/download/${mediaId}`);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^multipart\/mixed; boundary=/);
    expect(Number(res.length)).toBe(res.body.length);
    const [meta, file] = parseMultipart(res.type, res.body);
    expect(JSON.parse(meta!.body.toString())).toEqual({});
    expect(file!.headers["content-type"]).toBe("image/png");
    expect(file!.headers["content-disposition"]).toBe("inline; filename*=utf-8''pic%20one.png");
    expect(file!.body.equals(image)).toBe(true);

    const th = await rawGet(`/_matrix/federation/v1/media/thumbnail/${mediaId}?width=32&height=32&method=crop`);
    expect(th.status).toBe(200);
    const thumb = parseMultipart(th.type, th.body)[1]!;
    const size = await sharp(thumb.body).metadata();
    expect([size.width, size.height]).toEqual([32, 32]);

    const unsigned = await get(`/_matrix/federation/v1/media/download/${mediaId}`, false);
    expect([unsigned.status, unsigned.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
    const unknown = await get(`/_matrix/federation/v1/media/download/nothingHere`);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const noSize = await get(`/_matrix/federation/v1/media/thumbnail/${mediaId}`);
    expect([noSize.status, noSize.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
  });

  it("a user of A downloads media uploaded on B: fetched over federation, cached, served with its headers and thumbnails", async () => {
    const image = await png(200, 100);
    const mediaId = await upload(b, bob.access_token, image, "image/png", "from b.png");
    const [r1, r2] = await Promise.all([download(b.serverName, mediaId), download(b.serverName, mediaId)]);
    for (const r of [r1!, r2!]) {
      expect(r.status, r.body.toString()).toBe(200);
      expect(r.body.equals(image)).toBe(true);
      expect(r.headers.get("content-type")).toBe("image/png");
      expect(r.headers.get("content-disposition")).toBe("inline; filename*=utf-8''from%20b.png");
    }
    const th = await raw(a, "GET", `/_matrix/client/v1/media/thumbnail/${b.serverName}/${mediaId}?width=96&height=96&method=crop`, { token: alice.access_token });
    expect(th.status).toBe(200);
    const size = await sharp(th.body).metadata();
    expect([size.width, size.height]).toEqual([96, 96]);
    expect(await a.hs.services.db.media.count({ where: { origin: b.serverName, mediaId } })).toBe(1);

    // A file several times larger than a transport chunk streams through intact.
    const bytes = randomBytes(250 * 1024);
    const bin = await upload(b, bob.access_token, bytes, "application/octet-stream", "blob.bin");
    const got = await download(b.serverName, bin);
    expect(got.status).toBe(200);
    expect(got.body.equals(bytes)).toBe(true);
    expect(got.headers.get("content-disposition")).toBe("attachment; filename=blob.bin");

    const missing = await download(b.serverName, "nothingThere");
    expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const big = await upload(b, bob.access_token, randomBytes(500 * 1024), "application/octet-stream");
    const tooBig = await download(b.serverName, big);
    expect([tooBig.status, tooBig.json.errcode]).toEqual([502, "M_TOO_LARGE"]);
    await nothingLeft(["nothingThere", big]);
  });

  it("falls back to the legacy download for a server without the federation media endpoint", async () => {
    peer.legacyMediaOnly = true;
    peer.mediaRequests.length = 0;
    try {
      peer.media.set("oldstyle", { type: "text/plain", filename: "old.txt", bytes: Buffer.from("from an older server") });
      const r = await download(peer.serverName, "oldstyle");
      expect(r.status, r.body.toString()).toBe(200);
      expect(r.body.toString()).toBe("from an older server");
      expect(r.headers.get("content-disposition")).toBe("inline; filename=old.txt");
      expect(peer.mediaRequests.map((q) => q.split(" ").slice(0, 2).join(" "))).toEqual(["federation oldstyle", "legacy oldstyle"]);
      expect(peer.mediaRequests[1]).toMatch(/allow_remote=false/);
      const missing = await download(peer.serverName, "notThereEither");
      expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    } finally {
      peer.legacyMediaOnly = false;
    }
  });

  it("follows a Location the origin names, through the address policy", async () => {
    peer.media.set("located", { type: "ignored", bytes: Buffer.alloc(0), location: `http://127.0.0.1:${filesPort}/the/file` });
    const r = await download(peer.serverName, "located");
    expect(r.status, r.body.toString()).toBe(200);
    expect(r.body.toString()).toBe("file at /the/file");
    expect(r.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    expect(r.headers.get("content-disposition")).toBe("inline; filename=located.txt");

    peer.media.set("private", { type: "ignored", bytes: Buffer.alloc(0), location: `http://127.0.0.2:${filesPort}/secret` });
    const refused = await download(peer.serverName, "private");
    expect([refused.status, refused.json.errcode]).toEqual([502, "M_UNKNOWN"]);
    const inline = await download(peer.serverName, "nope");
    expect([inline.status, inline.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    await nothingLeft(["private", "nope"]);
  });

  it("serves cached remote media once its origin is gone", async () => {
    const image = await png(64, 64);
    const mediaId = await upload(b, bob.access_token, image, "image/png");
    expect((await download(b.serverName, mediaId)).status).toBe(200);
    await b.stop();
    try {
      const again = await download(b.serverName, mediaId);
      expect(again.status).toBe(200);
      expect(again.body.equals(image)).toBe(true);
      const uncached = await download(b.serverName, "neverFetched");
      expect([uncached.status, uncached.json.errcode]).toEqual([502, "M_UNKNOWN"]);
    } finally {
      await b.restart();
    }
  });
});
