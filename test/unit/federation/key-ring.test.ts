// The key ring against a fake network: direct fetches checked (self-signed, right server), notaries
// checked (their configured key, each entry self-signed), validity (valid_until_ts capped at 7 days,
// old_verify_keys until expired_ts), one fetch for concurrent callers, and backoff for a server that
// does not answer.
import pino from "pino";
import { describe, expect, it } from "vitest";
import { BACKOFF_START_MS, FederatedKeyRing, MIN_REFETCH_MS, type KeyTransport } from "../../../src/domain/keys/key-ring.ts";
import { MAX_KEY_VALIDITY_MS } from "../../../src/domain/keys/remote-keys.ts";
import { buildServerKeysResponse } from "../../../src/domain/keys/server-keys.ts";
import type { StoredServerKey } from "../../../src/domain/store/server-keys.ts";
import { generateSigningKey, type SigningKey } from "../../../src/domain/signing-key.ts";
import { signJson } from "../../../src/domain/signing.ts";
import type { TrustedKeyServer } from "../../../src/config/federation.ts";

const DAY = 86_400_000;

class MemoryStore {
  rows = new Map<string, StoredServerKey>();
  async get(serverName: string, keyId: string) {
    return this.rows.get(`${serverName} ${keyId}`);
  }
  async store(keys: readonly StoredServerKey[]) {
    for (const k of keys) {
      const prev = this.rows.get(`${k.serverName} ${k.keyId}`);
      // As ServerKeyStore: longer validity wins, but an expiry (old_verify_keys) always holds.
      if (!prev || k.expiredTs !== null || (prev.expiredTs === null && k.validUntilTs >= prev.validUntilTs)) this.rows.set(`${k.serverName} ${k.keyId}`, k);
    }
  }
}

interface Remote {
  keys: SigningKey[];
  validityMs: number;
  oldKeys?: { keyId: string; publicKeyBase64: string; expiredTs: number }[];
  up: boolean;
  /** Overrides the served document. */
  serve?: (doc: Record<string, unknown>) => unknown;
}

function setup(opts: { notaries?: TrustedKeyServer[]; notaryAnswer?: (body: any) => unknown } = {}) {
  const clock = { ms: 1_700_000_000_000 };
  const remotes = new Map<string, Remote>();
  const calls: string[] = [];
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const transport: KeyTransport = {
    async fetchServerKeys(name) {
      calls.push(`direct ${name}`);
      if (gate) await gate;
      const r = remotes.get(name);
      if (!r || !r.up) throw new Error("ECONNREFUSED");
      const doc = buildServerKeysResponse({ serverName: name, keys: r.keys, oldKeys: r.oldKeys, validityMs: r.validityMs, now: clock.ms }) as unknown as Record<string, unknown>;
      return r.serve ? r.serve(doc) : doc;
    },
    async queryNotary(notary, body) {
      calls.push(`notary ${notary} ${JSON.stringify(body)}`);
      if (!opts.notaryAnswer) throw new Error("no notary");
      return opts.notaryAnswer(body);
    },
  };
  const store = new MemoryStore();
  const ring = new FederatedKeyRing({
    serverName: "us.org", ownKeys: [generateSigningKey()], store, transport,
    trustedKeyServers: opts.notaries ?? [], now: () => clock.ms, log: pino({ level: "silent" }),
  });
  return {
    ring, store, clock, remotes, calls,
    hold() {
      gate = new Promise((r) => (release = r));
    },
    release() {
      gate = undefined;
      release?.();
    },
  };
}

