// Partial-state joins ("faster joins") between two Weft servers over TLS (SQLite and PostgreSQL): a user of
// B joins a room of A holding some hundreds of members (joined from a stand-in remote server). A answers
// send_join with omit_members; B's /join returns while the room is still partial (the flag is observed,
// B's /state fetch held back), messages flow both ways meanwhile, /members waits and then answers every
// member; a restart of B in the middle of the resync resumes it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { fillRoomWithMembers } from "../helpers/big-room.ts";
import { signedCall, signerOf, eventOnRoom } from "../helpers/by-hand.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import type { Services } from "../../src/domain/services.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const MEMBERS = 300;

const memberCount = (s: Services, roomId: string) => loadRoom(s, roomId).then((r) => [...r!.state.keys()].filter((k) => k.startsWith("m.room.member\u0000")).length);

describe.each(backends())("partial-state joins between Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let f: FakeOrigin;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    f = await startFakeOrigin((req) => (req.path.startsWith("/_matrix/federation/v1/send/") ? { status: 200, json: { pdus: {} } } : undefined));
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), f?.close()]);
  });

  async function bigRoom(name: string): Promise<string> {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name });
    await fillRoomWithMembers(a.hs.services, roomId, f, MEMBERS);
    return roomId;
  }

  it("A answers send_join with omit_members=true without the members B does not need", async () => {
    const roomId = await bigRoom("Served partial");
    const signer = signerOf(b);
    const userId = `@carol:${b.serverName}`;
    const join = await eventOnRoom(a.hs.services, roomId, signer, { type: "m.room.member", stateKey: userId, sender: userId, content: { membership: "join" } });
    const res = await signedCall(signer, a, "PUT", `/_matrix/federation/v2/send_join/${enc(roomId)}/${enc(join.eventId)}?omit_members=true`, join.pdu);
    expect(res.status, JSON.stringify(res.json).slice(0, 500)).toBe(200);
    expect(res.json.members_omitted).toBe(true);
    expect(new Set(res.json.servers_in_room)).toEqual(new Set([a.serverName, f.serverName]));
    const members = (res.json.state as { type: string; state_key: string }[]).filter((e) => e.type === "m.room.member");
    // The room has a name: no heroes; only alice's membership, needed to authorise the state she sent, is in the auth chain.
    expect(members).toEqual([]);
    const chainMembers = (res.json.auth_chain as { type: string; state_key: string }[]).filter((e) => e.type === "m.room.member").map((e) => e.state_key);
    expect(chainMembers).toEqual([alice.user_id]);
    const stateIds = new Set((res.json.state as { event_id?: string }[]).map((e) => JSON.stringify(e)));
    for (const e of res.json.auth_chain) expect(stateIds.has(JSON.stringify(e))).toBe(false);

    // Without omit_members: every member.
    const userId2 = `@dave:${b.serverName}`;
    const join2 = await eventOnRoom(a.hs.services, roomId, signer, { type: "m.room.member", stateKey: userId2, sender: userId2, content: { membership: "join" } });
    const full = await signedCall(signer, a, "PUT", `/_matrix/federation/v2/send_join/${enc(roomId)}/${enc(join2.eventId)}`, join2.pdu);
    expect(full.status).toBe(200);
    expect(full.json.members_omitted).toBe(false);
    expect((full.json.state as { type: string }[]).filter((e) => e.type === "m.room.member").length).toBe(MEMBERS + 2);

    // A bad omit_members is refused before anything is stored.
    const userId3 = `@erin:${b.serverName}`;
    const join3 = await eventOnRoom(a.hs.services, roomId, signer, { type: "m.room.member", stateKey: userId3, sender: userId3, content: { membership: "join" } });
    const bad = await signedCall(signer, a, "PUT", `/_matrix/federation/v2/send_join/${enc(roomId)}/${enc(join3.eventId)}?omit_members=yes`, join3.pdu);
    expect([bad.status, bad.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    expect(await a.hs.services.rooms.events.get(join3.eventId)).toBeUndefined();
  }, 180_000);

  it("B's /join returns with the room partial; messages flow; /members waits for the full state", async () => {
    const roomId = await bigRoom("Partial join");
    const hold = holdStateFetches(b.hs.services);
    const res = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);
    await eventually(() => hold.held() > 0, "the resync asking A for the state");
    // B holds the state without the members: bob only (alice's membership is an outlier of the auth chain).
    expect(await memberCount(b.hs.services, roomId)).toBe(1);

    // /sync as Synapse: a client that does not lazy-load members is not shown the room yet; one that does is.
    const plain = await b.call("GET", `${V3}/sync`, { token: bob.access_token });
    expect(plain.status).toBe(200);
    expect(plain.json.rooms?.join?.[roomId]).toBeUndefined();
    const since = plain.json.next_batch as string;
    const lazyFilter = enc(JSON.stringify({ room: { state: { lazy_load_members: true } } }));
    const lazy = await b.call("GET", `${V3}/sync?filter=${lazyFilter}`, { token: bob.access_token });
    expect(lazy.json.rooms?.join?.[roomId], JSON.stringify(lazy.json.rooms)).toBeDefined();

    // Messages flow both ways while partial.
    const sent = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t1`, { token: bob.access_token, body: { msgtype: "m.text", body: "hello from B" } });
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    await eventually(async () => (await a.hs.services.rooms.events.get(sent.json.event_id))?.stateGroup != null, "A receiving bob's message");
    const fromA = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t2`, { token: alice.access_token, body: { msgtype: "m.text", body: "hello from A" } });
    expect(fromA.status).toBe(200);
    const onB = await eventually(async () => {
      const e = await b.hs.services.rooms.events.get(fromA.json.event_id);
      return e && !e.outlier ? e : undefined;
    }, "B receiving alice's message");
    expect([onB.rejectedReason, onB.softFailed]).toEqual([null, false]);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);

    // /members waits: it answers only once the state is complete, with every member.
    let answeredWhilePartial: boolean | undefined;
    const members = b.call("GET", `${V3}/rooms/${enc(roomId)}/members`, { token: bob.access_token }).then(async (r) => {
      answeredWhilePartial = await isPartialState(b.hs.services, roomId);
      return r;
    });
    hold.release();
    const m = await members;
    expect(m.status, JSON.stringify(m.json).slice(0, 300)).toBe(200);
    expect(answeredWhilePartial).toBe(false);
    const ids = new Set((m.json.chunk as { state_key: string }[]).map((e) => e.state_key));
    expect(ids.size).toBe(MEMBERS + 2);
    expect(ids.has(alice.user_id) && ids.has(bob.user_id) && ids.has(`@member${MEMBERS - 1}:${f.serverName}`)).toBe(true);
    expect(await memberCount(b.hs.services, roomId)).toBe(MEMBERS + 2);

    // The client that was not shown the room gets it now, as newly joined, with every member.
    const later = await b.call("GET", `${V3}/sync?since=${enc(since)}&timeout=0`, { token: bob.access_token });
    const shown = later.json.rooms?.join?.[roomId];
    expect(shown, JSON.stringify(later.json.rooms ?? {}).slice(0, 500)).toBeDefined();
    const memberKeys = new Set([...shown.state.events, ...shown.timeline.events].filter((e: { type: string }) => e.type === "m.room.member").map((e: { state_key: string }) => e.state_key));
    expect(memberKeys.size).toBe(MEMBERS + 2);

    // The state at bob's message (sent while partial) is complete too.
    const atMsg = await b.hs.services.rooms.events.get(sent.json.event_id);
    const group = await b.hs.services.rooms.stateGroups.get(atMsg!.stateGroup!);
    expect([...group.keys()].filter((k) => k.startsWith("m.room.member\u0000")).length).toBe(MEMBERS + 2);
    // A state event now goes through at once.
    const topic = await b.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.topic`, { token: bob.access_token, body: { topic: "t" } });
    expect([topic.status, topic.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
  }, 180_000);

  it("a restart of B in the middle of the resync resumes it", async () => {
    const roomId = await bigRoom("Restarted resync");
    const hold = holdStateFetches(b.hs.services);
    const res = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    await eventually(() => hold.held() > 0, "the resync asking A for the state");
    await b.restart();
    // Still partial after the restart (the flag is stored), until the resumed resync completes it.
    await eventually(async () => !(await isPartialState(b.hs.services, roomId)), "the resumed resync completing the state", 60_000);
    const m = await b.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: bob.access_token });
    expect(m.status).toBe(200);
    expect(Object.keys(m.json.joined).length).toBe(MEMBERS + 2);
    hold.release();
  }, 180_000);
});
