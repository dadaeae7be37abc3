// Two (and three) Weft servers federating over TLS on loopback, named by IP literal: each fetches the
// other's keys directly and through the other as a notary; signed requests are accepted (a profile lookup
// and a directory read crossing servers through the client API); requests with a missing, malformed or
// bad signature, another destination, a tampered body or an unknown key are refused with 401
// M_UNAUTHORIZED (400 for a malformed header) and answer nothing. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { verifyJsonSignature } from "../../src/domain/signing.ts";
import { generateSigningKey } from "../../src/domain/signing-key.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("Weft ↔ Weft federation on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startFederatedServer({ backend, config: { allow_public_rooms_over_federation: true, serve_server_wellknown: true } }),
      startFederatedServer({ backend }),
    ]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    const set = await a.call("PUT", `${V3}/profile/${enc(alice.user_id)}/displayname`, { token: alice.access_token, body: { displayname: "Alice of A" } });
    expect(set.status).toBe(200);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** The server's own key document, fetched over HTTPS. */
  async function ownKeys(t: FederatedServer) {
    const res = await federationCall(t.baseUrl, { method: "GET", path: "/_matrix/key/v2/server" });
    expect(res.status).toBe(200);
    return res.json as { server_name: string; verify_keys: Record<string, { key: string }>; valid_until_ts: number };
  }

  it("serves GET /_matrix/federation/v1/version over TLS without authentication", async () => {
    for (const path of ["/_matrix/federation/v1/version", "/_proto/federation/v1/version"]) {
      const res = await federationCall(a.baseUrl, { method: "GET", path });
      expect(res.status).toBe(200);
      expect(res.json.server.name).toBe("Weft");
      expect(res.json.server.version).toMatch(/^\d+\.\d+\.\d+/);
      expectMatchesSpec(res, "GET", "/_matrix/federation/v1/version");
    }
  });

  it("with serve_server_wellknown, /.well-known/matrix/server delegates to public_baseurl's host and port", async () => {
    const res = await federationCall(a.baseUrl, { method: "GET", path: "/.well-known/matrix/server" });
    expect([res.status, res.json]).toEqual([200, { "m.server": a.serverName }]);
    expectMatchesSpec(res, "GET", "/.well-known/matrix/server");
    const off = await federationCall(b.baseUrl, { method: "GET", path: "/.well-known/matrix/server" });
    expect([off.status, off.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("a client's profile lookup of a remote user is a signed request the other server verifies with keys it fetched directly", async () => {
    const res = await b.call("GET", `${V3}/profile/${enc(alice.user_id)}`, { token: bob.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toEqual({ displayname: "Alice of A" });
    const field = await b.call("GET", `${V3}/profile/${enc(alice.user_id)}/displayname`, { token: bob.access_token });
    expect(field.json).toEqual({ displayname: "Alice of A" });
    const none = await b.call("GET", `${V3}/profile/${enc(alice.user_id)}/avatar_url`, { token: bob.access_token });
    // An unset field of a known user: {}, as for a local user (and as Synapse 1.163 answers).
    expect([none.status, none.json]).toEqual([200, {}]);
    const nobody = await b.call("GET", `${V3}/profile/${enc(`@nobody:${a.serverName}`)}`, { token: bob.access_token });
    expect([nobody.status, nobody.json.errcode]).toEqual([404, "M_NOT_FOUND"]);

    // A verified B's signature with B's key, which it fetched from B itself and stored.
    const [keyId, { key }] = Object.entries((await ownKeys(b)).verify_keys)[0]!;
    const stored = await a.hs.services.serverKeys.forServer(b.serverName);
    expect(stored.map((k) => [k.keyId, k.verifyKey, k.fromServer])).toEqual([[keyId, key, b.serverName]]);
  });

  it("serves /query/profile by its rules: missing, invalid and non-local user ids, the field parameter", async () => {
    const q = (userId: string | undefined, field?: string) => {
      const qs = [userId === undefined ? "" : `user_id=${enc(userId)}`, field ? `field=${field}` : ""].filter(Boolean).join("&");
      const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?${qs}` };
      return federationCall(a.baseUrl, { ...r, authorization: signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, r) });
    };
    const ok = await q(alice.user_id);
    expect([ok.status, ok.json]).toEqual([200, { displayname: "Alice of A" }]);
    expectMatchesSpec(ok, "GET", "/_matrix/federation/v1/query/profile");
    expect((await q(alice.user_id, "avatar_url")).json).toEqual({});
    expect((await q(alice.user_id, "displayname")).json).toEqual({ displayname: "Alice of A" });
    expect([(await q(undefined)).status, (await q(undefined)).json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const remote = await q(bob.user_id);
    expect([remote.status, remote.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const bad = await q("not-a-user");
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const unknown = await q(`@ghost:${a.serverName}`);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expectMatchesSpec(unknown, "GET", "/_matrix/federation/v1/query/profile");
  });

  it("a signed POST with a body: B's client reads A's published directory with a filter", async () => {
    const roomId = await createRoom(a, alice, { name: "Federated lobby", visibility: "public", preset: "public_chat" });
    const res = await b.call("POST", `${V3}/publicRooms?server=${enc(a.serverName)}`, { token: bob.access_token, body: { limit: 5, filter: { generic_search_term: "lobby" } } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.chunk.map((r: { room_id: string }) => r.room_id)).toEqual([roomId]);
    const missed = await b.call("POST", `${V3}/publicRooms?server=${enc(a.serverName)}`, { token: bob.access_token, body: { filter: { generic_search_term: "nothing like it" } } });
    expect(missed.json.chunk).toEqual([]);
    // B does not open its directory to other servers (Synapse's default).
    const closed = await a.call("GET", `${V3}/publicRooms?server=${enc(b.serverName)}`, { token: alice.access_token });
    expect(closed.status).toBe(403);
    expect(closed.json.errcode).toBe("M_FORBIDDEN");
  });

  describe("refusals: 401 M_UNAUTHORIZED and nothing answered", () => {
    const post = () => ({ method: "POST" as const, path: "/_matrix/federation/v1/publicRooms", body: { limit: 10, filter: { generic_search_term: "lobby" } } });
    const good = () => signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, post());

    async function refused(r: Parameters<typeof federationCall>[1], status = 401, message?: RegExp) {
      const res = await federationCall(a.baseUrl, r);
      expect(res.status, JSON.stringify(res.json)).toBe(status);
      expect(res.json.errcode).toBe("M_UNAUTHORIZED");
      expect(Object.keys(res.json).sort()).toEqual(["errcode", "error"]);
      if (message) expect(res.json.error).toMatch(message);
      return res;
    }

    it("the correctly signed request is accepted (the control)", async () => {
      const res = await federationCall(a.baseUrl, { ...post(), authorization: good() });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json.chunk).toHaveLength(1);
      expectMatchesSpec(res, "POST", "/_matrix/federation/v1/publicRooms");
      // X-Proto is the same scheme under the contract's brand, on either path prefix.
      const proto = await federationCall(a.baseUrl, { ...post(), path: "/_proto/federation/v1/publicRooms", authorization: signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, { ...post(), path: "/_proto/federation/v1/publicRooms" }).replace("X-Matrix", "X-Proto") });
      expect(proto.status).toBe(200);
    });

    it("no signature, or a Bearer token instead", async () => {
      await refused(post(), 401, /^Missing Authorization headers$/);
      await refused({ ...post(), authorization: `Bearer ${bob.access_token}` }, 401, /^Missing Authorization headers$/);
    });

    it("a malformed header is 400 M_UNAUTHORIZED", async () => {
      await refused({ ...post(), authorization: good().replace(/,key=/, " key=") }, 400, /^Malformed Authorization header$/);
    });

    it("a header naming another destination", async () => {
      const wrong = signedBy(b.serverName, b.hs.services.signingKeys[0]!, "127.0.0.1:1", post());
      await refused({ ...post(), authorization: wrong }, 401, /^Destination mismatch/);
    });

    it("a body other than the signed one, a tampered signature, another path", async () => {
      await refused({ ...post(), body: { limit: 10, filter: { generic_search_term: "other" } }, authorization: good() }, 401, /^Invalid signature for server/);
      await refused({ ...post(), raw: JSON.stringify(post().body).replace("10", "11"), body: undefined, authorization: good() }, 401, /^Invalid signature/);
      const sig = /sig="([^"]+)"/.exec(good())![1]!;
      const flipped = sig.slice(0, 10) + (sig[10] === "A" ? "B" : "A") + sig.slice(11);
      await refused({ ...post(), authorization: good().replace(sig, flipped) }, 401, /^Invalid signature/);
      const get = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?user_id=${enc(alice.user_id)}` };
      const signedGet = signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, get);
      await refused({ ...get, path: `/_matrix/federation/v1/query/profile?user_id=${enc(alice.user_id)}&field=displayname`, authorization: signedGet }, 401, /^Invalid signature/);
    });

    it("a key the origin does not have, and an origin that does not exist", async () => {
      const stranger = generateSigningKey();
      await refused({ ...post(), authorization: signedBy(b.serverName, stranger, a.serverName, post()) }, 401, /^Failed to find any key/);
      // Nobody listens on port 1: the key cannot be fetched.
      await refused({ ...post(), authorization: signedBy("127.0.0.1:1", stranger, a.serverName, post()) }, 401, /^Failed to find any key/);
    });
  });

  describe("notaries", () => {
    it("each serves the other's keys (and its own) as a notary, countersigned", async () => {
      const bKeys = await ownKeys(b);
      for (const path of [`/_matrix/key/v2/query/${enc(b.serverName)}`, `/_proto/key/v2/query/${enc(b.serverName)}`]) {
        const res = await federationCall(a.baseUrl, { method: "GET", path });
        expect(res.status).toBe(200);
        expectMatchesSpec(res, "GET", `/_matrix/key/v2/query/${enc(b.serverName)}`);
        const [doc] = res.json.server_keys;
        expect(res.json.server_keys).toHaveLength(1);
        expect(doc.verify_keys).toEqual(bKeys.verify_keys);
        const [bKeyId, { key: bKey }] = Object.entries(bKeys.verify_keys)[0]!;
        expect(verifyJsonSignature(doc, b.serverName, bKeyId, bKey)).toBe(true);
        const aKeys = await ownKeys(a);
        const [aKeyId, { key: aKey }] = Object.entries(aKeys.verify_keys)[0]!;
        expect(verifyJsonSignature(doc, a.serverName, aKeyId, aKey)).toBe(true);
      }
      // The bulk form, both servers at once, B asked about A (which B fetches from A on the spot).
      const res = await federationCall(b.baseUrl, { method: "POST", path: "/_matrix/key/v2/query", body: { server_keys: { [a.serverName]: {}, [b.serverName]: {} } } });
      expect(res.status).toBe(200);
      expectMatchesSpec(res, "POST", "/_matrix/key/v2/query");
      expect(res.json.server_keys.map((d: { server_name: string }) => d.server_name).sort()).toEqual([a.serverName, b.serverName].sort());
      const aDoc = res.json.server_keys.find((d: { server_name: string }) => d.server_name === a.serverName);
      expect(Object.keys(aDoc.signatures).sort()).toEqual([a.serverName, b.serverName].sort());
    });

    it("answers an empty list for a server it cannot reach, and refuses a malformed query", async () => {
      const res = await federationCall(a.baseUrl, { method: "GET", path: `/_matrix/key/v2/query/${enc("127.0.0.1:1")}` });
      expect([res.status, res.json]).toEqual([200, { server_keys: [] }]);
      for (const body of [{}, { server_keys: [] }, { server_keys: { x: [] } }, { server_keys: { [b.serverName]: { k: { minimum_valid_until_ts: "soon" } } } }]) {
        const bad = await federationCall(a.baseUrl, { method: "POST", path: "/_matrix/key/v2/query", body });
        expect([bad.status, bad.json.errcode], JSON.stringify(body)).toEqual([400, "M_BAD_JSON"]);
      }
      const notJson = await federationCall(a.baseUrl, { method: "POST", path: "/_matrix/key/v2/query", raw: "{nope" });
      expect([notJson.status, notJson.json.errcode]).toEqual([400, "M_NOT_JSON"]);
    });

    it("a server whose keys cannot be fetched directly is checked through a trusted notary", async () => {
      // C's keys are known to B (B fetched them as a notary); then C goes away. A request signed with
      // C's key reaches D, which trusts B: D cannot ask C, so it asks B.
      const c = await startFederatedServer({ backend });
      try {
        const viaB = await federationCall(b.baseUrl, { method: "GET", path: `/_matrix/key/v2/query/${enc(c.serverName)}` });
        expect(viaB.json.server_keys).toHaveLength(1);
        const bKeys = await ownKeys(b);
        const d = await startFederatedServer({
          backend,
          config: { trusted_key_servers: [{ server_name: b.serverName, verify_keys: Object.fromEntries(Object.entries(bKeys.verify_keys).map(([id, k]) => [id, k.key])) }] },
        });
        try {
          await registerUser(d, "dora");
          const cKey = c.hs.services.signingKeys[0]!;
          await c.stop();
          const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?user_id=${enc(`@dora:${d.serverName}`)}` };
          const res = await federationCall(d.baseUrl, { ...r, authorization: signedBy(c.serverName, cKey, d.serverName, r) });
          expect(res.status, JSON.stringify(res.json)).toBe(200);
          const stored = await d.hs.services.serverKeys.forServer(c.serverName);
          expect(stored.map((k) => [k.keyId, k.fromServer])).toEqual([[cKey.keyId, b.serverName]]);
        } finally {
          await d.close();
        }
      } finally {
        await c.close();
      }
    }, 120_000);
  });
});