describe("FederatedKeyRing", () => {
  it("fetches a server's keys directly, stores them and answers later lookups from memory", async () => {
    const t = setup();
    const key = generateSigningKey();
    t.remotes.set("remote.org", { keys: [key], validityMs: DAY, up: true });
    const got = await t.ring.verifyKey("remote.org", key.keyId, t.clock.ms);
    expect(got?.export({ format: "der", type: "spki" })).toEqual(key.publicKeyObject.export({ format: "der", type: "spki" }));
    expect(t.store.rows.get(`remote.org ${key.keyId}`)).toMatchObject({ fromServer: "remote.org", validUntilTs: t.clock.ms + DAY, expiredTs: null });
    expect(await t.ring.verifyKey("remote.org", key.keyId, t.clock.ms + 1000)).toBeDefined();
    expect(t.calls).toEqual(["direct remote.org"]);
  });

  it("answers its own keys without any fetch", async () => {
    const t = setup();
    const own = (t.ring as unknown as { o: { ownKeys: SigningKey[] } }).o.ownKeys[0]!;
    expect(await t.ring.verifyKey("us.org", own.keyId, t.clock.ms)).toBe(own.publicKeyObject);
    expect(await t.ring.verifyKey("us.org", "ed25519:other", t.clock.ms)).toBeUndefined();
    expect(t.calls).toEqual([]);
  });

  it("honours valid_until_ts (capped at 7 days) and refetches when a key is asked for past it", async () => {
    const t = setup();
    const key = generateSigningKey();
    t.remotes.set("remote.org", { keys: [key], validityMs: 30 * DAY, up: true });
    const start = t.clock.ms;
    expect(await t.ring.verifyKey("remote.org", key.keyId, start)).toBeDefined();
    expect(t.store.rows.get(`remote.org ${key.keyId}`)!.validUntilTs).toBe(start + MAX_KEY_VALIDITY_MS);
    // An event of 8 days from now is past what we may trust: the server is asked again (and its new
    // answer, fetched later, covers it).
    t.clock.ms += 2 * DAY;
    expect(await t.ring.verifyKey("remote.org", key.keyId, start + 8 * DAY)).toBeDefined();
    expect(t.calls).toEqual(["direct remote.org", "direct remote.org"]);
    // Room versions 1–4 pass 0: any known key.
    expect(await t.ring.verifyKey("remote.org", key.keyId, 0)).toBeDefined();
  });

  it("old_verify_keys verify only what was signed before their expired_ts", async () => {
    const t = setup();
    const key = generateSigningKey();
    const old = generateSigningKey();
    const expiredTs = t.clock.ms - DAY;
    t.remotes.set("remote.org", { keys: [key], validityMs: DAY, up: true, oldKeys: [{ keyId: old.keyId, publicKeyBase64: old.publicKeyBase64, expiredTs }] });
    expect(await t.ring.verifyKey("remote.org", old.keyId, expiredTs - 1)).toBeDefined();
    expect(await t.ring.verifyKey("remote.org", old.keyId, t.clock.ms)).toBeUndefined();
    expect(t.store.rows.get(`remote.org ${old.keyId}`)).toMatchObject({ expiredTs, validUntilTs: expiredTs });
  });

  it("rejects answers that are not self-signed or name another server", async () => {
    const t = setup();
    const key = generateSigningKey();
    const liar = generateSigningKey();
    t.remotes.set("forged.org", { keys: [key], validityMs: DAY, up: true, serve: (d) => ({ ...d, verify_keys: { [key.keyId]: { key: liar.publicKeyBase64 } } }) });
    t.remotes.set("other.org", { keys: [key], validityMs: DAY, up: true, serve: () => buildServerKeysResponse({ serverName: "evil.org", keys: [key], validityMs: DAY, now: t.clock.ms }) });
    expect(await t.ring.verifyKey("forged.org", key.keyId, t.clock.ms)).toBeUndefined();
    expect(await t.ring.verifyKey("other.org", key.keyId, t.clock.ms)).toBeUndefined();
    expect(t.store.rows.size).toBe(0);
  });

  it("shares one fetch between concurrent callers", async () => {
    const t = setup();
    const key = generateSigningKey();
    t.remotes.set("remote.org", { keys: [key], validityMs: DAY, up: true });
    t.hold();
    const all = Promise.all(Array.from({ length: 20 }, () => t.ring.verifyKey("remote.org", key.keyId, t.clock.ms)));
    await new Promise((r) => setImmediate(r));
    t.release();
    expect((await all).every((k) => k !== undefined)).toBe(true);
    expect(t.calls).toEqual(["direct remote.org"]);
  });

  it("backs off from a server that does not answer, doubling, and asks again once it is due", async () => {
    const t = setup();
    const key = generateSigningKey();
    t.remotes.set("down.org", { keys: [key], validityMs: DAY, up: false });
    expect(await t.ring.verifyKey("down.org", key.keyId, t.clock.ms)).toBeUndefined();
    expect(await t.ring.verifyKey("down.org", key.keyId, t.clock.ms)).toBeUndefined();
    expect(t.calls).toHaveLength(1);
    t.clock.ms += BACKOFF_START_MS + 1;
    expect(await t.ring.verifyKey("down.org", key.keyId, t.clock.ms)).toBeUndefined();
    expect(t.calls).toHaveLength(2);
    t.clock.ms += BACKOFF_START_MS + 1; // the second backoff is twice as long
    await t.ring.verifyKey("down.org", key.keyId, t.clock.ms);
    expect(t.calls).toHaveLength(2);
    t.clock.ms += BACKOFF_START_MS;
    t.remotes.get("down.org")!.up = true;
    expect(await t.ring.verifyKey("down.org", key.keyId, t.clock.ms)).toBeDefined();
    expect(t.calls).toHaveLength(3);
  });

  it("does not ask a server that answered again for an unknown key id sooner than MIN_REFETCH_MS", async () => {
    const t = setup();
    const key = generateSigningKey();
    t.remotes.set("remote.org", { keys: [key], validityMs: DAY, up: true });
    expect(await t.ring.verifyKey("remote.org", "ed25519:nope", t.clock.ms)).toBeUndefined();
    expect(await t.ring.verifyKey("remote.org", "ed25519:nope2", t.clock.ms)).toBeUndefined();
    expect(t.calls).toHaveLength(1);
    t.clock.ms += MIN_REFETCH_MS + 1;
    await t.ring.verifyKey("remote.org", "ed25519:nope3", t.clock.ms);
    expect(t.calls).toHaveLength(2);
  });

  describe("through a notary", () => {
    const notaryKey = generateSigningKey();
    const originKey = generateSigningKey();
    const origin = (now: number) => buildServerKeysResponse({ serverName: "down.org", keys: [originKey], validityMs: DAY, now }) as unknown as Record<string, unknown>;

    it("asks the notaries first (Synapse's order), checks the notary's signature, and then does not ask the server itself", async () => {
      let now = 0;
      const t = setup({
        notaries: [{ server_name: "notary.org", verify_keys: { [notaryKey.keyId]: notaryKey.publicKeyBase64 }, accept_keys_insecurely: false }],
        notaryAnswer: () => ({ server_keys: [signJson(origin(now), "notary.org", notaryKey)] }),
      });
      now = t.clock.ms;
      expect(await t.ring.verifyKey("down.org", originKey.keyId, t.clock.ms)).toBeDefined();
      expect(t.calls).toHaveLength(1);
      expect(JSON.parse(t.calls[0]!.slice("notary notary.org ".length))).toEqual({ server_keys: { "down.org": { [originKey.keyId]: { minimum_valid_until_ts: t.clock.ms } } } });
      expect(t.store.rows.get(`down.org ${originKey.keyId}`)).toMatchObject({ fromServer: "notary.org" });
    });

    it("asks the server itself for a key no notary gives", async () => {
      const t = setup({ notaries: [{ server_name: "notary.org", accept_keys_insecurely: true }], notaryAnswer: () => ({ server_keys: [] }) });
      await t.ring.verifyKey("down.org", "ed25519:nowhere", t.clock.ms);
      expect(t.calls.map((c) => c.split(" ").slice(0, 2).join(" "))).toEqual(["notary notary.org", "direct down.org"]);
    });

    it("skips entries not signed by a configured notary key, not self-signed, or for servers not asked about", async () => {
      const stranger = generateSigningKey();
      const otherKey = generateSigningKey();
      let answer: unknown;
      const t = setup({
        notaries: [{ server_name: "notary.org", verify_keys: { [notaryKey.keyId]: notaryKey.publicKeyBase64 }, accept_keys_insecurely: false }],
        notaryAnswer: () => answer,
      });
      const forged = { ...origin(t.clock.ms), verify_keys: { [originKey.keyId]: { key: stranger.publicKeyBase64 } } };
      const other = buildServerKeysResponse({ serverName: "other.org", keys: [otherKey], validityMs: DAY, now: t.clock.ms });
      answer = {
        server_keys: [
          signJson(origin(t.clock.ms), "notary.org", stranger), // wrong notary key
          signJson(forged, "notary.org", notaryKey), // origin's signature does not match
          signJson(other, "notary.org", notaryKey), // not asked for
        ],
      };
      expect(await t.ring.verifyKey("down.org", originKey.keyId, t.clock.ms)).toBeUndefined();
      expect(t.store.rows.size).toBe(0);
    });

    it("without configured verify_keys (accept_keys_insecurely), relies on the entry's self-signature", async () => {
      const t = setup({
        notaries: [{ server_name: "notary.org", accept_keys_insecurely: true }],
        notaryAnswer: () => ({ server_keys: [origin(t.clock.ms)] }),
      });
      expect(await t.ring.verifyKey("down.org", originKey.keyId, t.clock.ms)).toBeDefined();
    });

    it("refreshDirect (the notary face) never asks notaries", async () => {
      const t = setup({ notaries: [{ server_name: "notary.org", accept_keys_insecurely: true }], notaryAnswer: () => ({ server_keys: [] }) });
      await t.ring.refreshDirect("down.org", t.clock.ms);
      expect(t.calls).toEqual(["direct down.org"]);
    });
  });
});
