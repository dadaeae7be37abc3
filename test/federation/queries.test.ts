// Federation queries between two Weft servers over TLS, on SQLite and PostgreSQL: GET /query/directory
// served by its rules (room and servers, 404 M_NOT_FOUND, 400 for another server's alias, signature
// required), a local GET /directory/room/{alias} of a remote alias asking the alias's server, and remote
// profile lookups cached — fresh for 10 minutes (a rename on the other server shows once that passed, or
// at once when its member event arrives), a missing user remembered for a minute, the last known profile
// served while the other server does not answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock, backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { joinAsRemote, joinFromPeer, startRecordingPeer } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("federation queries on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;
  let roomId: string;
  /** B's clock: the profile cache's time. */
  const clock = new TestClock();

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend, clock })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    roomId = await createRoom(a, alice, { preset: "public_chat", room_alias_name: "lobby" });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  const directoryQuery = (alias: string | undefined, from = b) => {
    const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/directory${alias === undefined ? "" : `?room_alias=${enc(alias)}`}` };
    return federationCall(a.baseUrl, { ...r, authorization: signedBy(from.serverName, from.hs.services.signingKeys[0]!, a.serverName, r) });
  };

  it("serves /query/directory: the room and its servers (ours first), 404, 400, 401", async () => {
    const alias = `#lobby:${a.serverName}`;
    const ok = await directoryQuery(alias);
    expect([ok.status, ok.json]).toEqual([200, { room_id: roomId, servers: [a.serverName] }]);
    expectMatchesSpec(ok, "GET", "/_matrix/federation/v1/query/directory");
    // A member from another server puts its server in the list, after ours.
    const peer = await startRecordingPeer();
    try {
      await joinFromPeer(a, peer, roomId, peer.user("pat"));
      expect((await directoryQuery(alias)).json.servers).toEqual([a.serverName, peer.serverName]);
    } finally {
      await peer.close();
    }
    const unknown = await directoryQuery(`#nothing:${a.serverName}`);
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expectMatchesSpec(unknown, "GET", "/_matrix/federation/v1/query/directory");
    const foreign = await directoryQuery(`#lobby:${b.serverName}`);
    expect([foreign.status, foreign.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const malformed = await directoryQuery("lobby");
    expect([malformed.status, malformed.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    const missing = await directoryQuery(undefined);
    expect([missing.status, missing.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
    const unsigned = await federationCall(a.baseUrl, { method: "GET", path: `/_matrix/federation/v1/query/directory?room_alias=${enc(alias)}` });
    expect([unsigned.status, unsigned.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
  });

  it("a client's GET /directory/room/{alias} of another server's alias asks that server", async () => {
    const res = await b.call("GET", `${V3}/directory/room/${enc(`#lobby:${a.serverName}`)}`, { token: bob.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.room_id).toBe(roomId);
    expect(res.json.servers[0]).toBe(a.serverName);
    expectMatchesSpec(res, "GET", "/_matrix/client/v3/directory/room/{roomAlias}");
    const missing = await b.call("GET", `${V3}/directory/room/${enc(`#nothing:${a.serverName}`)}`, { token: bob.access_token });
    expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    // A server nobody answers for: the lookup fails as a gateway error, not as "no such alias".
    const nobody = await b.call("GET", `${V3}/directory/room/${enc("#lobby:127.0.0.1:1")}`, { token: bob.access_token });
    expect([nobody.status, nobody.json.errcode]).toEqual([502, "M_UNKNOWN"]);
  });

  it("remote profiles are cached: fresh for 10 minutes, then asked again; the last known one served while the server is away", async () => {
    const setName = (name: string) => a.call("PUT", `${V3}/profile/${enc(alice.user_id)}/displayname`, { token: alice.access_token, body: { displayname: name } });
    const lookup = () => b.call("GET", `${V3}/profile/${enc(alice.user_id)}`, { token: bob.access_token });
    expect((await setName("Alice")).status).toBe(200);
    expect((await lookup()).json).toEqual({ displayname: "Alice" });
    expect((await setName("Alice II")).status).toBe(200);
    // Cached: B does not ask A again yet.
    expect((await lookup()).json).toEqual({ displayname: "Alice" });
    const field = await b.call("GET", `${V3}/profile/${enc(alice.user_id)}/displayname`, { token: bob.access_token });
    expect(field.json).toEqual({ displayname: "Alice" });
    clock.advance(10 * 60_000 + 1);
    expect((await lookup()).json).toEqual({ displayname: "Alice II" });

    // A user A does not have: 404, remembered for a minute (not asked again meanwhile).
    const ghost = `@ghost:${a.serverName}`;
    expect((await b.call("GET", `${V3}/profile/${enc(ghost)}`, { token: bob.access_token })).status).toBe(404);
    await registerUser(a, "ghost");
    expect((await b.call("GET", `${V3}/profile/${enc(ghost)}`, { token: bob.access_token })).status).toBe(404);
    clock.advance(60_001);
    expect((await b.call("GET", `${V3}/profile/${enc(ghost)}`, { token: bob.access_token })).status).toBe(200);

    // A member event of alice's reaching B (her join of a room of B's) drops B's copy at once.
    expect((await setName("Alice III")).status).toBe(200);
    expect((await lookup()).json).toEqual({ displayname: "Alice II" });
    const bRoom = await createRoom(b, bob, { preset: "public_chat" });
    await joinAsRemote(b, { serverName: a.serverName, key: a.hs.services.signingKeys[0]! }, bRoom, alice.user_id, { displayname: "Alice III" });
    expect((await lookup()).json).toEqual({ displayname: "Alice III" });

    // A goes away: after the freshness, B still answers with what it knew.
    await a.stop();
    try {
      clock.advance(10 * 60_000 + 1);
      const stale = await lookup();
      expect([stale.status, stale.json]).toEqual([200, { displayname: "Alice III" }]);
      // Never known: the failure shows.
      const unknown = await b.call("GET", `${V3}/profile/${enc(`@carol:${a.serverName}`)}`, { token: bob.access_token });
      expect(unknown.status).toBe(502);
    } finally {
      await a.restart();
    }
  });
});
