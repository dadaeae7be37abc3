// JSON signing and the signing key file: the spec's "Cryptographic Test Vectors" (JSON Signing),
// interoperability of node:crypto with @noble/ed25519 both ways, tampering, malformed input, key files.
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ed from "@noble/ed25519";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base64Unpadded, decodeBase64 } from "../../src/domain/canonical-json.ts";
import {
  decodeBase64Strict,
  privateKeyFromSeed,
  publicKeyFromBase64,
  signatureKeyIds,
  signBytes,
  signingBytes,
  signJson,
  verifyBytes,
  verifyJsonSignature,
} from "../../src/domain/signing.ts";
import {
  formatSigningKeyFile,
  generateKeyVersion,
  generateSigningKey,
  loadOrCreateSigningKey,
  loadOrCreateSigningKeys,
  parseSigningKeyFile,
  signingKeyFromSeed,
} from "../../src/domain/signing-key.ts";

ed.hashes.sha512 = (m) => new Uint8Array(createHash("sha512").update(m).digest());

// Spec, Appendices, "Cryptographic Test Vectors".
const SIGNING_KEY_SEED = decodeBase64("YJDBA9Xnr2sVqXD9Vj7XVUnmFZcZrlw8Md7kMW+3XA1");
const SERVER_NAME = "domain";
const specKey = signingKeyFromSeed(SIGNING_KEY_SEED, "1");

describe("spec test vectors: JSON signing", () => {
  it("the key is ed25519:1 from a 32-byte seed", () => {
    expect(SIGNING_KEY_SEED.length).toBe(32);
    expect(specKey.keyId).toBe("ed25519:1");
    expect(Buffer.from(ed.getPublicKey(SIGNING_KEY_SEED))).toEqual(specKey.publicKey);
  });

  it("signs {}", () => {
    expect(signJson({}, SERVER_NAME, specKey)).toEqual({
      signatures: {
        domain: {
          "ed25519:1": "K8280/U9SSy9IVtjBuVeLr+HpOB4BQFWbg+UZaADMtTdGYI7Geitb76LTrr5QV/7Xg4ahLwYGYZzuHGZKM5ZAQ",
        },
      },
    });
  });

  it('signs {"one":1,"two":"Two"}', () => {
    expect(signJson({ one: 1, two: "Two" }, SERVER_NAME, specKey)).toEqual({
      one: 1,
      signatures: {
        domain: {
          "ed25519:1": "KqmLSbO39/Bzb0QIYE82zqLwsA+PDzYIpIRA2sRQ4sL53+sN6/fpNSoqE7BP7vBZhG6kYdD13EIMJpvhJI+6Bw",
        },
      },
      two: "Two",
    });
  });

  it("verifies the spec's signed objects", () => {
    const signedEmpty = {
      signatures: { domain: { "ed25519:1": "K8280/U9SSy9IVtjBuVeLr+HpOB4BQFWbg+UZaADMtTdGYI7Geitb76LTrr5QV/7Xg4ahLwYGYZzuHGZKM5ZAQ" } },
    };
    const signedData = {
      one: 1,
      signatures: { domain: { "ed25519:1": "KqmLSbO39/Bzb0QIYE82zqLwsA+PDzYIpIRA2sRQ4sL53+sN6/fpNSoqE7BP7vBZhG6kYdD13EIMJpvhJI+6Bw" } },
      two: "Two",
    };
    expect(verifyJsonSignature(signedEmpty, SERVER_NAME, "ed25519:1", specKey.publicKeyBase64)).toBe(true);
    expect(verifyJsonSignature(signedData, SERVER_NAME, "ed25519:1", specKey.publicKeyBase64)).toBe(true);
    // The two signatures swapped: each is valid, but not for the other object.
    const swapped = { ...signedData, signatures: signedEmpty.signatures };
    expect(verifyJsonSignature(swapped, SERVER_NAME, "ed25519:1", specKey.publicKeyBase64)).toBe(false);
  });

  it("the signature covers neither unsigned nor signatures", () => {
    const signed = signJson({ one: 1, two: "Two", unsigned: { age_ts: 922834800000 } }, SERVER_NAME, specKey);
    expect(signed.signatures.domain!["ed25519:1"]).toBe(
      "KqmLSbO39/Bzb0QIYE82zqLwsA+PDzYIpIRA2sRQ4sL53+sN6/fpNSoqE7BP7vBZhG6kYdD13EIMJpvhJI+6Bw",
    );
    expect(signed.unsigned).toEqual({ age_ts: 922834800000 });
  });
});

