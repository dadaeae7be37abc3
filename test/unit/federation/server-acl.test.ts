// The server ACL rule (m.room.server_acl) on its own: globs on the host without its port, case-insensitive;
// deny before allow; no allow list allows nobody; IP literals (v4 and bracketed v6) refused when
// allow_ip_literals is false; malformed fields read as Synapse reads them.
// Spec: Client-Server API "Server Access Control Lists (ACLs) for rooms".
import { describe, expect, it } from "vitest";
import { parseServerAcl, serverAllowedByAcl } from "../../../src/domain/federation/server-acl.ts";

const allowed = (content: unknown, server: string) => serverAllowedByAcl(parseServerAcl(content), server);

describe("server ACLs", () => {
  it("deny globs win over allow globs, on the host without its port", () => {
    const acl = { allow: ["*"], deny: ["evil.com", "*.evil.com"] };
    expect(allowed(acl, "good.example")).toBe(true);
    expect(allowed(acl, "good.example:8448")).toBe(true);
    expect(allowed(acl, "evil.com")).toBe(false);
    expect(allowed(acl, "evil.com:8448")).toBe(false);
    expect(allowed(acl, "sub.evil.com")).toBe(false);
    expect(allowed(acl, "notevil.com")).toBe(true);
  });

  it("matches case-insensitively, with ? for one character and regex characters taken literally", () => {
    expect(allowed({ allow: ["*"], deny: ["EVIL.com"] }, "evil.COM")).toBe(false);
    expect(allowed({ allow: ["server?.example"] }, "server1.example")).toBe(true);
    expect(allowed({ allow: ["server?.example"] }, "server10.example")).toBe(false);
    expect(allowed({ allow: ["a.b"] }, "axb")).toBe(false);
  });

  it("allows nobody without an allow list, only those matching one with it", () => {
    expect(allowed({}, "any.example")).toBe(false);
    expect(allowed({ deny: [] }, "any.example")).toBe(false);
    expect(allowed({ allow: ["*.friends.example"] }, "a.friends.example")).toBe(true);
    expect(allowed({ allow: ["*.friends.example"] }, "stranger.example")).toBe(false);
  });

  it("refuses IP literals only when allow_ip_literals is false", () => {
    const open = { allow: ["*"] };
    const closed = { allow: ["*"], allow_ip_literals: false };
    for (const ip of ["1.2.3.4", "1.2.3.4:8448", "[::1]", "[2001:db8::1]:8448"]) {
      expect(allowed(open, ip), ip).toBe(true);
      expect(allowed(closed, ip), ip).toBe(false);
    }
    expect(allowed(closed, "1.2.3.4.example")).toBe(true);
    expect(allowed({ allow: ["*"], deny: ["127.0.0.1"] }, "127.0.0.1:8448")).toBe(false);
  });

  it("reads malformed fields as Synapse: a non-list is empty, non-strings skipped, a non-boolean allow_ip_literals true", () => {
    expect(allowed({ allow: "*" }, "any.example")).toBe(false);
    expect(allowed({ allow: [1, null, "*"] }, "any.example")).toBe(true);
    expect(allowed({ allow: ["*"], deny: "any.example" }, "any.example")).toBe(true);
    expect(allowed({ allow: ["*"], allow_ip_literals: "no" }, "1.2.3.4")).toBe(true);
    expect(allowed("nonsense", "any.example")).toBe(false);
  });
});
