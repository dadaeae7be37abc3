// The request log (issue 19 items 5 and 7): pino JSON lines, one `info` line per request with method, path
// (secrets in the query redacted), status, time, user and the request's id; with `log_request_context`
// that id on every line written while the request is handled (whichever module wrote it).
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";

interface Line { level: number; msg: string; reqId?: string; method?: string; path?: string; status?: number; ms?: number; user?: string; [k: string]: unknown }

describe.each([
  { name: "default (info): the request line carries the id", carry: undefined },
  { name: "log_request_context: every line carries the id", carry: true },
])("request log, $name", ({ carry }) => {
  let t: TestServer;
  const lines: Line[] = [];
  let alice: Session;

  /** The lines of one request, once its request line was written (it is the last). */
  async function linesOf(reqId: string): Promise<Line[]> {
    const deadline = Date.now() + 10_000;
    while (!lines.some((l) => l.reqId === reqId && l.status !== undefined)) {
      if (Date.now() > deadline) throw new Error(`no request line for ${reqId}`);
      await new Promise((r) => setImmediate(r));
    }
    return lines.filter((l) => l.reqId === reqId);
  }

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const text of String(chunk).split("\n")) if (text) lines.push(JSON.parse(text) as Line);
        done();
      },
    });
    t = await startTestServer({ config: { log_level: "info", ...(carry ? { log_request_context: true } : {}) }, log: pino({ level: "info" }, sink) });
    alice = await registerUser(t, "alice");
  });
  afterAll(() => t?.close());

  it("writes one info line per request: method, path without the token, status, time, user", async () => {
    const res = await fetch(`${t.baseUrl}/_matrix/client/v3/account/whoami?access_token=${alice.access_token}`);
    expect(res.status).toBe(200);
    const reqId = res.headers.get("x-request-id");
    expect(reqId).toBeTruthy();
    const [line] = (await linesOf(reqId!)).filter((l) => l.status !== undefined);
    expect(line).toMatchObject({ level: 30, method: "GET", path: "/_matrix/client/v3/account/whoami?access_token=<redacted>", status: 200, user: alice.user_id });
    expect(typeof line!.ms).toBe("number");
    expect(line!.msg).toContain("GET /_matrix/client/v3/account/whoami?access_token=<redacted> 200");
    expect(JSON.stringify(lines)).not.toContain(alice.access_token);
  });

  it("names the failure a client sees, without a user when none authenticated", async () => {
    const res = await fetch(`${t.baseUrl}/_matrix/client/v3/account/whoami`, { headers: { authorization: "Bearer nope" } });
    expect(res.status).toBe(401);
    const [line] = (await linesOf(res.headers.get("x-request-id")!)).filter((l) => l.status !== undefined);
    expect(line).toMatchObject({ method: "GET", status: 401 });
    expect(line!.user).toBeUndefined();
  });

  it("names the user a GraphQL request authenticated as", async () => {
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ viewer { userId } }" }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data?: { viewer?: { userId?: string } } }).data?.viewer?.userId).toBe(alice.user_id);
    const [line] = (await linesOf(res.headers.get("x-request-id")!)).filter((l) => l.status !== undefined);
    expect(line).toMatchObject({ method: "POST", path: "/graphql", status: 200, user: alice.user_id });
  });

  it(carry ? "gives every line a request writes its id, after its body was read too" : "leaves the id off the domain's lines (the request line has it)", async () => {
    // An upload that claims to be an image: thumbnailing it fails and the media module logs why.
    const res = await fetch(`${t.baseUrl}/_matrix/media/v3/upload?filename=x.png`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.access_token}`, "content-type": "image/png" },
      body: Buffer.from("this is not a PNG"),
    });
    expect(res.status).toBe(200);
    const reqId = res.headers.get("x-request-id")!;
    const mine = await linesOf(reqId);
    const others = mine.filter((l) => l.status === undefined);
    if (!carry) {
      // The media module's line is written all the same, without the id.
      expect(lines.filter((l) => /thumbnail/.test(l.msg)).map((l) => l.reqId)).toEqual([undefined]);
      expect(others).toEqual([]);
      return;
    }
    expect(others.length, JSON.stringify(lines.slice(-5))).toBeGreaterThan(0);
    expect(others.some((l) => /thumbnail/.test(l.msg))).toBe(true);
    // Ids differ between requests.
    const res2 = await fetch(`${t.baseUrl}/health`);
    expect(res2.headers.get("x-request-id")).not.toBe(reqId);
  });
});
