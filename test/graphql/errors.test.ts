// How the GraphQL face reports failures: Matrix errcodes and extra fields in extensions, internals masked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GraphQLError } from "graphql";
import { MatrixError, limitExceeded } from "../../src/domain/errors.ts";
import { errorFormatter, toGraphqlError } from "../../src/graphql/errors.ts";
import { GRAPHQL_ERROR_CODES } from "../../src/graphql/error-extensions.ts";
import { readFileSync } from "node:fs";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { errcode, gql, LOGIN, REGISTER } from "./client.ts";

describe("error mapping", () => {
  it("maps a MatrixError to errcode plus its extra fields", () => {
    const e = toGraphqlError(limitExceeded(1234.2));
    expect(e.message).toBe("Too many requests");
    expect(e.extensions).toEqual({ errcode: "M_LIMIT_EXCEEDED", code: "RATE_LIMITED", retry_after_ms: 1235 });
    const t = toGraphqlError(new MatrixError("M_UNKNOWN_TOKEN", "Access token has expired", 401, { soft_logout: true }));
    expect(t.extensions).toEqual({ errcode: "M_UNKNOWN_TOKEN", code: "UNAUTHENTICATED", soft_logout: true });
  });

  it("gives every errcode of src/domain/errors.ts a stable extensions.code", () => {
    // The errcodes as the source spells them: every quoted member of the ErrCode and OAuthErrorCode unions.
    const text = readFileSync(new URL("../../src/domain/errors.ts", import.meta.url), "utf8");
    const unions = text.slice(text.indexOf("export type ErrCode"), text.indexOf("/** Default HTTP status"));
    const errcodes = [...unions.matchAll(/^\s*\|\s*"([^"]+)"/gm)].map((m) => m[1]!);
    expect(errcodes.length).toBeGreaterThan(70);
    const known = new Set(["UNAUTHENTICATED", "FORBIDDEN", "BAD_USER_INPUT", "NOT_FOUND", "CONFLICT", "RATE_LIMITED", "TOO_LARGE", "NOT_SUPPORTED", "UNAVAILABLE", "INTERNAL_SERVER_ERROR"]);
    for (const errcode of errcodes) {
      const ext = toGraphqlError(new MatrixError(errcode as never, "x")).extensions;
      expect([errcode, ext.errcode, known.has(ext.code as string)], errcode).toEqual([errcode, errcode, true]);
      expect(ext.code).toBe(GRAPHQL_ERROR_CODES[errcode as keyof typeof GRAPHQL_ERROR_CODES]);
    }
    // And the table names nothing that is not an errcode.
    expect(Object.keys(GRAPHQL_ERROR_CODES).sort()).toEqual([...errcodes].sort());
    // A few fixed points clients rely on.
    expect([GRAPHQL_ERROR_CODES.M_FORBIDDEN, GRAPHQL_ERROR_CODES.M_UNKNOWN_TOKEN, GRAPHQL_ERROR_CODES.M_NOT_FOUND, GRAPHQL_ERROR_CODES.M_LIMIT_EXCEEDED, GRAPHQL_ERROR_CODES.M_BAD_JSON])
      .toEqual(["FORBIDDEN", "UNAUTHENTICATED", "NOT_FOUND", "RATE_LIMITED", "BAD_USER_INPUT"]);
  });

  it("masks anything else as M_UNKNOWN and logs it", () => {
    const logged: unknown[] = [];
    const e = toGraphqlError(new TypeError("secret internals"), { error: (o) => logged.push(o) });
    expect(e.message).toBe("Internal server error");
    expect(e.extensions).toEqual({ errcode: "M_UNKNOWN", code: "INTERNAL_SERVER_ERROR" });
    expect(logged).toHaveLength(1);
    const g = new GraphQLError("as is", { extensions: { errcode: "M_FORBIDDEN" } });
    expect(toGraphqlError(g)).toBe(g);
  });

  it("formats: replaces Apollo's generic code by the errcode's, drops stack traces, masks unmapped execution errors", () => {
    const format = errorFormatter();
    expect(format({ message: "m", path: ["viewer"], extensions: { errcode: "M_FORBIDDEN", code: "INTERNAL_SERVER_ERROR", stacktrace: ["x"] } }))
      .toEqual({ message: "m", path: ["viewer"], extensions: { errcode: "M_FORBIDDEN", code: "FORBIDDEN" } });
    expect(format({ message: "Float cannot represent non numeric value: secret", path: ["viewer", "x"], extensions: { code: "INTERNAL_SERVER_ERROR" } }))
      .toEqual({ message: "Internal server error", path: ["viewer", "x"], extensions: { errcode: "M_UNKNOWN", code: "INTERNAL_SERVER_ERROR" } });
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
      expect(r.body.errors).toEqual([{ message: "Internal server error", locations: expect.any(Array), path: ["viewer", "devices"], extensions: { errcode: "M_UNKNOWN", code: "INTERNAL_SERVER_ERROR" } }]);
      expect(JSON.stringify(r.body)).not.toMatch(/secret/);
      expect(logged).toEqual([{ err: expect.objectContaining({ message: "secret internals" }) }]);
    } finally {
      sessions.listDevices = original;
      log.error = originalError;
    }
  });
});
