// Federation request authentication: the Authorization header grammar (quoted and bare values, spaces and
// tabs around commas, case-insensitive names, escapes, both scheme names), signatures checked with an
// independent Ed25519 implementation, and every reason an inbound request is refused.
import { createHash } from "node:crypto";
import * as ed from "@noble/ed25519";
import { describe, expect, it } from "vitest";
import { canonicalJson, decodeBase64 } from "../../../src/domain/canonical-json.ts";
import { MatrixError } from "../../../src/domain/errors.ts";
import { authenticateRequest, parseFederationAuthHeader, signRequest } from "../../../src/domain/federation/request-auth.ts";
import { LocalKeyRing } from "../../../src/domain/keys/key-ring.ts";
import { generateSigningKey } from "../../../src/domain/signing-key.ts";

ed.hashes.sha512 = (m) => new Uint8Array(createHash("sha512").update(m).digest());

describe("parseFederationAuthHeader", () => {
  it("reads the spec's example and quoted values with escapes", () => {
    expect(parseFederationAuthHeader('X-Matrix origin="origin.hs.example.com",destination="destination.hs.example.com",key="ed25519:key1",sig="ABCDEF..."')).toEqual({
      scheme: "X-Matrix", origin: "origin.hs.example.com", destination: "destination.hs.example.com", key: "ed25519:key1", sig: "ABCDEF...",
    });
    expect(parseFederationAuthHeader('X-Matrix origin="a\\.org",key="ed25519:\\"k",sig="s\\\\"')).toMatchObject({ origin: "a.org", key: 'ed25519:"k', sig: "s\\" });
  });

  it("accepts bare values (colons and base64 included), any order, case-insensitive names, spaces and tabs around commas", () => {
    const p = parseFederationAuthHeader("X-Matrix  SIG=ab+/cd , \tKey=ed25519:k1,\tOrigin=example.org:8448 ,destination=[::1]:8448, extra=ignored");
    expect(p).toEqual({ scheme: "X-Matrix", origin: "example.org:8448", destination: "[::1]:8448", key: "ed25519:k1", sig: "ab+/cd" });
  });

  it("knows X-Proto as the same scheme, any letter case; other schemes are not ours", () => {
    expect(parseFederationAuthHeader('X-Proto origin="a.org",key="ed25519:k",sig="s"')?.scheme).toBe("X-Proto");
    expect(parseFederationAuthHeader('x-matrix origin="a.org",key="ed25519:k",sig="s"')?.scheme).toBe("X-Matrix");
    expect(parseFederationAuthHeader("Bearer abc")).toBeUndefined();
    expect(parseFederationAuthHeader("X-Matrixorigin=a")).toBeUndefined();
  });

  it("refuses malformed headers with 400 M_UNAUTHORIZED", () => {
    for (const bad of [
      "X-Matrix",
      'X-Matrix origin="a.org",key="ed25519:k"', // no sig
      'X-Matrix origin="a.org",key="ed25519:k",sig="s', // unterminated quote
      'X-Matrix origin="a.org" key="ed25519:k",sig="s"', // no comma
      'X-Matrix origin="a.org",key="ed25519:k",sig="s",', // trailing comma
      'X-Matrix origin="a.org",origin="b.org",key="ed25519:k",sig="s"', // repeated parameter
      'X-Matrix origin="not a server",key="ed25519:k",sig="s"',
      'X-Matrix origin=,key="ed25519:k",sig="s"',
      'X-Matrix =x,origin="a.org",key="ed25519:k",sig="s"',
    ]) {
      let err: unknown;
      try {
        parseFederationAuthHeader(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(MatrixError);
      expect((err as MatrixError).errcode).toBe("M_UNAUTHORIZED");
      expect((err as MatrixError).httpStatus).toBe(400);
      expect((err as MatrixError).message).toBe("Malformed Authorization header");
    }
  });
});

describe("signRequest", () => {
  it("signs {method, uri, origin, destination, content} as the spec's step 1 (checked with @noble/ed25519)", () => {
    const key = generateSigningKey();
    const content = { b: [1, 2], a: "é" };
    const header = signRequest({ method: "PUT", uri: "/_matrix/federation/v1/send/1?x=%20y", origin: "a.org", destination: "b.org:8448", content }, key);
    expect(header).toMatch(/^X-Matrix origin="a\.org",destination="b\.org:8448",key="ed25519:a_[A-Za-z]{4}",sig="[A-Za-z0-9+/]{86}"$/);
    const p = parseFederationAuthHeader(header)!;
    const signed = canonicalJson({ method: "PUT", uri: "/_matrix/federation/v1/send/1?x=%20y", origin: "a.org", destination: "b.org:8448", content });
    expect(ed.verify(decodeBase64(p.sig), new TextEncoder().encode(signed), key.publicKey)).toBe(true);
    // Without content (GET), the member is absent, not null.
    const get = parseFederationAuthHeader(signRequest({ method: "GET", uri: "/x", origin: "a.org", destination: "b.org" }, key))!;
    expect(ed.verify(decodeBase64(get.sig), new TextEncoder().encode(canonicalJson({ method: "GET", uri: "/x", origin: "a.org", destination: "b.org" })), key.publicKey)).toBe(true);
  });
});

describe("authenticateRequest", () => {
  const remote = generateSigningKey();
  const ring = new LocalKeyRing("remote.org", [remote]);
  const deps = { serverName: "us.org", keyRing: ring, now: Date.now() };
  const body = { hello: "world" };
  const uri = "/_matrix/federation/v1/send/txn1";
  const good = signRequest({ method: "PUT", uri, origin: "remote.org", destination: "us.org", content: body }, remote);

  async function refusal(req: Parameters<typeof authenticateRequest>[1], d = deps): Promise<MatrixError> {
    try {
      await authenticateRequest(d, req);
    } catch (err) {
      expect(err).toBeInstanceOf(MatrixError);
      return err as MatrixError;
    }
    throw new Error("expected a refusal");
  }

  it("returns the origin of a correctly signed request, with or without the destination parameter", async () => {
    expect(await authenticateRequest(deps, { method: "PUT", uri, authorization: [good], content: body })).toBe("remote.org");
    const noDest = good.replace(/destination="[^"]*",/, "");
    expect(await authenticateRequest(deps, { method: "PUT", uri, authorization: [noDest], content: body })).toBe("remote.org");
    expect(await authenticateRequest(deps, { method: "PUT", uri, authorization: ["Bearer x", good.replace("X-Matrix", "X-Proto")], content: body })).toBe("remote.org");
  });

  it("refuses a missing header", async () => {
    for (const authorization of [[], ["Bearer abc"]]) {
      const e = await refusal({ method: "GET", uri, authorization });
      expect([e.httpStatus, e.errcode, e.message]).toEqual([401, "M_UNAUTHORIZED", "Missing Authorization headers"]);
    }
  });

  it("refuses another destination", async () => {
    const e = await refusal({ method: "PUT", uri, authorization: [good], content: body }, { ...deps, serverName: "other.org" });
    expect([e.httpStatus, e.errcode, e.message]).toEqual([401, "M_UNAUTHORIZED", "Destination mismatch in auth header, received: 'us.org'"]);
  });

  it("refuses a body, method or uri other than the signed ones", async () => {
    for (const req of [
      { method: "PUT", uri, authorization: [good], content: { hello: "there" } },
      { method: "PUT", uri, authorization: [good], content: undefined },
      { method: "POST", uri, authorization: [good], content: body },
      { method: "PUT", uri: uri + "?a=b", authorization: [good], content: body },
    ]) {
      const e = await refusal(req);
      expect([e.httpStatus, e.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
      expect(e.message).toMatch(/^Invalid signature for server remote\.org with key ed25519:/);
    }
  });

  it("refuses a signature by an unknown key, or an unknown server", async () => {
    const other = generateSigningKey();
    const e = await refusal({ method: "PUT", uri, authorization: [signRequest({ method: "PUT", uri, origin: "remote.org", destination: "us.org", content: body }, other)], content: body });
    expect([e.httpStatus, e.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
    expect(e.message).toContain("Failed to find any key to satisfy");
    const stranger = await refusal({ method: "GET", uri, authorization: [signRequest({ method: "GET", uri, origin: "stranger.org", destination: "us.org" }, remote)] });
    expect(stranger.httpStatus).toBe(401);
  });

  it("needs every signature by a known key to verify; headers naming two origins are malformed", async () => {
    const tampered = good.replace(/sig="([^"]*)"/, (_m, s: string) => `sig="${s.startsWith("A") ? "B" : "A"}${s.slice(1)}"`);
    const second = signRequest({ method: "PUT", uri, origin: "remote.org", destination: "us.org", content: body }, { keyId: "ed25519:zz", privateKey: remote.privateKey });
    expect((await refusal({ method: "PUT", uri, authorization: [tampered], content: body })).httpStatus).toBe(401);
    // A second signature with a key id we cannot find does not spoil a good one...
    expect(await authenticateRequest(deps, { method: "PUT", uri, authorization: [good, second], content: body })).toBe("remote.org");
    // ...but a bad signature with a known key does.
    expect((await refusal({ method: "PUT", uri, authorization: [second, tampered], content: body })).httpStatus).toBe(401);
    const otherOrigin = signRequest({ method: "PUT", uri, origin: "x.org", destination: "us.org", content: body }, remote);
    expect((await refusal({ method: "PUT", uri, authorization: [good, otherOrigin], content: body })).httpStatus).toBe(400);
  });
});
