// The key document of GET /_matrix/key/v2/server: built signed by every current key, verified as
// self-signed, with old keys, millisecond validity, and tampering or malformed documents rejected.
import { createHash } from "node:crypto";
import * as ed from "@noble/ed25519";
import { describe, expect, it } from "vitest";
import { canonicalJson, decodeBase64 } from "../../src/domain/canonical-json.ts";
import { buildServerKeysResponse, verifyServerKeysResponse, type ServerKeysResponse } from "../../src/domain/keys/server-keys.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";
import { signJson, verifyJsonSignature } from "../../src/domain/signing.ts";

ed.hashes.sha512 = (m) => new Uint8Array(createHash("sha512").update(m).digest());

const DAY = 24 * 60 * 60 * 1000;
const key1 = generateSigningKey("a_One");
const key2 = generateSigningKey("a_Two");
const oldKey = generateSigningKey("a_Old");

function build(now = Date.now()): ServerKeysResponse {
  return buildServerKeysResponse({
    serverName: "example.org",
    keys: [key1, key2],
    oldKeys: [{ keyId: oldKey.keyId, publicKeyBase64: oldKey.publicKeyBase64, expiredTs: 1532645052628 }],
    validityMs: DAY,
    now,
  });
}

/** A deep copy, as a remote server would receive it over the wire. */
const wire = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, any>;

describe("buildServerKeysResponse", () => {
  it("publishes current and old keys in the spec's shape", () => {
    const doc = build(1_700_000_000_000);
    expect(Object.keys(doc).sort()).toEqual(["old_verify_keys", "server_name", "signatures", "valid_until_ts", "verify_keys"]);
    expect(doc.server_name).toBe("example.org");
    expect(doc.verify_keys).toEqual({
      "ed25519:a_One": { key: key1.publicKeyBase64 },
      "ed25519:a_Two": { key: key2.publicKeyBase64 },
    });
    expect(doc.old_verify_keys).toEqual({ "ed25519:a_Old": { key: oldKey.publicKeyBase64, expired_ts: 1532645052628 } });
    expect(doc.valid_until_ts).toBe(1_700_000_000_000 + DAY);
    expect(() => canonicalJson(doc)).not.toThrow();
  });

  it("valid_until_ts is in milliseconds and in the future", () => {
    const before = Date.now();
    const doc = buildServerKeysResponse({ serverName: "example.org", keys: [key1], validityMs: DAY });
    expect(Number.isSafeInteger(doc.valid_until_ts)).toBe(true);
    expect(doc.valid_until_ts).toBeGreaterThanOrEqual(before + DAY);
    expect(doc.valid_until_ts).toBeLessThanOrEqual(Date.now() + DAY);
    // Milliseconds, not seconds: later than 2001-09-09 in ms (1e12).
    expect(doc.valid_until_ts).toBeGreaterThan(1e12);
    expect(doc.old_verify_keys).toEqual({});
    expect(buildServerKeysResponse({ serverName: "e.org", keys: [key1], validityMs: 1.5, now: 1000.25 }).valid_until_ts).toBe(1001);
  });

  it("is signed by every current key, not by old ones", () => {
    const doc = build();
    expect(Object.keys(doc.signatures)).toEqual(["example.org"]);
    expect(Object.keys(doc.signatures["example.org"]!).sort()).toEqual(["ed25519:a_One", "ed25519:a_Two"]);
    expect(verifyJsonSignature(doc, "example.org", key1.keyId, key1.publicKeyBase64)).toBe(true);
    expect(verifyJsonSignature(doc, "example.org", key2.keyId, key2.publicKeyBase64)).toBe(true);
  });

  it("signatures check out with an independent Ed25519 (noble) over the canonical JSON", () => {
    const doc = build();
    const { signatures, ...body } = doc;
    const bytes = Buffer.from(canonicalJson(body), "utf8");
    for (const k of [key1, key2]) {
      expect(ed.verify(decodeBase64(signatures["example.org"]![k.keyId]!), bytes, k.publicKey)).toBe(true);
    }
  });

  it("refuses configuration mistakes", () => {
    const base = { serverName: "example.org", keys: [key1], validityMs: DAY };
    expect(() => buildServerKeysResponse({ ...base, keys: [] })).toThrow(/no signing key/);
    expect(() => buildServerKeysResponse({ ...base, validityMs: 0 })).toThrow(/validity/);
    expect(() => buildServerKeysResponse({ ...base, validityMs: NaN })).toThrow(/validity/);
    expect(() =>
      buildServerKeysResponse({ ...base, oldKeys: [{ keyId: key1.keyId, publicKeyBase64: key1.publicKeyBase64, expiredTs: 1 }] }),
    ).toThrow(/both current and old/);
  });
});

