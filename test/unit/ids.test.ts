// Identifier grammar: the spec's server name examples, user ids (today's and historical localparts),
// room ids (with a server and v12's hash form), aliases, event ids, length limits, random strings.
import { describe, expect, it } from "vitest";
import { MatrixError } from "../../src/domain/errors.ts";
import {
  MAX_ID_BYTES,
  generateDeviceId,
  isRoomIdV12,
  isValidEventId,
  isValidLocalpartForRegistration,
  isValidRoomAlias,
  isValidRoomId,
  isValidServerName,
  isValidUserId,
  makeUserId,
  parseRoomAlias,
  parseRoomId,
  parseServerName,
  parseUserId,
  randomString,
  tryParseServerName,
} from "../../src/domain/ids.ts";

const expectInvalidParam = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(MatrixError);
    expect((e as MatrixError).errcode).toBe("M_INVALID_PARAM");
    expect((e as MatrixError).httpStatus).toBe(400);
    return;
  }
  expect.unreachable("expected M_INVALID_PARAM");
};

describe("server names", () => {
  it("accepts the spec's examples", () => {
    expect(parseServerName("matrix.org")).toEqual({ host: "matrix.org", kind: "dns" });
    expect(parseServerName("matrix.org:8888")).toEqual({ host: "matrix.org", port: 8888, kind: "dns" });
    expect(parseServerName("1.2.3.4")).toEqual({ host: "1.2.3.4", kind: "ipv4" });
    expect(parseServerName("1.2.3.4:1234")).toEqual({ host: "1.2.3.4", port: 1234, kind: "ipv4" });
    expect(parseServerName("[1234:5678::abcd]")).toEqual({ host: "[1234:5678::abcd]", kind: "ipv6" });
    expect(parseServerName("[1234:5678::abcd]:5678")).toEqual({ host: "[1234:5678::abcd]", port: 5678, kind: "ipv6" });
  });

  it("accepts other legal forms", () => {
    for (const s of ["localhost", "localhost:8448", "a", "EXAMPLE.ORG", "my-host.example", "x.y.z.example.com:1",
      "h:65535", "[::1]", "[::1]:8008", "[::ffff:1.2.3.4]", "[2001:DB8::1]", "255.255.255.255", "0.0.0.0:80",
      "a".repeat(255)]) {
      expect(isValidServerName(s), s).toBe(true);
    }
  });

  it("rejects bad hosts and ports", () => {
    for (const s of ["", ":8008", "example.org:", "example.org:0", "example.org:65536", "example.org:123456",
      "example.org:80a", "example.org:-1", "example.org:+80", "example.org:8008:1", "exa mple.org", "exa_mple.org",
      "ex/ample.org", "ex@ample.org", "例え.jp", "[::1", "::1", "[::1]8008", "[::1]:", "[gggg::1]", "[1:2:3]",
      "[::1%eth0]", "[]", "256.1.1.1", "1.2.3.999:80", "a".repeat(256)]) {
      expect(isValidServerName(s), s).toBe(false);
      expect(tryParseServerName(s), s).toBeUndefined();
    }
    expectInvalidParam(() => parseServerName("bad host"));
  });

  it("keeps case (server names are case-sensitive)", () => {
    expect(parseServerName("Matrix.ORG").host).toBe("Matrix.ORG");
  });
});

describe("user ids", () => {
  it("parses user ids, splitting at the first colon", () => {
    expect(parseUserId("@alice:example.org")).toEqual({ localpart: "alice", serverName: "example.org" });
    expect(parseUserId("@a.b_c=d-e/f+g:example.org:8448")).toEqual({ localpart: "a.b_c=d-e/f+g", serverName: "example.org:8448" });
    expect(parseUserId("@bob:[::1]:8448")).toEqual({ localpart: "bob", serverName: "[::1]:8448" });
    expect(parseUserId("@1234:1.2.3.4")).toEqual({ localpart: "1234", serverName: "1.2.3.4" });
  });

  it("accepts historical localparts unless strict", () => {
    for (const s of ["@Alice:example.org", "@user name:example.org", "@ünïcødé:example.org", "@a\u0001b:example.org",
      "@:example.org", "@😀:example.org", "@#~!:example.org"]) {
      expect(isValidUserId(s), s).toBe(true);
      expect(isValidUserId(s, { strict: true }), s).toBe(false);
      expectInvalidParam(() => parseUserId(s, { strict: true }));
    }
    expect(isValidUserId("@alice:example.org", { strict: true })).toBe(true);
  });

  it("rejects what no version ever allowed", () => {
    for (const s of ["alice:example.org", "@alice", "@alice:", "@alice:bad host", "@a\u0000b:example.org",
      "@a\ud800:example.org", "#alice:example.org", "", "@alice:example.org:0"]) {
      expect(isValidUserId(s), s).toBe(false);
      expectInvalidParam(() => parseUserId(s));
    }
  });

  it("limits user ids to 255 bytes of UTF-8", () => {
    const server = "example.org";
    const fits = "@" + "a".repeat(MAX_ID_BYTES - 2 - server.length) + ":" + server;
    expect(Buffer.byteLength(fits)).toBe(255);
    expect(isValidUserId(fits, { strict: true })).toBe(true);
    expect(isValidUserId("@a" + fits.slice(1))).toBe(false);
    // 2-byte characters count twice.
    const wide = "@" + "é".repeat(120) + "a".repeat(255 - 1 - 240 - 1 - server.length) + ":" + server;
    expect(Buffer.byteLength(wide)).toBe(255);
    expect(isValidUserId(wide)).toBe(true);
    expect(isValidUserId(wide.replace("a", "é"))).toBe(false);
  });

  it("checks localparts for registration against today's grammar", () => {
    for (const ok of ["alice", "a", "0", "a.b", "a_b", "a=b", "a-b", "a/b", "a+b", "._=-/+0z"]) {
      expect(isValidLocalpartForRegistration(ok), ok).toBe(true);
    }
    for (const bad of ["", "Alice", "a b", "a:b", "a@b", "a#b", "ü", "a\n", "a*", "a~"]) {
      expect(isValidLocalpartForRegistration(bad), bad).toBe(false);
    }
    expect(isValidLocalpartForRegistration("a".repeat(200), "example.org")).toBe(true);
    expect(isValidLocalpartForRegistration("a".repeat(250), "example.org")).toBe(false);
  });

  it("makes user ids and refuses bad parts", () => {
    expect(makeUserId("alice", "example.org")).toBe("@alice:example.org");
    expect(makeUserId("bob", "[::1]:8448")).toBe("@bob:[::1]:8448");
    expectInvalidParam(() => makeUserId("a:b", "example.org"));
    expectInvalidParam(() => makeUserId("alice", "bad host"));
    expectInvalidParam(() => makeUserId("a".repeat(250), "example.org"));
  });
});