describe("node:crypto and @noble/ed25519 agree", () => {
  const messages = [new Uint8Array(0), Buffer.from("{}"), randomBytes(247), randomBytes(4096)];

  it("node signs, noble verifies; signatures are byte-identical", () => {
    for (let i = 0; i < 8; i++) {
      const key = generateSigningKey();
      expect(Buffer.from(ed.getPublicKey(key.seed))).toEqual(key.publicKey);
      for (const msg of messages) {
        const sig = signBytes(msg, key.privateKey);
        expect(sig.length).toBe(64);
        expect(ed.verify(sig, msg, key.publicKey)).toBe(true);
        expect(Buffer.from(ed.sign(msg, key.seed))).toEqual(sig);
      }
    }
  });

  it("noble signs, node verifies (bytes and JSON)", () => {
    for (let i = 0; i < 8; i++) {
      const seed = randomBytes(32);
      const pub = ed.getPublicKey(seed);
      const pubB64 = base64Unpadded(pub);
      for (const msg of messages) {
        const sig = ed.sign(msg, seed);
        expect(verifyBytes(msg, sig, pubB64)).toBe(true);
        expect(verifyBytes(msg, sig, pub)).toBe(true);
        expect(verifyBytes(msg, base64Unpadded(sig), publicKeyFromBase64(pubB64)!)).toBe(true);
      }
      const obj = { type: "m.test", content: { body: "日本語 😀", n: 42 }, unsigned: { age: 1 } };
      const sig = ed.sign(signingBytes(obj), seed);
      const signed = { ...obj, signatures: { "example.org": { "ed25519:x": base64Unpadded(sig) } } };
      expect(verifyJsonSignature(signed, "example.org", "ed25519:x", pubB64)).toBe(true);
    }
  });

  it("a JSON signature by node verifies with noble over the canonical bytes", () => {
    const key = generateSigningKey();
    const signed = signJson({ b: [1, 2, { z: null }], a: "ü" }, "example.org", key);
    const sig = decodeBase64(signed.signatures["example.org"]![key.keyId]!);
    const bytes = Buffer.from('{"a":"ü","b":[1,2,{"z":null}]}', "utf8");
    expect(ed.verify(sig, bytes, key.publicKey)).toBe(true);
  });
});

describe("signJson", () => {
  const key = generateSigningKey("k1");
  const key2 = generateSigningKey("k2");

  it("keeps other signatures, unsigned, and does not modify its input", () => {
    const input = {
      a: 1,
      unsigned: { age: 5 },
      signatures: { "other.org": { "ed25519:o": "sig-o" }, "example.org": { "ed25519:old": "sig-old" } },
    };
    const snapshot = structuredClone(input);
    const out = signJson(input, "example.org", key);
    expect(input).toEqual(snapshot);
    expect(out.unsigned).toEqual({ age: 5 });
    expect(out.signatures["other.org"]).toEqual({ "ed25519:o": "sig-o" });
    expect(out.signatures["example.org"]!["ed25519:old"]).toBe("sig-old");
    expect(out.signatures["example.org"]!["ed25519:k1"]).toMatch(/^[A-Za-z0-9+/]{86}$/);
    expect(verifyJsonSignature(out, "example.org", "ed25519:k1", key.publicKeyBase64)).toBe(true);
    // The copy's signatures are its own.
    out.signatures["other.org"]!["ed25519:o"] = "changed";
    expect(input.signatures["other.org"]["ed25519:o"]).toBe("sig-o");
  });

  it("signs with several keys and servers; each signature verifies", () => {
    const once = signJson({ x: "y" }, "example.org", key);
    const twice = signJson(once, "example.org", key2);
    const thrice = signJson(twice, "@alice:example.org", key);
    expect(signatureKeyIds(thrice, "example.org").sort()).toEqual(["ed25519:k1", "ed25519:k2"]);
    expect(signatureKeyIds(thrice, "@alice:example.org")).toEqual(["ed25519:k1"]);
    expect(signatureKeyIds(thrice, "nobody.org")).toEqual([]);
    expect(verifyJsonSignature(thrice, "example.org", "ed25519:k1", key.publicKeyBase64)).toBe(true);
    expect(verifyJsonSignature(thrice, "example.org", "ed25519:k2", key2.publicKeyBase64)).toBe(true);
    expect(verifyJsonSignature(thrice, "@alice:example.org", "ed25519:k1", key.publicKeyBase64)).toBe(true);
    expect(verifyJsonSignature(thrice, "example.org", "ed25519:k2", key.publicKeyBase64)).toBe(false);
  });

  it("re-signing replaces the key's own signature", () => {
    const out = signJson({ a: 1, signatures: { "example.org": { "ed25519:k1": "stale" } } }, "example.org", key);
    expect(Object.keys(out.signatures["example.org"]!)).toEqual(["ed25519:k1"]);
    expect(verifyJsonSignature(out, "example.org", "ed25519:k1", key.publicKeyBase64)).toBe(true);
  });

  it("keeps a signer named __proto__ as an ordinary member", () => {
    const input = JSON.parse('{"a":1,"signatures":{"__proto__":{"ed25519:p":"sig-p"}}}') as Record<string, unknown>;
    const out = signJson(input, "example.org", key);
    expect(Object.keys(out.signatures).sort()).toEqual(["__proto__", "example.org"]);
    expect(JSON.parse(JSON.stringify(out)).signatures.__proto__).toEqual({ "ed25519:p": "sig-p" });
  });

  it("throws M_BAD_JSON for values canonical JSON cannot carry", () => {
    expect(() => signJson({ a: 1.5 }, "example.org", key)).toThrow(expect.objectContaining({ errcode: "M_BAD_JSON" }));
  });
});

