// Membership across two Weft servers over TLS on loopback (SQLite and PostgreSQL): a user of B joins a
// room of A by id with `via` (room versions 1, 3, 6, 10, 11 and 12) and by A's alias, and then holds the
// room's full state; leaves are B's own, sent to A; invites from A reach B's /sync with stripped state and are
// accepted (joining through the inviter's server) or rejected (through it, or locally when it is gone);
// kicks and bans by A's moderator hold; `m.federate: false` rooms refuse B's users.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { errcode, gql } from "../graphql/client.ts";
import { startFakeOrigin } from "../helpers/fake-origin.ts";

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

  it("a user of B joins a room of A by A's alias (resolved with /query/directory)", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_alias_name: "lobby", name: "Lobby" });
    const alias = `#lobby:${a.serverName}`;
    // The directory query B makes, answered by A (signed by B).
    const q = await b.hs.services.federation.getJson<{ room_id: string; servers: string[] }>(a.serverName, "/_matrix/federation/v1/query/directory", { room_alias: alias });
    expect(q).toEqual({ room_id: roomId, servers: [a.serverName] });
    const res = await b.call("POST", `${V3}/join/${enc(alias)}`, { token: bob.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.room_id).toBe(roomId);
    expect(await membershipOn(a, alice, roomId, bob.user_id)).toBe("join");
    expect(await membershipOn(b, bob, roomId, bob.user_id)).toBe("join");
    const missing = await b.call("POST", `${V3}/join/${enc(`#nowhere:${a.serverName}`)}`, { token: bob.access_token, body: {} });
    expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("the GraphQL face joins a room of A through `via` alike", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Graph" });
    const viewer = await registerUser(b, "grace");
    const res = await gql(b, `mutation($r: String!, $via: [String!]) { joinRoom(roomIdOrAlias: $r, via: $via) { roomId name membership } }`, { r: roomId, via: [a.serverName] }, viewer.access_token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    expect(res.body.data.joinRoom).toEqual({ roomId, name: "Graph", membership: "JOIN" });
    expect(await membershipOn(a, alice, roomId, viewer.user_id)).toBe("join");
    const bad = await gql(b, `mutation($r: String!) { joinRoom(roomIdOrAlias: $r, via: ["not a server"]) { roomId } }`, { r: roomId }, viewer.access_token);
    expect(errcode(bad.body)).toBe("M_INVALID_PARAM");
  });

  it("a join with no server to go through is 404; a malformed via is 400", async () => {
    const res = await b.call("POST", `${V3}/join/${enc(`!nowhere:${a.serverName}`)}`, { token: bob.access_token, body: {} });
    expect([res.status, res.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const bad = await b.call("POST", `${V3}/join/${enc(`!nowhere:${a.serverName}`)}?via=not%20a%20server`, { token: bob.access_token, body: {} });
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    // A room A does not have: A answers 404, and so does B's client.
    const unknown = await b.call("POST", `${V3}/join/${enc(`!nowhere:${a.serverName}`)}?server_name=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("B's last member leaving is a local leave (as Synapse: no make_leave) that reaches A; B's sync shows the room left", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Leaving" });
    const leaver = await registerUser(b, "leaver");
    expect((await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: leaver.access_token, body: {} })).status).toBe(200);
    const since = (await b.call("GET", `${V3}/sync`, { token: leaver.access_token })).json.next_batch;
    const res = await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: leaver.access_token, body: { reason: "bye" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    // B made the leave (no make_leave asked of A); A receives it, with the reason.
    const onB = await b.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(leaver.user_id)}?format=event`, { token: leaver.access_token });
    expect(onB.json.content).toEqual({ membership: "leave", reason: "bye" });
    expect((await b.hs.services.rooms.events.get(onB.json.event_id))?.pdu.prev_events).not.toEqual([]);
    const onA = await until(
      () => a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(leaver.user_id)}?format=event`, { token: alice.access_token }),
      (r) => r.json.event_id === onB.json.event_id,
      "A receiving B's leave",
    );
    expect(onA.json.content).toEqual({ membership: "leave", reason: "bye" });
    const sync = await b.call("GET", `${V3}/sync?since=${enc(since)}`, { token: leaver.access_token });
    expect(sync.json.rooms.leave[roomId].timeline.events.map((e: { event_id: string }) => e.event_id)).toContain(onA.json.event_id);
    // Joining again goes through A again (B is no longer in the room).
    const again = await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: leaver.access_token, body: {} });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(await membershipOn(a, alice, roomId, leaver.user_id)).toBe("join");
  });

  it("an invite from A shows in B's /sync with stripped state; accepting it joins through the inviter's server", async () => {
    const roomId = await createRoom(a, alice, { preset: "private_chat", room_version: "10", name: "Invitation", topic: "come in" });
    const carol = await registerUser(b, "carol");
    const before = await b.call("GET", `${V3}/sync?timeout=0`, { token: carol.access_token });
    // A long poll that the invite wakes.
    const waiting = b.call("GET", `${V3}/sync?timeout=20000&since=${enc(before.json.next_batch)}`, { token: carol.access_token });
    const res = await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: carol.user_id, reason: "join us" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const sync = await waiting;
    expect(sync.status).toBe(200);
    expectMatchesSpec(sync, "GET", "/_matrix/client/v3/sync");
    const invite = sync.json.rooms.invite[roomId].invite_state.events as { type: string; state_key: string; sender: string; content: any; event_id?: string }[];
    expect(invite.find((e) => e.type === "m.room.name")).toEqual({ type: "m.room.name", state_key: "", sender: alice.user_id, content: { name: "Invitation" } });
    expect(invite.find((e) => e.type === "m.room.topic")?.content.topic).toBe("come in");
    expect(invite.find((e) => e.type === "m.room.create")?.content.room_version).toBe("10");
    expect(invite.find((e) => e.type === "m.room.join_rules")?.content.join_rule).toBe("invite");
    expect(invite.find((e) => e.type === "m.room.member" && e.state_key === alice.user_id)?.content.membership).toBe("join");
    const own = invite.find((e) => e.type === "m.room.member" && e.state_key === carol.user_id)!;
    expect(own).toMatchObject({ sender: alice.user_id, content: { membership: "invite", reason: "join us" } });
    // Both servers hold the same invite, signed by both.
    const onA = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(carol.user_id)}?format=event`, { token: alice.access_token });
    expect(own.event_id).toBe(onA.json.event_id);
    const stored = await b.hs.services.rooms.events.get(own.event_id!);
    expect(Object.keys(stored!.pdu.signatures).sort()).toEqual([a.serverName, b.serverName].sort());

    // Accepting: no via; B goes through the inviter's server.
    const join = await b.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: carol.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    expect(await membershipOn(a, alice, roomId, carol.user_id)).toBe("join");
    // The join is a partial-state one: a sync that does not lazy-load members shows the room once B holds
    // its full state (as Synapse), so wait for it.
    const after = await until(
      () => b.call("GET", `${V3}/sync?since=${enc(sync.json.next_batch)}&timeout=0`, { token: carol.access_token }),
      (r) => r.json.rooms?.join?.[roomId] !== undefined,
      "B's sync to show the joined room",
    );
    expect(after.json.rooms.join[roomId].state.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(["m.room.name", "m.room.topic"]));
    expect(after.json.rooms.invite?.[roomId]).toBeUndefined();
  });

  it("createRoom invites a user of B (is_direct kept); an unknown server fails the request with the room made, as Synapse", async () => {
    const erik = await registerUser(b, "erik");
    const res = await a.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "trusted_private_chat", is_direct: true, invite: [erik.user_id] } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const roomId = res.json.room_id as string;
    const onA = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(erik.user_id)}`, { token: alice.access_token });
    expect(onA.json).toMatchObject({ membership: "invite", is_direct: true });
    const sync = await until(() => b.call("GET", `${V3}/sync`, { token: erik.access_token }), (r) => r.json.rooms?.invite?.[roomId] !== undefined, "the invite on B");
    const own = (sync.json.rooms.invite[roomId].invite_state.events as { type: string; state_key: string; content: any }[]).find((e) => e.type === "m.room.member" && e.state_key === erik.user_id);
    expect(own?.content).toMatchObject({ membership: "invite", is_direct: true });

    const gone = await a.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { invite: ["@nobody:127.0.0.1:1"] } });
    expect(gone.status, JSON.stringify(gone.json)).toBeGreaterThanOrEqual(400);
  });

  it("an invite to B is withdrawn by its inviter only: a kick by another member of A leaves it standing on B", async () => {
    const [ann, oli] = await Promise.all([registerUser(a, "ann"), registerUser(b, "oli")]);
    // trusted_private_chat: ann, invited, gets the power to kick.
    const roomId = await createRoom(a, alice, { preset: "trusted_private_chat", invite: [ann.user_id] });
    expect((await a.call("POST", `${V3}/join/${enc(roomId)}`, { token: ann.access_token, body: {} })).status).toBe(200);
    expect((await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: ann.access_token, body: { user_id: oli.user_id } })).status).toBe(200);
    await until(() => b.call("GET", `${V3}/sync`, { token: oli.access_token }), (r) => r.json.rooms?.invite?.[roomId] !== undefined, "the invite on B");
    // alice (not the inviter) kicks oli: B ignores it.
    const kick = await a.call("POST", `${V3}/rooms/${enc(roomId)}/kick`, { token: alice.access_token, body: { user_id: oli.user_id, reason: "not yours" } });
    expect(kick.status).toBe(200);
    const kickId = (await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(oli.user_id)}?format=event`, { token: alice.access_token })).json.event_id;
    await eventually(() => a.hs.services.federationSender.describe(b.serverName).then((d) => d?.queuedPdus === 0 || undefined), "A's queue to B drained");
    expect(await b.hs.services.rooms.events.get(kickId)).toBeUndefined();
    expect((await b.hs.services.rooms.store.membership(roomId, oli.user_id))?.membership).toBe("invite");
    // Invited again by ann and withdrawn by her: B takes that.
    expect((await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: ann.access_token, body: { user_id: oli.user_id } })).status).toBe(200);
    const rescind = await a.call("POST", `${V3}/rooms/${enc(roomId)}/kick`, { token: ann.access_token, body: { user_id: oli.user_id } });
    expect(rescind.status).toBe(200);
    await until(async () => (await b.hs.services.rooms.store.membership(roomId, oli.user_id))?.membership, (m) => m === "leave", "the withdrawal on B");
  });

  it("rejecting an invite goes through the inviting server", async () => {
    const roomId = await createRoom(a, alice, { preset: "private_chat", name: "Declined" });
    const dave = await registerUser(b, "dave");
    expect((await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: dave.user_id } })).status).toBe(200);
    const since = (await until(() => b.call("GET", `${V3}/sync`, { token: dave.access_token }), (r) => r.json.rooms.invite?.[roomId] !== undefined, "the invite")).json.next_batch;
    const res = await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: dave.access_token, body: { reason: "no thanks" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const onA = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(dave.user_id)}?format=event`, { token: alice.access_token });
    expect(onA.json.content).toEqual({ membership: "leave", reason: "no thanks" });
    const sync = await b.call("GET", `${V3}/sync?since=${enc(since)}`, { token: dave.access_token });
    expect(sync.json.rooms.invite?.[roomId]).toBeUndefined();
    expect(sync.json.rooms.leave[roomId].timeline.events.map((e: { event_id: string }) => e.event_id)).toEqual([onA.json.event_id]);
    // Rejecting again is a no-op.
    expect((await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: dave.access_token, body: {} })).status).toBe(200);
  });

  it("rejecting an invite whose server is gone is done locally (an out-of-band leave)", async () => {
    const c = await startFederatedServer({ backend });
    try {
      const cora = await registerUser(c, "cora");
      const erin = await registerUser(b, "erin");
      const roomId = await createRoom(c, cora, { preset: "private_chat", name: "Vanishing" });
      expect((await c.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: cora.access_token, body: { user_id: erin.user_id } })).status).toBe(200);
      const since = (await until(() => b.call("GET", `${V3}/sync`, { token: erin.access_token }), (r) => r.json.rooms.invite?.[roomId] !== undefined, "the invite")).json.next_batch;
      await c.stop();
      const res = await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: erin.access_token, body: {} });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const sync = await b.call("GET", `${V3}/sync?since=${enc(since)}`, { token: erin.access_token });
      expect(sync.json.rooms.invite?.[roomId]).toBeUndefined();
      const [leave] = sync.json.rooms.leave[roomId].timeline.events;
      expect(leave).toMatchObject({ type: "m.room.member", state_key: erin.user_id, sender: erin.user_id, content: { membership: "leave" } });
      // The made-up leave follows the invite and is signed by B.
      const stored = await b.hs.services.rooms.events.get(leave.event_id);
      expect(stored!.outlier).toBe(true);
      expect(Object.keys(stored!.pdu.signatures)).toEqual([b.serverName]);
      expect((await b.hs.services.rooms.store.membership(roomId, erin.user_id))?.membership).toBe("leave");
    } finally {
      await c.close();
    }
  });

  it("kicks and bans by A's moderator: A's state, B's view once the event reaches it, and a banned user's join refused", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Moderated" });
    const frank = await registerUser(b, "frank");
    expect((await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: frank.access_token, body: {} })).status).toBe(200);
    const since = (await b.call("GET", `${V3}/sync`, { token: frank.access_token })).json.next_batch;

    const kick = await a.call("POST", `${V3}/rooms/${enc(roomId)}/kick`, { token: alice.access_token, body: { user_id: frank.user_id, reason: "cool off" } });
    expect(kick.status).toBe(200);
    const kickEvent = (await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(frank.user_id)}?format=event`, { token: alice.access_token })).json;
    expect(kickEvent).toMatchObject({ sender: alice.user_id, content: { membership: "leave", reason: "cool off" } });
    // A's sender carries the kick to B (frank's server, though frank is no longer joined).
    await eventually(async () => (await b.hs.services.rooms.events.get(kickEvent.event_id)) !== undefined, "the kick reaching B");
    expect(await membershipOn(b, frank, roomId, frank.user_id)).toBe("leave");
    const sync = await b.call("GET", `${V3}/sync?since=${enc(since)}`, { token: frank.access_token });
    expect(sync.json.rooms.leave[roomId].timeline.events.at(-1)).toMatchObject({ event_id: kickEvent.event_id, sender: alice.user_id });

    // Kicked, frank may come back (a public room): through A, B being out of the room.
    expect((await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: frank.access_token, body: {} })).status).toBe(200);
    expect(await membershipOn(a, alice, roomId, frank.user_id)).toBe("join");

    const ban = await a.call("POST", `${V3}/rooms/${enc(roomId)}/ban`, { token: alice.access_token, body: { user_id: frank.user_id } });
    expect(ban.status).toBe(200);
    const banId = (await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(frank.user_id)}?format=event`, { token: alice.access_token })).json.event_id;
    await eventually(async () => (await b.hs.services.rooms.events.get(banId)) !== undefined, "the ban reaching B");
    expect(await membershipOn(b, frank, roomId, frank.user_id)).toBe("ban");
    // Banned: A refuses the join, and B's client hears it.
    const refused = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: frank.access_token, body: {} });
    expect([refused.status, refused.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect(await membershipOn(a, alice, roomId, frank.user_id)).toBe("ban");
  });

  it("restricted rooms (v10): A authorises (and signs) the join of a member of an allowed room, refuses others as Synapse does", async () => {
    const space = await createRoom(a, alice, { preset: "public_chat", name: "Space" });
    const restricted = (allowed: string) =>
      createRoom(a, alice, { room_version: "10", initial_state: [{ type: "m.room.join_rules", state_key: "", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: allowed }] } }] });
    const roomId = await restricted(space);
    const hugo = await registerUser(b, "hugo");
    // Not in the allowed room: A refuses.
    const refused = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: hugo.access_token, body: {} });
    expect([refused.status, refused.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    // An allowed room A is not in: A cannot tell (400 M_UNABLE_TO_AUTHORISE_JOIN, passed on as B's 502).
    const unknownAllowed = await restricted(`!elsewhere:${b.serverName}`);
    const t = await b.hs.services.federation.getJson(a.serverName, `/_matrix/federation/v1/make_join/${enc(unknownAllowed)}/${enc(hugo.user_id)}`, { ver: ["10"] }).catch((e: unknown) => e) as { remoteStatus?: number; remoteErrcode?: string };
    expect([t.remoteStatus, t.remoteErrcode]).toEqual([400, "M_UNABLE_TO_AUTHORISE_JOIN"]);
    // In the allowed room: A names alice as the authoriser and signs the join.
    expect((await b.call("POST", `${V3}/join/${enc(space)}?via=${enc(a.serverName)}`, { token: hugo.access_token, body: {} })).status).toBe(200);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: hugo.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const join = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(hugo.user_id)}?format=event`, { token: alice.access_token });
    expect(join.json.content).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });
    const stored = await b.hs.services.rooms.events.get(join.json.event_id);
    expect(Object.keys(stored!.pdu.signatures).sort()).toEqual([a.serverName, b.serverName].sort());
  });

  it("restricted rooms (v10): a join on B that no member of B may authorise goes through A; B does not trust what it knew of a room it left", async () => {
    const space = await createRoom(a, alice, { preset: "public_chat", name: "Space 2" });
    const allowSpace = { type: "m.room.join_rules", state_key: "", content: { join_rule: "restricted", allow: [{ type: "m.room_membership", room_id: space }] } };
    // Only moderators may invite: no user of B can authorise a join.
    const roomId = await createRoom(a, alice, { room_version: "10", initial_state: [allowSpace], power_level_content_override: { invite: 50 } });
    const [ivan, judy] = await Promise.all([registerUser(b, "ivan"), registerUser(b, "judy")]);
    for (const who of [ivan, judy]) expect((await b.call("POST", `${V3}/join/${enc(space)}?via=${enc(a.serverName)}`, { token: who.access_token, body: {} })).status).toBe(200);
    expect((await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: ivan.access_token, body: {} })).status).toBe(200);
    await until(() => membershipOn(b, ivan, roomId, ivan.user_id), (m) => m === "join", "ivan joined on B");
    // B is in the room now, yet judy's join is made through A, which authorises it.
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: judy.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const join = await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(judy.user_id)}?format=event`, { token: alice.access_token });
    expect(join.json.content).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });

    // B's users leave the allowed room: what B knew of it (kim of A joined) no longer counts at B's make_join.
    const kim = await registerUser(a, "kim");
    expect((await a.call("POST", `${V3}/join/${enc(space)}`, { token: kim.access_token, body: {} })).status).toBe(200);
    await until(() => membershipOn(b, ivan, space, kim.user_id), (m) => m === "join", "kim's join known on B");
    for (const who of [ivan, judy]) expect((await b.call("POST", `${V3}/rooms/${enc(space)}/leave`, { token: who.access_token, body: {} })).status).toBe(200);
    const asked = await a.hs.services.federation.getJson(b.serverName, `/_matrix/federation/v1/make_join/${enc(roomId)}/${enc(kim.user_id)}`, { ver: ["10"] }).catch((e: unknown) => e) as { remoteStatus?: number; remoteErrcode?: string };
    expect([asked.remoteStatus, asked.remoteErrcode]).toEqual([400, "M_UNABLE_TO_AUTHORISE_JOIN"]);
  });

  it("a join naming servers goes through those only (and the inviter's), not the room's last known ones, as Synapse", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Named servers" });
    const pam = await registerUser(b, "pam");
    expect((await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: pam.access_token, body: {} })).status).toBe(200);
    expect((await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: pam.access_token, body: {} })).status).toBe(200);
    await until(() => membershipOn(a, alice, roomId, pam.user_id), (m) => m === "leave", "pam's leave on A");
    // F cannot authorise the join (a failover errcode); A, which would let pam in, is not named.
    const f = await startFakeOrigin(() => ({ status: 400, json: { errcode: "M_UNABLE_TO_AUTHORISE_JOIN", error: "cannot tell" } }));
    try {
      const res = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(f.serverName)}`, { token: pam.access_token, body: {} });
      expect(res.status).toBe(400);
      expect(await membershipOn(a, alice, roomId, pam.user_id)).toBe("leave");
      // Named nothing: the room's last known servers are tried (A lets pam back in).
      expect((await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: pam.access_token, body: {} })).status).toBe(200);
    } finally {
      await f.close();
    }
  });

  it("m.federate: false: A refuses B's users, and B's client gets a clean 403 with nothing stored", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", creation_content: { "m.federate": false }, name: "Local only" });
    const res = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect(await b.hs.services.rooms.store.getRoom(roomId)).toBeUndefined();
    expect(await membershipOn(a, alice, roomId, bob.user_id)).toBeUndefined();
    // Nor may A's users invite B's into it.
    const invite = await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: bob.user_id } });
    expect([invite.status, invite.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
  });
});

