// The key notary (POST /_matrix/key/v2/query) asked about a scripted origin whose keys have expired, as
// sytest's notary tests ask it (SQLite and PostgreSQL): each query whose minimum_valid_until_ts the cached
// keys do not meet asks the origin again, however soon after the last and whatever the origin answered
// then; when nothing newer comes (the same document, a refusal) the expired key is returned as cached; a
// later answer of the origin that leaves a key out never makes the notary forget it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { json, startHostilePeer, type HostilePeer } from "../helpers/hostile-peer.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { generateSigningKey, type SigningKey } from "../../src/domain/signing-key.ts";
import { buildServerKeysResponse } from "../../src/domain/keys/server-keys.ts";
import { verifyJsonSignature } from "../../src/domain/signing.ts";

const DAY = 86_400_000;

describe.each(backends())("the key notary and an origin with expired keys on %s", (backend) => {
  let notary: FederatedServer;
  let origin: HostilePeer;
  let keyRequests = 0;

  beforeAll(async () => {
    notary = await startFederatedServer({ backend });
    origin = await startHostilePeer();
  });
  afterAll(async () => {
    await Promise.all([notary?.close(), origin?.close()]);
  });

  /** The origin's key document signed by `key`, valid until `validUntil` (in the past here). */
  const documentOf = (key: SigningKey, validUntil: number) => buildServerKeysResponse({ serverName: origin.serverName, keys: [key], validityMs: 1000, now: validUntil - 1000 });
  /** What the origin answers to GET /_matrix/key/v2/server from now on (each request counted). */
  const originAnswers = (plan: () => ReturnType<typeof json>) => {
    origin.keys = () => {
      keyRequests++;
      return plan();
    };
  };
  async function ask(keyId: string, minimum_valid_until_ts: number) {
    const res = await federationCall(notary.baseUrl, { method: "POST", path: "/_matrix/key/v2/query", body: { server_keys: { [origin.serverName]: { [keyId]: { minimum_valid_until_ts } } } } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", "/_matrix/key/v2/query");
    return res.json.server_keys as Record<string, any>[];
  }

  it("returns an expired key when it finds nothing newer, asking the origin each time the minimum is not met", async () => {
    const key0 = generateSigningKey("key_0");
    const expiry = Date.now() - DAY;
    const doc = documentOf(key0, expiry);
    originAnswers(() => json(200, doc));

    const first = await ask(key0.keyId, 0);
    expect(keyRequests).toBe(1);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ server_name: origin.serverName, valid_until_ts: expiry, verify_keys: { [key0.keyId]: { key: key0.publicKeyBase64 } } });
    const own = notary.hs.services.signingKeys[0]!;
    expect(verifyJsonSignature(first[0]!, notary.serverName, own.keyId, own.publicKeyBase64)).toBe(true);

    // A later minimum than the cached key meets: the origin is asked again at once, answers the same.
    const second = await ask(key0.keyId, expiry + 1000);
    expect(keyRequests).toBe(2);
    expect(second.map((d) => [d.server_name, d.valid_until_ts, Object.keys(d.verify_keys)])).toEqual([[origin.serverName, expiry, [key0.keyId]]]);

    // The origin refuses: the cached (expired) key is still the answer.
    originAnswers(() => json(400, {}));
    const third = await ask(key0.keyId, expiry + 1000);
    expect(keyRequests).toBe(3);
    expect(third.map((d) => [d.server_name, d.valid_until_ts, Object.keys(d.verify_keys)])).toEqual([[origin.serverName, expiry, [key0.keyId]]]);
  });

  it("never forgets a key because a later answer of the origin leaves it out", async () => {
    // The same origin, seconds after it refused the notary (sytest's order): it is asked all the same.
    const key1 = generateSigningKey("key_1");
    const expiry = Date.now() - DAY;
    originAnswers(() => json(200, documentOf(key1, expiry)));
    const before = keyRequests;
    const first = await ask(key1.keyId, 0);
    expect(keyRequests).toBe(before + 1);
    expect(first.map((d) => Object.keys(d.verify_keys))).toEqual([[key1.keyId]]);

    // Asked for a key valid now: the origin answers with another key only.
    const key2 = generateSigningKey("key_2");
    originAnswers(() => json(200, documentOf(key2, expiry + 1000)));
    await ask(key1.keyId, Date.now());
    expect(keyRequests).toBe(before + 2);

    // key_1 is still known, and served as the origin signed it.
    const third = await ask(key1.keyId, expiry);
    expect(keyRequests).toBe(before + 2);
    expect(third.map((d) => [d.valid_until_ts, d.verify_keys])).toEqual([[expiry, { [key1.keyId]: { key: key1.publicKeyBase64 } }]]);
    expect(verifyJsonSignature(third[0]!, origin.serverName, key1.keyId, key1.publicKeyBase64)).toBe(true);
  });
});
