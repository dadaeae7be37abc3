// Shutdown ends connections that would hold it forever: a client that asked for a large download and
// stopped reading keeps its response unfinished; the server's close, after its grace period (10 s), ends
// that connection instead of waiting on it (seen as a rare 60 s hang of a test server's close when a test
// left a response body unread). Transport behaviour, the same on both databases: SQLite only.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startTestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

describe("shutdown with a stalled client", () => {
  it("closes within its grace period although a response is still being written", async () => {
    const t = await startTestServer({ config: { max_upload_size: "64M" } });
    let closed = false;
    try {
      const alice = await registerUser(t, "alice");
      const body = Buffer.alloc(32 * 1024 * 1024, 7);
      const up = await fetch(`${t.baseUrl}/_matrix/media/v3/upload`, { method: "POST", headers: { authorization: `Bearer ${alice.access_token}`, "content-type": "application/octet-stream" }, body });
      expect(up.status).toBe(200);
      const mxc = ((await up.json()) as { content_uri: string }).content_uri.slice("mxc://".length);
      const url = new URL(t.baseUrl);
      const socket = connect(Number(url.port), url.hostname);
      socket.pause();
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      socket.write(`GET /_matrix/client/v1/media/download/${mxc} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${alice.access_token}\r\n\r\n`);
      const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.on("error", () => {}); // a reset connection is an end too
      await new Promise<void>((resolve) => socket.once("readable", () => resolve()));
      const started = Date.now();
      await t.stop();
      closed = true;
      // The server has ended the connection: reading what it sent reaches the end.
      expect(Date.now() - started).toBeLessThan(30_000);
      socket.resume();
      await ended;
    } finally {
      if (!closed) await t.stop();
      await t.close();
    }
  }, 60_000);
});
