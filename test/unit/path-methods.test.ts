// The 405 table (src/compat/path-methods.ts): which requests no route matched are answered 405 — the path
// is served with other methods under the prefix it was sent — and which 404, matched as the router does
// (duplicate slashes, percent-decoding, empty trailing parameters, query strings, absolute-form targets).
import { describe, expect, it } from "vitest";
import { PathMethods } from "../../src/compat/path-methods.ts";

const CLIENT = new Set(["/_matrix/client/v3", "/_matrix/client/r0", "/_proto/client/v3", "/_proto/client/r0"]);

function table(): PathMethods {
  const t = new PathMethods();
  t.add("/_matrix/client/v3/login", "GET", CLIENT);
  t.add("/_matrix/client/v3/login", "POST", CLIENT);
  t.add("/_matrix/client/v3/login", "HEAD", CLIENT);
  t.add("/_matrix/client/v3/rooms/:roomId/send/:eventType/:txnId", "PUT", CLIENT);
  t.add("/_matrix/media/v3/create", "POST", new Set(["/_matrix/media/v1", "/_proto/media/v1"]));
  t.add("/_impl/admin/v1/registration_tokens/new", "POST", new Set(["/_impl/admin", "/_synapse/admin"]));
  t.add("/_impl/admin/v1/registration_tokens/:token", "GET", new Set(["/_impl/admin", "/_synapse/admin"]));
  t.add("/_impl/admin/v1/deactivate/:userId", "POST", new Set(["/_impl/admin", "/_synapse/admin"]));
  t.add("/health", "GET", undefined);
  return t;
}

describe("PathMethods", () => {
  it("answers 405 for a served path asked with another method, 404 for a path nobody serves", () => {
    const t = table();
    expect(t.answer("/_matrix/client/v3/login", "DELETE", "/_matrix/client/v3")).toBe("method");
    expect(t.answer("/_matrix/client/v3/rooms/!r:x/send/m.room.message/1", "GET", undefined)).toBe("method");
    expect(t.answer("/_matrix/client/v3/rooms/!r:x/send/m.room.message", "PUT", undefined)).toBe("not-found");
    expect(t.answer("/_matrix/client/v3/nothing", "GET", undefined)).toBe("not-found");
    expect(t.answer("/health", "POST", undefined)).toBe("method");
  });

  it("answers 404 where the method is served (a route refused for its alias) and for methods never refused with 405", () => {
    const t = table();
    expect(t.answer("/_matrix/client/v3/login", "POST", "/_matrix/client/v3")).toBe("not-found");
    expect(t.answer("/_matrix/client/v3/login", "OPTIONS", undefined)).toBe("not-found");
    expect(t.answer("/_matrix/client/v3/login", "PROPFIND", undefined)).toBe("not-found");
  });

  it("asks HEAD as GET", () => {
    const t = table();
    expect(t.answer("/_matrix/media/v3/create", "HEAD", "/_matrix/media/v1")).toBe("method");
    expect(t.answer("/_matrix/client/v3/login", "HEAD", "/_matrix/client/v3")).toBe("not-found");
  });

  it("answers 405 only under an alias that serves the path", () => {
    const t = table();
    expect(t.answer("/_matrix/media/v3/create", "GET", "/_matrix/media/v1")).toBe("method");
    expect(t.answer("/_matrix/media/v3/create", "GET", "/_matrix/media/v3")).toBe("not-found");
    expect(t.answer("/_matrix/media/v3/create", "GET", "/_proto/media/r0")).toBe("not-found");
  });

  it("gives each method the pattern that serves it: 405 only when no matching pattern does", () => {
    const t = table();
    // GET /registration_tokens/new is the token "new" (as Synapse routes it), PUT is served by neither.
    expect(t.answer("/_impl/admin/v1/registration_tokens/new", "GET", "/_impl/admin")).toBe("not-found");
    expect(t.answer("/_impl/admin/v1/registration_tokens/new", "PUT", "/_impl/admin")).toBe("method");
    expect(t.answer("/_impl/admin/v1/registration_tokens/abc", "POST", "/_synapse/admin")).toBe("method");
  });

  it("matches as the router does: duplicate slashes, percent-decoded segments, an empty trailing parameter, query and absolute form", () => {
    const t = table();
    expect(t.answer("//_matrix//client/v3//login", "DELETE", undefined)).toBe("method");
    expect(t.answer("/_matrix/client/v3/%6Cogin", "DELETE", undefined)).toBe("method");
    expect(t.answer("/_matrix/client/v3/rooms/a%2Fb/send/t/1", "GET", undefined)).toBe("method");
    expect(t.answer("/_impl/admin/v1/deactivate/", "GET", "/_impl/admin")).toBe("method");
    expect(t.answer("/_matrix/client/v3/login/", "DELETE", undefined)).toBe("not-found");
    expect(t.answer("/_matrix/client/v3/login?x=1#f", "DELETE", undefined)).toBe("method");
    expect(t.answer("http://host:8008/_matrix/client/v3/login?x=1", "DELETE", undefined)).toBe("method");
    expect(t.answer("/_matrix/client/v3/%E0%A4%A", "GET", undefined)).toBe("not-found");
  });
});
