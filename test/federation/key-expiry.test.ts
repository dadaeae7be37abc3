// A remote server's key that it has since listed under old_verify_keys (Server-Server API "Retrieving
// server keys": the keys a server used to use and when it stopped, expired_ts) stops verifying anything
// signed after that moment, even though an earlier key document promised it longer (SQLite and
// PostgreSQL): a stand-in server signs requests with its key, rotates to a new one declaring the old one
// expired, and its requests signed with the old key are then refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { signedCall } from "../helpers/by-hand.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";
import { buildServerKeysResponse } from "../../src/domain/keys/server-keys.ts";

describe.each(backends())("a remote key declared expired on %s", (backend) => {
  let a: FederatedServer;
  let f: FakeOrigin;

  beforeAll(async () => {
    [a, f] = await Promise.all([startFederatedServer({ backend }), startFakeOrigin()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), f?.close()]);
  });

  it("stops verifying requests signed with it once the server lists it under old_verify_keys", async () => {
    const oldKey = f.key;
    const path = `/_matrix/federation/v1/query/profile?user_id=${encodeURIComponent(`@nobody:${a.serverName}`)}`;
    const as = (key: typeof oldKey) => signedCall({ serverName: f.serverName, key }, a, "GET", path);
    // The old key, current for an hour by the first document: requests pass authentication (404: no such user).
    const before = await as(oldKey);
    expect([before.status, before.json.errcode]).toEqual([404, "M_NOT_FOUND"]);

    // The server rotates: a new key, the old one listed as expired a moment ago.
    const newKey = generateSigningKey();
    const expiredTs = Date.now() - 1000;
    f.keyDocument = () =>
      buildServerKeysResponse({ serverName: f.serverName, keys: [newKey], oldKeys: [{ keyId: oldKey.keyId, publicKeyBase64: oldKey.publicKeyBase64, expiredTs }], validityMs: 3600_000 });
    // Requests with the new key pass once A has fetched the new document (it waits a few seconds between fetches).
    await eventually(async () => (await as(newKey)).status === 404, "A accepting the new key", 30_000);
    const stored = await a.hs.services.keyRing.verifyKey(f.serverName, oldKey.keyId, expiredTs - 1);
    expect(stored, "the old key still verifies what was signed before it expired").toBeDefined();

    const after = await as(oldKey);
    expect([after.status, after.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
  }, 60_000);
});