describe("verifyJsonSignature rejects without throwing", () => {
  const key = generateSigningKey("v");
  const signed = signJson({ room: "!a:example.org", n: 1, nested: { list: [1, 2] }, unsigned: { x: 1 } }, "example.org", key);
  const good = signed.signatures["example.org"]!["ed25519:v"]!;
  const check = (obj: unknown, server = "example.org", keyId = "ed25519:v", pub: string = key.publicKeyBase64) =>
    verifyJsonSignature(obj, server, keyId, pub);

  it("accepts the untouched object, and changes to unsigned or others' signatures", () => {
    expect(check(signed)).toBe(true);
    expect(check({ ...signed, unsigned: { x: 2, y: 3 } })).toBe(true);
    expect(check({ ...signed, signatures: { ...signed.signatures, "x.org": { "ed25519:a": "b" } } })).toBe(true);
    expect(check(JSON.parse(JSON.stringify(signed)))).toBe(true);
  });

  it("detects tampering", () => {
    expect(check({ ...signed, n: 2 })).toBe(false);
    expect(check({ ...signed, extra: true })).toBe(false);
    expect(check({ ...signed, nested: { list: [2, 1] } })).toBe(false);
    const { n: _n, ...withoutN } = signed;
    expect(check(withoutN)).toBe(false);
    const flipped = Buffer.from(decodeBase64(good));
    flipped[10] ^= 1;
    expect(check({ ...signed, signatures: { "example.org": { "ed25519:v": base64Unpadded(flipped) } } })).toBe(false);
  });

  it("rejects the wrong key, server, key id or algorithm", () => {
    expect(check(signed, "example.org", "ed25519:v", generateSigningKey().publicKeyBase64)).toBe(false);
    expect(check(signed, "other.org")).toBe(false);
    expect(check(signed, "example.org", "ed25519:w")).toBe(false);
    const otherAlg = { ...signed, signatures: { "example.org": { "curve25519:v": good } } };
    expect(check(otherAlg, "example.org", "curve25519:v")).toBe(false);
  });

  it("returns false for malformed signatures, keys and objects", () => {
    const withSig = (sig: unknown) => ({ ...signed, signatures: { "example.org": { "ed25519:v": sig } } });
    for (const bad of ["", "!!!!", "not base64 at all", good.slice(0, 85), good + "AA", good.slice(0, 43), 42, null, {}, [good]]) {
      expect(check(withSig(bad))).toBe(false);
    }
    expect(check({ ...signed, signatures: "x" })).toBe(false);
    expect(check({ ...signed, signatures: { "example.org": "x" } })).toBe(false);
    expect(check({ ...signed, signatures: null })).toBe(false);
    const { signatures: _s, ...unsignedObj } = signed;
    expect(check(unsignedObj)).toBe(false);
    for (const obj of [null, undefined, 1, "x", [], [signed]]) expect(check(obj)).toBe(false);
    expect(check({ ...signed, f: 1.5 })).toBe(false);
    for (const pub of ["", "abc", "!!!", key.publicKeyBase64.slice(1), key.publicKeyBase64 + "AA", "A".repeat(43)]) {
      expect(check(signed, "example.org", "ed25519:v", pub)).toBe(false);
    }
  });

  it("accepts padded and URL-safe base64 for signature and key", () => {
    const padded = good + "==";
    const urlSafe = good.replace(/\+/g, "-").replace(/\//g, "_");
    expect(check({ ...signed, signatures: { "example.org": { "ed25519:v": padded } } })).toBe(true);
    expect(check({ ...signed, signatures: { "example.org": { "ed25519:v": urlSafe } } })).toBe(true);
    expect(check(signed, "example.org", "ed25519:v", key.publicKeyBase64 + "=")).toBe(true);
  });

  it("verifyBytes never throws", () => {
    const msg = Buffer.from("hi");
    const sig = signBytes(msg, key.privateKey);
    expect(verifyBytes(msg, sig, key.publicKeyObject)).toBe(true);
    expect(verifyBytes(msg, sig.subarray(1), key.publicKeyObject)).toBe(false);
    expect(verifyBytes(msg, sig, new Uint8Array(31))).toBe(false);
    expect(verifyBytes(msg, "%%%", key.publicKey)).toBe(false);
    expect(verifyBytes(msg, sig, new Uint8Array(32).fill(0xff))).toBe(false);
  });
});

describe("keys and base64", () => {
  it("caches KeyObjects", () => {
    const seed = randomBytes(32);
    expect(privateKeyFromSeed(seed)).toBe(privateKeyFromSeed(Buffer.from(seed)));
    const key = signingKeyFromSeed(seed, "c");
    expect(publicKeyFromBase64(key.publicKeyBase64)).toBe(publicKeyFromBase64(key.publicKeyBase64));
  });

  it("rejects seeds that are not 32 bytes", () => {
    expect(() => privateKeyFromSeed(new Uint8Array(31))).toThrow();
    expect(() => signingKeyFromSeed(new Uint8Array(33), "a")).toThrow();
  });

  it("decodeBase64Strict tells data from garbage", () => {
    expect(decodeBase64Strict("Zm9vYg")).toEqual(Buffer.from("foob"));
    expect(decodeBase64Strict("Zm9vYg==")).toEqual(Buffer.from("foob"));
    expect(decodeBase64Strict("")).toEqual(Buffer.alloc(0));
    expect(decodeBase64Strict("Zm9vY")).toBeUndefined();
    expect(decodeBase64Strict("Zm9vYg=")).toBeUndefined();
    expect(decodeBase64Strict("Zm 9v")).toBeUndefined();
    expect(decodeBase64Strict("Zm9v*g")).toBeUndefined();
  });
});

describe("signing key file", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "weft-signing-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("generates Synapse-style versions", () => {
    for (let i = 0; i < 20; i++) expect(generateKeyVersion()).toMatch(/^a_[A-Za-z]{4}$/);
    const key = generateSigningKey();
    expect(key.algorithm).toBe("ed25519");
    expect(key.keyId).toBe(`ed25519:${key.version}`);
    expect(key.seed.length).toBe(32);
    expect(key.publicKey.length).toBe(32);
    expect(key.publicKeyBase64).toBe(base64Unpadded(key.publicKey));
  });

  it("round-trips keys through the file format", () => {
    const keys = [generateSigningKey(), generateSigningKey("b_2"), signingKeyFromSeed(SIGNING_KEY_SEED, "1")];
    const text = formatSigningKeyFile(keys);
    expect(text.split("\n")[0]).toMatch(/^ed25519 a_[A-Za-z]{4} [A-Za-z0-9+/]{43}$/);
    expect(text.endsWith("\n")).toBe(true);
    const parsed = parseSigningKeyFile(text);
    expect(parsed.map((k) => k.keyId)).toEqual(keys.map((k) => k.keyId));
    expect(parsed.map((k) => k.seed)).toEqual(keys.map((k) => k.seed));
    expect(parsed.map((k) => k.publicKeyBase64)).toEqual(keys.map((k) => k.publicKeyBase64));
    expect(formatSigningKeyFile(parsed)).toBe(text);
  });

  it("reads the spec's seed, comments, blank lines, CRLF and extra spaces", () => {
    const text = "# the server key\r\n\r\n  ed25519   1\tYJDBA9Xnr2sVqXD9Vj7XVUnmFZcZrlw8Md7kMW+3XA1  \r\n# end\n";
    const [key, ...rest] = parseSigningKeyFile(text);
    expect(rest).toEqual([]);
    expect(key!.keyId).toBe("ed25519:1");
    expect(signJson({}, "domain", key!).signatures.domain!["ed25519:1"]).toBe(
      "K8280/U9SSy9IVtjBuVeLr+HpOB4BQFWbg+UZaADMtTdGYI7Geitb76LTrr5QV/7Xg4ahLwYGYZzuHGZKM5ZAQ",
    );
    expect(parseSigningKeyFile("")).toEqual([]);
  });

  it("explains malformed lines, naming the line", () => {
    const seed = base64Unpadded(randomBytes(32));
    const cases: [string, RegExp][] = [
      [`ed25519 a_x`, /line 1: expected .* found 2 field/],
      [`# ok\ned25519 a_x ${seed} extra`, /line 2: expected .* found 4 field/],
      [`rsa a_x ${seed}`, /unsupported key algorithm "rsa"/],
      [`ed25519 a-x ${seed}`, /key version "a-x" may only use/],
      [`ed25519 a_x ${seed.slice(0, 42)}`, /decodes to 31 bytes/],
      [`ed25519 a_x ${seed}AAAA`, /decodes to 35 bytes/],
      [`ed25519 a_x ${seed.slice(0, 40)}!!!`, /not valid base64/],
      [`ed25519 a_x ${seed}\ned25519 a_x ${seed}`, /line 2: key ed25519:a_x appears twice/],
    ];
    for (const [text, message] of cases) expect(() => parseSigningKeyFile(text, "keys.txt"), text).toThrow(message);
    expect(() => parseSigningKeyFile("ed25519 a_x", "/etc/weft/signing.key")).toThrow(/^\/etc\/weft\/signing.key, line 1/);
  });

  it("creates a missing key file (mode 0600, parent directories) and loads it again", async () => {
    const path = join(dir, "nested", "deeper", "example.org.signing.key");
    const key = await loadOrCreateSigningKey(path);
    expect(key.version).toMatch(/^a_[A-Za-z]{4}$/);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readFile(path, "utf8")).toBe(formatSigningKeyFile([key]));
    const again = await loadOrCreateSigningKey(path);
    expect(again.keyId).toBe(key.keyId);
    expect(again.seed).toEqual(key.seed);
  });

  it("loads every key of an existing file, the first being the signing key", async () => {
    const path = join(dir, "two.key");
    const keys = [generateSigningKey("first"), generateSigningKey("second")];
    await writeFile(path, formatSigningKeyFile(keys));
    expect((await loadOrCreateSigningKeys(path)).map((k) => k.keyId)).toEqual(["ed25519:first", "ed25519:second"]);
    expect((await loadOrCreateSigningKey(path)).keyId).toBe("ed25519:first");
  });

  it("refuses an existing file with no key or a bad line, without overwriting it", async () => {
    const empty = join(dir, "empty.key");
    await writeFile(empty, "# nothing here\n");
    await expect(loadOrCreateSigningKey(empty)).rejects.toThrow(/holds no key/);
    expect(await readFile(empty, "utf8")).toBe("# nothing here\n");
    const bad = join(dir, "bad.key");
    await writeFile(bad, "ed25519 a_x\n");
    await expect(loadOrCreateSigningKey(bad)).rejects.toThrow(/bad\.key, line 1/);
  });

  it("two concurrent first starts agree on one key", async () => {
    const path = join(dir, "race", "k.key");
    const [a, b] = await Promise.all([loadOrCreateSigningKey(path), loadOrCreateSigningKey(path)]);
    const onDisk = parseSigningKeyFile(await readFile(path, "utf8"));
    expect(onDisk).toHaveLength(1);
    // The loser of the race reads the winner's complete file.
    expect(a.seed).toEqual(onDisk[0]!.seed);
    expect(b.seed).toEqual(onDisk[0]!.seed);
    expect((await readdir(join(dir, "race"))).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});
