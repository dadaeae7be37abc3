// Weft ↔ Synapse (a live matrix-synapse, scripts/synapse-version) over TLS on loopback: each fetches the
// other's keys directly and through the other as a notary; Weft's signed requests are accepted by Synapse
// (its /version, a profile query and a filtered directory read — a signed POST body) and Synapse's by Weft
// (a Synapse user's profile lookup of a Weft user; Synapse reading Weft's directory with a filter).
// Weft runs on SQLite and PostgreSQL; Synapse on SQLite.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, SYNAPSE_VERSION, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { verifyJsonSignature } from "../../src/domain/signing.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("Weft (%s) ↔ Synapse", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Session;
  let sam: { user_id: string; access_token: string };
  let weftKey: [string, string];

  beforeAll(async () => {
    weft = await startFederatedServer({ backend, config: { allow_public_rooms_over_federation: true } });
    const own = await federationCall(weft.baseUrl, { method: "GET", path: "/_matrix/key/v2/server" });
    weftKey = Object.entries(own.json.verify_keys as Record<string, { key: string }>).map(([id, k]) => [id, k.key] as [string, string])[0]!;
    // Synapse trusts Weft as its notary (its verify key configured), so the notary test below can
    // show Synapse asking Weft about a third server.
    syn = await startSynapse({ config: { trusted_key_servers: [{ server_name: weft.serverName, verify_keys: { [weftKey[0]]: weftKey[1] } }] } });
    console.log(`Synapse ${syn.serverName} ready in ${syn.startupMs} ms`);
    alice = await registerUser(weft, "alice");
    await weft.call("PUT", `${V3}/profile/${enc(alice.user_id)}/displayname`, { token: alice.access_token, body: { displayname: "Alice on Weft" } });
    sam = await syn.register("sam");
    const set = await syn.call("PUT", `${V3}/profile/${enc(sam.user_id)}/displayname`, { token: sam.access_token, body: { displayname: "Sam on Synapse" } });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
  }, 600_000); // a first run may install Synapse (scripts/install-synapse.sh) before starting it
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  /** Synapse's own key document, from its federation listener. */
  async function synapseKeys() {
    const res = await federationCall(syn.federationUrl, { method: "GET", path: "/_matrix/key/v2/server" });
    expect(res.status).toBe(200);
    return res.json as { server_name: string; verify_keys: Record<string, { key: string }> };
  }

  it("Weft's signed GET is accepted by Synapse: its /version", async () => {
    const version = await weft.hs.services.federation.getJson<{ server: { name: string; version: string } }>(syn.serverName, "/_matrix/federation/v1/version");
    expect(version.server.name).toBe("Synapse");
    expect(version.server.version).toBe(SYNAPSE_VERSION);
  });

  it("a Weft user looks up a Synapse user's profile: Synapse verifies Weft's signature (fetching Weft's keys)", async () => {
    const res = await weft.call("GET", `${V3}/profile/${enc(sam.user_id)}`, { token: alice.access_token });
    expect(res.status, JSON.stringify(res.json) + syn.logTail()).toBe(200);
    expect(res.json).toEqual({ displayname: "Sam on Synapse" });
    const unknown = await weft.call("GET", `${V3}/profile/${enc(`@nobody:${syn.serverName}`)}`, { token: alice.access_token });
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("a Synapse user looks up a Weft user's profile: Weft verifies Synapse's signature with keys fetched from Synapse", async () => {
    const res = await syn.call("GET", `${V3}/profile/${enc(alice.user_id)}`, { token: sam.access_token });
    expect(res.status, JSON.stringify(res.json) + syn.logTail()).toBe(200);
    expect(res.json.displayname).toBe("Alice on Weft");
    const [keyId, { key }] = Object.entries((await synapseKeys()).verify_keys)[0]!;
    const stored = await weft.hs.services.serverKeys.forServer(syn.serverName);
    expect(stored.map((k) => [k.keyId, k.verifyKey, k.fromServer])).toEqual([[keyId, key, syn.serverName]]);
  });

  it("signed POST bodies both ways: each reads the other's published directory with a filter", async () => {
    const weftRoom = await createRoom(weft, alice, { name: "Weft garden", visibility: "public", preset: "public_chat" });
    const fromSynapse = await syn.call("POST", `${V3}/publicRooms?server=${enc(weft.serverName)}`, { token: sam.access_token, body: { limit: 10, filter: { generic_search_term: "garden" } } });
    expect(fromSynapse.status, JSON.stringify(fromSynapse.json) + syn.logTail()).toBe(200);
    expect(fromSynapse.json.chunk.map((r: { room_id: string }) => r.room_id)).toEqual([weftRoom]);

    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { name: "Synapse meadow", visibility: "public", preset: "public_chat" } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    // Synapse fills its directory's room stats in the background: wait until it lists the room itself.
    const listed = async () => (await syn.call("POST", `${V3}/publicRooms`, { token: sam.access_token, body: { filter: { generic_search_term: "meadow" } } })).json.chunk?.length === 1;
    for (const deadline = Date.now() + 20_000; !(await listed()); ) {
      if (Date.now() > deadline) throw new Error("Synapse never listed its new public room");
      await new Promise((r) => setTimeout(r, 50));
    }
    const fromWeft = await weft.call("POST", `${V3}/publicRooms?server=${enc(syn.serverName)}`, { token: alice.access_token, body: { limit: 10, filter: { generic_search_term: "meadow" } } });
    expect(fromWeft.status, JSON.stringify(fromWeft.json) + syn.logTail()).toBe(200);
    expect(fromWeft.json.chunk.map((r: { room_id: string }) => r.room_id)).toEqual([created.json.room_id]);
    expect(fromWeft.json.chunk[0].name).toBe("Synapse meadow");
  }, 120_000);

  it("a request to Synapse signed with a key Weft does not have is refused by Synapse (the check is real)", async () => {
    const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?user_id=${enc(sam.user_id)}` };
    const forged = { keyId: weftKey[0], privateKey: generateSigningKey().privateKey };
    const res = await federationCall(syn.federationUrl, { ...r, authorization: signedBy(weft.serverName, forged, syn.serverName, r) });
    expect([res.status, res.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
    const good = await federationCall(syn.federationUrl, { ...r, authorization: signedBy(weft.serverName, weft.hs.services.signingKeys[0]!, syn.serverName, r) });
    expect([good.status, good.json.displayname]).toEqual([200, "Sam on Synapse"]);
  });

  describe("notaries", () => {
    it("Weft serves Synapse's keys as a notary (fetched from Synapse, countersigned)", async () => {
      const res = await federationCall(weft.baseUrl, { method: "POST", path: "/_matrix/key/v2/query", body: { server_keys: { [syn.serverName]: {} } } });
      expect(res.status).toBe(200);
      const [doc] = res.json.server_keys;
      const [keyId, { key }] = Object.entries((await synapseKeys()).verify_keys)[0]!;
      expect(doc.verify_keys).toEqual({ [keyId]: { key } });
      expect(verifyJsonSignature(doc, syn.serverName, keyId, key)).toBe(true);
      expect(verifyJsonSignature(doc, weft.serverName, weftKey[0], weftKey[1])).toBe(true);
    });

    it("Synapse serves Weft's keys as a notary (fetched from Weft, countersigned)", async () => {
      const res = await federationCall(syn.federationUrl, { method: "POST", path: "/_matrix/key/v2/query", body: { server_keys: { [weft.serverName]: { [weftKey[0]]: { minimum_valid_until_ts: Date.now() } } } } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const doc = res.json.server_keys.find((d: { server_name: string }) => d.server_name === weft.serverName);
      expect(doc.verify_keys).toEqual({ [weftKey[0]]: { key: weftKey[1] } });
      expect(verifyJsonSignature(doc, weft.serverName, weftKey[0], weftKey[1])).toBe(true);
      const [synKeyId, { key: synKey }] = Object.entries((await synapseKeys()).verify_keys)[0]!;
      expect(verifyJsonSignature(doc, syn.serverName, synKeyId, synKey)).toBe(true);
    });

    it("Weft checks a server it cannot reach through Synapse as its notary", async () => {
      const [synKeyId, { key: synKey }] = Object.entries((await synapseKeys()).verify_keys)[0]!;
      const gone = await startFederatedServer({ backend });
      const d = await startFederatedServer({ backend, config: { trusted_key_servers: [{ server_name: syn.serverName, verify_keys: { [synKeyId]: synKey } }] } });
      try {
        await registerUser(d, "dora");
        const goneKey = gone.hs.services.signingKeys[0]!;
        // Synapse learns the key (a query naming the key id makes it fetch; Synapse requires the
        // criterion's minimum_valid_until_ts member), then the server goes away.
        const learnt = await federationCall(syn.federationUrl, { method: "POST", path: "/_matrix/key/v2/query", body: { server_keys: { [gone.serverName]: { [goneKey.keyId]: { minimum_valid_until_ts: Date.now() } } } } });
        expect(learnt.json.server_keys).toHaveLength(1);
        await gone.stop();
        const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?user_id=${enc(`@dora:${d.serverName}`)}` };
        const res = await federationCall(d.baseUrl, { ...r, authorization: signedBy(gone.serverName, goneKey, d.serverName, r) });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        const stored = await d.hs.services.serverKeys.forServer(gone.serverName);
        expect(stored.map((k) => [k.keyId, k.fromServer])).toEqual([[goneKey.keyId, syn.serverName]]);
      } finally {
        await Promise.all([gone.close(), d.close()]);
      }
    }, 120_000);

    it("Synapse checks a server it cannot reach through Weft as its notary", async () => {
      const gone = await startFederatedServer({ backend });
      try {
        const goneKey = gone.hs.services.signingKeys[0]!;
        const learnt = await federationCall(weft.baseUrl, { method: "GET", path: `/_matrix/key/v2/query/${enc(gone.serverName)}` });
        expect(learnt.json.server_keys).toHaveLength(1);
        await gone.stop();
        const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?user_id=${enc(sam.user_id)}` };
        const res = await federationCall(syn.federationUrl, { ...r, authorization: signedBy(gone.serverName, goneKey, syn.serverName, r) });
        expect(res.status, JSON.stringify(res.json) + syn.logTail(20)).toBe(200);
        expect(res.json.displayname).toBe("Sam on Synapse");
      } finally {
        await gone.close();
      }
    }, 120_000);
  });
});