describe("verifyServerKeysResponse", () => {
  it("accepts a document self-signed by each verify key, as received over the wire", () => {
    const result = verifyServerKeysResponse(wire(build()));
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.response.verify_keys["ed25519:a_One"]!.key).toBe(key1.publicKeyBase64);
    expect(verifyServerKeysResponse(wire(build()), { expectedServerName: "example.org" }).ok).toBe(true);
  });

  it("accepts a document without old_verify_keys, and ignores keys of unknown algorithms", () => {
    const doc = wire(build());
    delete doc.old_verify_keys;
    doc.verify_keys["future:x"] = { key: "whatever" };
    const resigned = signJson(signJson({ ...doc, signatures: {} }, "example.org", key1), "example.org", key2);
    const result = verifyServerKeysResponse(resigned);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.response.old_verify_keys).toEqual({});
  });

  it("detects tampering with any field", () => {
    const tamper: ((d: Record<string, any>) => void)[] = [
      (d) => (d.valid_until_ts += 1),
      (d) => (d.verify_keys["ed25519:a_One"].key = oldKey.publicKeyBase64),
      (d) => (d.old_verify_keys["ed25519:a_Old"].expired_ts = 1),
      (d) => delete d.old_verify_keys["ed25519:a_Old"],
      (d) => (d.extra = "field"),
    ];
    for (const change of tamper) {
      const doc = wire(build());
      change(doc);
      const result = verifyServerKeysResponse(doc);
      expect(result.ok, change.toString()).toBe(false);
    }
  });

  it("names the key whose signature is missing or wrong", () => {
    const doc = wire(build());
    delete doc.signatures["example.org"]["ed25519:a_Two"];
    expect(verifyServerKeysResponse(doc)).toEqual({ ok: false, reason: "not signed by its own key ed25519:a_Two" });
    const swapped = wire(build());
    const sigs = swapped.signatures["example.org"];
    [sigs["ed25519:a_One"], sigs["ed25519:a_Two"]] = [sigs["ed25519:a_Two"], sigs["ed25519:a_One"]];
    expect(verifyServerKeysResponse(swapped).ok).toBe(false);
  });

  it("rejects a listed key that did not sign, even when the others did", () => {
    const doc = wire(build());
    doc.verify_keys["ed25519:unsigned"] = { key: generateSigningKey().publicKeyBase64 };
    // Any change breaks the existing signatures...
    expect(verifyServerKeysResponse(doc).ok).toBe(false);
    // ...and re-signed by the two real keys only, the third key is still missing its signature.
    const resigned = signJson(signJson({ ...doc, signatures: {} }, "example.org", key1), "example.org", key2);
    expect(verifyServerKeysResponse(resigned)).toEqual({ ok: false, reason: "not signed by its own key ed25519:unsigned" });
  });

  it("rejects signatures made under another server name, or the wrong server", () => {
    const doc = buildServerKeysResponse({ serverName: "example.org", keys: [key1], validityMs: DAY });
    const relabelled = wire({ ...doc, server_name: "evil.org" });
    expect(verifyServerKeysResponse(relabelled).ok).toBe(false);
    const result = verifyServerKeysResponse(wire(doc), { expectedServerName: "other.org" });
    expect(result).toEqual({ ok: false, reason: 'server_name "example.org" is not "other.org"' });
  });

  it("rejects malformed documents without throwing", () => {
    const good = wire(build());
    const variants: unknown[] = [
      null,
      "x",
      [],
      {},
      { ...good, server_name: 5 },
      { ...good, server_name: "bad host" },
      { ...good, valid_until_ts: "1" },
      { ...good, valid_until_ts: 1.5 },
      { ...good, valid_until_ts: undefined },
      { ...good, verify_keys: [] },
      { ...good, verify_keys: {} },
      { ...good, verify_keys: { "ed25519:a_One": "key" } },
      { ...good, verify_keys: { "ed25519:a_One": { key: "short" } } },
      { ...good, old_verify_keys: [] },
      { ...good, old_verify_keys: { "ed25519:x": { key: oldKey.publicKeyBase64 } } },
      { ...good, old_verify_keys: { "ed25519:x": { key: "bad", expired_ts: 1 } } },
      { ...good, signatures: undefined },
      { ...good, signatures: "sig" },
      { ...good, signatures: { "example.org": null } },
      { ...good, signatures: { "example.org": { "ed25519:a_One": 1, "ed25519:a_Two": "!!" } } },
    ];
    for (const v of variants) {
      const result = verifyServerKeysResponse(v);
      expect(result.ok, JSON.stringify(v)?.slice(0, 120)).toBe(false);
      if (!result.ok) expect(result.reason.length).toBeGreaterThan(0);
    }
  });
});
