// How the GraphQL face reports failures: Matrix errcodes and extra fields in extensions, internals masked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GraphQLError } from "graphql";
import { MatrixError, limitExceeded } from "../../src/domain/errors.ts";
import { errorFormatter, toGraphqlError } from "../../src/graphql/errors.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { errcode, gql, LOGIN, REGISTER } from "./client.ts";

describe("error mapping", () => {
  it("maps a MatrixError to errcode plus its extra fields", () => {
    const e = toGraphqlError(limitExceeded(1234.2));
    expect(e.message).toBe("Too many requests");
    expect(e.extensions).toEqual({ errcode: "M_LIMIT_EXCEEDED", retry_after_ms: 1235 });
    const t = toGraphqlError(new MatrixError("M_UNKNOWN_TOKEN", "Access token has expired", 401, { soft_logout: true }));
    expect(t.extensions).toEqual({ errcode: "M_UNKNOWN_TOKEN", soft_logout: true });
  });

  it("masks anything else as M_UNKNOWN and logs it", () => {
    const logged: unknown[] = [];
    const e = toGraphqlError(new TypeError("secret internals"), { error: (o) => logged.push(o) });
    expect(e.message).toBe("Internal server error");
    expect(e.extensions).toEqual({ errcode: "M_UNKNOWN" });
    expect(logged).toHaveLength(1);
    const g = new GraphQLError("as is", { extensions: { errcode: "M_FORBIDDEN" } });
    expect(toGraphqlError(g)).toBe(g);
  });

  it("formats: drops Apollo's generic code and stack traces, masks unmapped execution errors", () => {
    const format = errorFormatter();
    expect(format({ message: "m", path: ["viewer"], extensions: { errcode: "M_FORBIDDEN", code: "INTERNAL_SERVER_ERROR", stacktrace: ["x"] } }))
      .toEqual({ message: "m", path: ["viewer"], extensions: { errcode: "M_FORBIDDEN" } });
    expect(format({ message: "Float cannot represent non numeric value: secret", path: ["viewer", "x"], extensions: { code: "INTERNAL_SERVER_ERROR" } }))
      .toEqual({ message: "Internal server error", path: ["viewer", "x"], extensions: { errcode: "M_UNKNOWN" } });
    expect(format({ message: "Cannot query field", extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }))
      .toEqual({ message: "Cannot query field", extensions: { code: "GRAPHQL_VALIDATION_FAILED", errcode: "M_BAD_JSON" } });
  });
});

describe("errors over HTTP", () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer({ config: { rc_login: { address: { per_second: 0.001, burst_count: 2 } } } });
    token = (await gql(t, REGISTER, { input: { username: "hank", password: "hank-pw" } })).body.data.register.accessToken;
  });
  afterAll(async () => { await t?.close(); });

  it("a rate limit carries retry_after_ms", async () => {
    await gql(t, LOGIN, { input: { user: "hank", password: "hank-pw" } });
    await gql(t, LOGIN, { input: { user: "hank", password: "hank-pw" } });
    const r = await gql(t, LOGIN, { input: { user: "hank", password: "hank-pw" } });
    expect(r.status).toBe(200);
    expect(errcode(r.body)).toBe("M_LIMIT_EXCEEDED");
    expect(r.body.errors![0]!.extensions!.retry_after_ms).toBeGreaterThan(0);
  });

  it("an unexpected failure is M_UNKNOWN without internals", async () => {
    const { sessions, log } = t.hs.services;
    const original = sessions.listDevices;
    const originalError = log.error;
    const logged: unknown[] = [];
    sessions.listDevices = async () => { throw new TypeError("secret internals"); };
    log.error = ((obj: unknown) => { logged.push(obj); }) as typeof log.error;
    try {
      const r = await gql(t, "{ viewer { userId devices { deviceId } } }", undefined, token);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ viewer: null });
      expect(r.body.errors).toEqual([{ message: "Internal server error", locations: expect.any(Array), path: ["viewer", "devices"], extensions: { errcode: "M_UNKNOWN" } }]);
      expect(JSON.stringify(r.body)).not.toMatch(/secret/);
      expect(logged).toEqual([{ err: expect.objectContaining({ message: "secret internals" }) }]);
    } finally {
      sessions.listDevices = original;
      log.error = originalError;
    }
  });
});
