// Every error body is a Matrix error (issue 11, finding 5), including the ones the HTTP stack answers
// before a route runs: an over-long path parameter (414), a query string or headers over 16 KB (431), a
// malformed URL encoding, malformed HTTP framing, a body of the wrong content type on /graphql.
// Raw sockets, so nothing in the client rewrites what the server sends.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `request` as is and reads the answer until the server closes the connection. */
function rawRequest(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1", () => sock.write(request));
    let data = "";
    sock.setEncoding("utf8");
    sock.on("data", (d) => (data += d));
    sock.on("error", reject);
    sock.on("close", () => {
      const split = data.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = data.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine?.split(" ")[1]), headers, body: data.slice(split + 4) });
    });
  });
}

const get = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: weft.test\r\n${extra}Connection: close\r\n\r\n`;

describe("error bodies", () => {
  let t: TestServer;
  let port: number;
  beforeAll(async () => {
    t = await startTestServer();
    port = Number(new URL(t.baseUrl).port);
  });
  afterAll(async () => {
    await t?.close();
  });

  const expectMatrixError = (res: RawResponse, status: number, errcode: string) => {
    expect(res.status, res.body).toBe(status);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const json = JSON.parse(res.body);
    expect(json.errcode, res.body).toBe(errcode);
    expect(typeof json.error).toBe("string");
    expect(res.headers["access-control-allow-origin"]).toBe("*");
  };

  it("answers an over-long path parameter 414 M_TOO_LARGE", async () => {
    expectMatrixError(await rawRequest(port, get(`/_matrix/client/v3/rooms/!${"a".repeat(3000)}:weft.test/state`)), 414, "M_TOO_LARGE");
  });

  it("answers a query string or headers over 16 KB 431 M_TOO_LARGE", async () => {
    expectMatrixError(await rawRequest(port, get(`/_matrix/client/v3/sync?since=${"a".repeat(16_500)}`)), 431, "M_TOO_LARGE");
    expectMatrixError(await rawRequest(port, get("/_matrix/client/versions", `X-Padding: ${"b".repeat(17_000)}\r\n`)), 431, "M_TOO_LARGE");
  });

  it("answers malformed URL encoding and malformed HTTP with M_UNRECOGNIZED", async () => {
    expectMatrixError(await rawRequest(port, get("/_matrix/client/v3/rooms/%E0%A4%A/state")), 400, "M_UNRECOGNIZED");
    expectMatrixError(await rawRequest(port, get("/_matrix/client/v3/profile/%ZZ")), 400, "M_UNRECOGNIZED");
    expectMatrixError(await rawRequest(port, "POST /_matrix/client/v3/login HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}"), 400, "M_UNRECOGNIZED");
    expectMatrixError(await rawRequest(port, "POST /_matrix/client/v3/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n"), 400, "M_UNRECOGNIZED");
  });

  it("answers a /graphql body that is not JSON 415 with an errcode", async () => {
    const res = await rawRequest(port, "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body).errors[0].extensions.errcode).toBe("M_NOT_JSON");
  });

  it("keeps serving after each of them", async () => {
    expect((await t.call("GET", "/_matrix/client/versions")).status).toBe(200);
  });
});