describe("room ids", () => {
  const v12 = "!Nhcu5BS-UMnFX7hBVfVSoXiD7OgH6iRT-xyIuqDnpYQ";

  it("parses !opaque:server room ids", () => {
    expect(parseRoomId("!abcDEF123:example.org")).toEqual({ opaque: "abcDEF123", serverName: "example.org" });
    expect(parseRoomId("!x:[::1]:8448")).toEqual({ opaque: "x", serverName: "[::1]:8448" });
    expect(isValidRoomId("!any thing/ü:example.org")).toBe(true);
  });

  it("parses room version 12's server-less room ids", () => {
    expect(isRoomIdV12(v12)).toBe(true);
    expect(parseRoomId(v12)).toEqual({ opaque: v12.slice(1) });
    expect(isValidRoomId(v12)).toBe(true);
    expect(isRoomIdV12("!abc:example.org")).toBe(false);
    expect(isRoomIdV12(v12.slice(0, -1))).toBe(false);
    expect(isRoomIdV12(v12 + "A")).toBe(false);
    expect(isRoomIdV12(v12.replace("-", "+"))).toBe(false);
  });

  it("rejects malformed room ids", () => {
    for (const s of ["", "!", "!abc", "!:example.org", "abc:example.org", "#abc:example.org", "!abc:", "!abc:bad host",
      "!a\u0000b:example.org", "!" + "a".repeat(250) + ":example.org", v12.slice(0, 40)]) {
      expect(isValidRoomId(s), s).toBe(false);
    }
    expectInvalidParam(() => parseRoomId("nope"));
  });
});

describe("room aliases", () => {
  it("parses #alias:server", () => {
    expect(parseRoomAlias("#room:example.org")).toEqual({ localpart: "room", serverName: "example.org" });
    expect(parseRoomAlias("#Ünïcødé room!:example.org:8448")).toEqual({ localpart: "Ünïcødé room!", serverName: "example.org:8448" });
  });

  it("rejects malformed aliases", () => {
    for (const s of ["", "#", "#:example.org", "room:example.org", "!room:example.org", "#room", "#room:",
      "#room:bad host", "#" + "a".repeat(243) + ":example.org"]) {
      expect(isValidRoomAlias(s), s).toBe(false);
    }
    expect(isValidRoomAlias("#" + "a".repeat(242) + ":example.org")).toBe(true);
    expectInvalidParam(() => parseRoomAlias("#nope"));
  });
});

describe("event ids", () => {
  const v3 = "$acR1l0raoZnm60CBwAVgqbZqoO/mYU81xysh1u7XcJk";
  const v4 = "$Rqnc-F-dvnEYJTyHq_iKxU2bZ1CI92-kuZq3a5lr5Zg";

  it("accepts each room version family's form", () => {
    expect(isValidEventId("$abc123:example.org", "v1")).toBe(true);
    expect(isValidEventId(v3, "v3")).toBe(true);
    expect(isValidEventId(v4, "v4")).toBe(true);
    for (const s of ["$abc123:example.org", v3, v4, "$opaque"]) expect(isValidEventId(s), s).toBe(true);
  });

  it("rejects the wrong form for a family", () => {
    expect(isValidEventId(v3, "v4")).toBe(false);
    expect(isValidEventId(v4, "v3")).toBe(false);
    expect(isValidEventId(v4, "v1")).toBe(false);
    expect(isValidEventId("$abc:example.org", "v4")).toBe(false);
    expect(isValidEventId("$:example.org", "v1")).toBe(false);
  });

  it("rejects malformed event ids", () => {
    for (const s of ["", "$", "abc", "!abc:example.org", "$:example.org", "$abc:bad host", "$a\u0000b",
      "$" + "a".repeat(255)]) {
      expect(isValidEventId(s), s).toBe(false);
    }
  });
});

describe("random strings", () => {
  it("has the requested length and alphabet", () => {
    expect(randomString(0)).toBe("");
    expect(randomString(64)).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(randomString(100, "ab")).toMatch(/^[ab]{100}$/);
    expect(randomString(5, "x")).toBe("xxxxx");
    expect(() => randomString(-1)).toThrow(RangeError);
    expect(() => randomString(3, "")).toThrow(RangeError);
  });

  it("is roughly uniform (no modulo bias)", () => {
    const counts = new Map<string, number>();
    const s = randomString(62_000);
    for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(750);
      expect(n).toBeLessThan(1250);
    }
  });

  it("makes device ids of 10 uppercase letters, all different", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const id = generateDeviceId();
      expect(id).toMatch(/^[A-Z]{10}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(200);
  });
});
