// The REST face's shared rules: both brands and API versions, OPTIONS and CORS on every path, 404/405
// M_UNRECOGNIZED, M_NOT_JSON / M_TOO_LARGE, /versions with optional auth, keys and .well-known.
import * as ed from "@noble/ed25519";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, decodeBase64 } from "../../src/domain/canonical-json.ts";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

ed.hashes.sha512 = (m: Uint8Array) => new Uint8Array(createHash("sha512").update(m).digest());

describe.each(backends())("REST face on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend, config: { max_request_body_size: 4096 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers OPTIONS 200 with CORS headers on every path, known or not", async () => {
    for (const p of ["/_matrix/client/v3/login", "/_proto/client/v3/sync", "/no/such/path", "/graphql"]) {
      const res = await t.call("OPTIONS", p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
      expect(res.headers.get("access-control-allow-headers")).toContain("Authorization");
    }
  });

  it("puts CORS headers on errors too", async () => {
    const res = await t.call("GET", "/_matrix/client/v3/account/whoami");
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("answers unknown paths 404 and wrong methods 405, both M_UNRECOGNIZED", async () => {
    const unknown = await t.call("GET", "/_matrix/client/v3/not-an-endpoint");
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    const unknownProto = await t.call("POST", "/_proto/client/v9/login", { body: {} });
    expect([unknownProto.status, unknownProto.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    for (const [method, p] of [["PUT", "/_matrix/client/v3/login"], ["DELETE", "/_proto/client/r0/account/whoami"], ["POST", "/_matrix/client/versions"]]) {
      const res = await t.call(method!, p!);
      expect([res.status, res.json.errcode], `${method} ${p}`).toEqual([405, "M_UNRECOGNIZED"]);
    }
  });

  it("serves client routes under both brands and r0 and v3", async () => {
    const s = await registerUser(t, "prefixes");
    for (const prefix of ["/_matrix/client/v3", "/_matrix/client/r0", "/_proto/client/v3", "/_proto/client/r0"]) {
      const res = await t.call("GET", `${prefix}/account/whoami`, { token: s.access_token });
      expect(res.json.user_id, prefix).toBe("@prefixes:weft.test");
    }
  });

  it("refuses bodies that are not JSON objects and bodies over the limit", async () => {
    expect((await t.call("POST", "/_matrix/client/v3/login", { raw: "{", headers: { "content-type": "application/json" } })).json.errcode).toBe("M_NOT_JSON");
    expect((await t.call("POST", "/_matrix/client/v3/login", { raw: "\"string\"" })).json.errcode).toBe("M_BAD_JSON");
    expect((await t.call("POST", "/_matrix/client/v3/login", { raw: "{}", headers: { "content-type": "text/plain" } })).json.errcode).toBe("M_MISSING_PARAM");
    const big = await t.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", pad: "x".repeat(10_000) } });
    expect([big.status, big.json.errcode]).toEqual([413, "M_TOO_LARGE"]);
  });

  it("serves /versions with optional authentication", async () => {
    const plain = await t.call("GET", "/_matrix/client/versions");
    expect(plain.status).toBe(200);
    expect(plain.json.versions).toEqual(expect.arrayContaining(["r0.6.1", "v1.1", "v1.11", "v1.19"]));
    expect(typeof plain.json.unstable_features).toBe("object");
    const s = await registerUser(t, "versioned");
    expect((await t.call("GET", "/_proto/client/versions", { token: s.access_token })).status).toBe(200);
    const bad = await t.call("GET", "/_matrix/client/versions", { token: "wft_bogus" });
    expect([bad.status, bad.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
  });

  it("publishes self-signed server keys valid for a time in milliseconds", async () => {
    const res = await t.call("GET", "/_matrix/key/v2/server");
    expect(res.status).toBe(200);
    const keys = res.json;
    expect(keys.server_name).toBe("weft.test");
    expect(keys.valid_until_ts).toBeGreaterThan(Date.now());
    expect(keys.valid_until_ts).toBeLessThan(Date.now() + 8 * 86_400_000);
    const [keyId, { key }] = Object.entries(keys.verify_keys as Record<string, { key: string }>)[0]!;
    expect(keyId).toMatch(/^ed25519:a_[A-Za-z]{4}$/);
    const { signatures, ...unsigned } = keys;
    const sig = decodeBase64(signatures["weft.test"][keyId]);
    // Independent check with @noble/ed25519 of the signature made with node:crypto.
    expect(ed.verify(sig, new TextEncoder().encode(canonicalJson(unsigned)), decodeBase64(key))).toBe(true);
    const viaProto = await t.call("GET", "/_proto/key/v2/server");
    expect(viaProto.json.verify_keys).toEqual(keys.verify_keys);
  });

  it("serves the key document as canonical JSON, so its signature checks over the bytes without `signatures`", async () => {
    const res = await fetch(`${t.baseUrl}/_matrix/key/v2/server`);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const text = await res.text();
    const doc = JSON.parse(text);
    expect(text).toBe(canonicalJson(doc));
    // Cut `signatures` out of the text as served (as Complement does with sjson), keep the rest byte for byte.
    const sigs = `"signatures":${canonicalJson(doc.signatures)}`;
    const cut = text.replace(`${sigs},`, "").replace(`,${sigs}`, "");
    const [keyId, { key }] = Object.entries(doc.verify_keys as Record<string, { key: string }>)[0]!;
    expect(ed.verify(decodeBase64(doc.signatures["weft.test"][keyId]), new TextEncoder().encode(cut), decodeBase64(key))).toBe(true);
  });

  it("serves .well-known discovery documents (the server one only with serve_server_wellknown, as Synapse)", async () => {
    const client = await t.call("GET", "/.well-known/matrix/client");
    expect(client.json["m.homeserver"].base_url).toBe(t.baseUrl);
    const server = await t.call("GET", "/.well-known/matrix/server");
    expect(server.status).toBe(404);
    expect(server.json.errcode).toBe("M_NOT_FOUND");
  });
});
