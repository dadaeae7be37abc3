// The server's own Ed25519 signing keys, kept in Synapse's key file format: one key a line,
// `ed25519 <version> <unpadded base64 32-byte seed>`. Key ids are `ed25519:<version>` with the version in
// [a-zA-Z0-9_] (Spec: Server-Server API, "Publishing Keys"; Appendices, "Signing Details").
import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { base64Unpadded } from "./canonical-json.js";
import { decodeBase64Strict, ED25519, privateKeyFromSeed, publicKeyFromBytes, rawPublicKey } from "./signing.js";
import { randomString } from "./ids.js";
const VERSION_RE = /^[A-Za-z0-9_]+$/;
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Whether a key version fits the spec's `[a-zA-Z0-9_]` rule for key ids. */
export function isValidKeyVersion(version) {
    return VERSION_RE.test(version);
}
/** A new key version as Synapse makes them: `a_` and 4 random letters. */
export function generateKeyVersion() {
    return "a_" + randomString(4, LETTERS);
}
/** Builds a SigningKey from its 32-byte seed and version. Throws on a bad seed or version. */
export function signingKeyFromSeed(seed, version) {
    if (!isValidKeyVersion(version))
        throw new Error(`Invalid signing key version ${JSON.stringify(version)}: use [a-zA-Z0-9_]`);
    const privateKey = privateKeyFromSeed(seed);
    const publicKey = rawPublicKey(privateKey);
    return {
        algorithm: ED25519,
        version,
        keyId: `${ED25519}:${version}`,
        seed: Buffer.from(seed),
        publicKey,
        publicKeyBase64: base64Unpadded(publicKey),
        privateKey,
        publicKeyObject: publicKeyFromBytes(publicKey),
    };
}
/** A fresh random signing key (version `a_XXXX` unless given). */
export function generateSigningKey(version = generateKeyVersion()) {
    return signingKeyFromSeed(randomBytes(32), version);
}
/**
 * Parses a key file: every non-blank line that is not a `#` comment is `ed25519 <version> <seed>`.
 * Throws an Error naming the line for anything else (unknown algorithm, bad version, a seed that is not
 * 32 bytes of base64, a repeated key id). `source` names the file in messages.
 */
export function parseSigningKeyFile(text, source = "signing key file") {
    const keys = [];
    const seen = new Set();
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
        const line = lines[i].trim();
        if (line === "" || line.startsWith("#"))
            continue;
        const where = `${source}, line ${i + 1}`;
        const fields = line.split(/\s+/);
        if (fields.length !== 3) {
            throw new Error(`${where}: expected "ed25519 <version> <base64 seed>", found ${fields.length} field(s)`);
        }
        const [algorithm, version, seedText] = fields;
        if (algorithm !== ED25519)
            throw new Error(`${where}: unsupported key algorithm ${JSON.stringify(algorithm)} (only ed25519)`);
        if (!isValidKeyVersion(version))
            throw new Error(`${where}: key version ${JSON.stringify(version)} may only use [a-zA-Z0-9_]`);
        const seed = decodeBase64Strict(seedText);
        if (!seed)
            throw new Error(`${where}: the key is not valid base64`);
        if (seed.length !== 32)
            throw new Error(`${where}: the key decodes to ${seed.length} bytes; an ed25519 seed is 32`);
        const keyId = `${ED25519}:${version}`;
        if (seen.has(keyId))
            throw new Error(`${where}: key ${keyId} appears twice`);
        seen.add(keyId);
        keys.push(signingKeyFromSeed(seed, version));
    }
    return keys;
}
/** Formats keys as a key file, one `ed25519 <version> <unpadded base64 seed>` line each. */
export function formatSigningKeyFile(keys) {
    return keys.map((k) => `${k.algorithm} ${k.version} ${base64Unpadded(k.seed)}\n`).join("");
}
/**
 * Reads every key of the key file at `path`; when the file does not exist, creates it (and its parent
 * directories) holding one new key, with mode 0600. The first key is the one the server signs with.
 * Throws if the file exists but holds no key or a malformed line.
 */
export async function loadOrCreateSigningKeys(path) {
    let text;
    try {
        text = await readFile(path, "utf8");
    }
    catch (err) {
        if (err.code !== "ENOENT")
            throw err;
        const key = generateSigningKey();
        if (await publishNewFile(path, formatSigningKeyFile([key])))
            return [key];
        // Another process created the file first: use its key.
        text = await readFile(path, "utf8");
    }
    const keys = parseSigningKeyFile(text, path);
    if (keys.length === 0)
        throw new Error(`${path}: the signing key file holds no key`);
    return keys;
}
/**
 * Writes a complete new file (mode 0600) at `path` unless one exists: the text goes to a temporary file
 * that is then hard-linked into place, so no reader ever sees a half-written key and no existing key is
 * overwritten. Returns false when `path` already existed.
 */
async function publishNewFile(path, text) {
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(tmp, text, { mode: 0o600, flag: "wx" });
    try {
        await link(tmp, path);
        return true;
    }
    catch (err) {
        if (err.code === "EEXIST")
            return false;
        throw err;
    }
    finally {
        await unlink(tmp).catch(() => undefined);
    }
}
/** The server's signing key: the first key of the file at `path`, created as for loadOrCreateSigningKeys. */
export async function loadOrCreateSigningKey(path) {
    return (await loadOrCreateSigningKeys(path))[0];
}
