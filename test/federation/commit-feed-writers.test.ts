// Every writer of a room's events and state announces its commit on the CommitFeed (what other processes
// would replicate): the out-of-band memberships of rooms/pipeline/out-of-band.ts (an invite received over
// federation, its rejection through the inviting server) and the two commits that complete a room joined
// with partial state (federation/partial-state/resync.ts). Weft↔Weft over TLS, on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { fillRoomWithMembers } from "../helpers/big-room.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import type { Commit } from "../../src/domain/consumers/commit-feed.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("writers beside the group commit announce on the CommitFeed, on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let f: FakeOrigin;
  let alice: Session;
  let bob: Session;
  const seen: Commit[] = [];
  let unsubscribe: () => void = () => {};

  beforeAll(async () => {
    f = await startFakeOrigin((req) => (req.path.startsWith("/_matrix/federation/v1/send/") ? { status: 200, json: { pdus: {} } } : undefined));
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
    unsubscribe = b.hs.services.commits.subscribe((_s, c) => void seen.push(c));
  }, 60_000);
  afterAll(async () => {
    unsubscribe();
    await Promise.all([a?.close(), b?.close(), f?.close()]);
  });

  const noticesOf = (roomId: string) => seen.filter((c) => c.notice.roomId === roomId);

  it("an invite received over federation and its rejection through the inviter are announced, naming the member", async () => {
    const roomId = await createRoom(a, alice, { preset: "private_chat", name: "Out of band" });
    const dave = await registerUser(b, "dave");
    expect((await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: dave.user_id } })).status).toBe(200);
    const invite = await eventually(() => noticesOf(roomId).find((c) => c.events[0]?.pdu.content.membership === "invite"), "the invite's commit notice on B");
    expect(invite.notice).toMatchObject({ stream: "events", writer: "master", roomId, outOfBandMembers: [dave.user_id] });
    expect(invite.notice.eventIds).toEqual([invite.events[0]!.eventId]);
    expect(invite.notice.position).toBe(invite.events[0]!.streamOrdering);
    expect(invite.events[0]!.outlier).toBe(true);

    const res = await b.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: dave.access_token, body: { reason: "no thanks" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const rejection = noticesOf(roomId).find((c) => c.events[0]?.pdu.content.membership === "leave");
    expect(rejection?.notice).toMatchObject({ stream: "events", writer: "master", roomId, outOfBandMembers: [dave.user_id] });
    expect(rejection!.events[0]!.pdu.state_key).toBe(dave.user_id);
    expect(rejection!.notice.position).toBeGreaterThan(invite.notice.position);
  });

  it("completing a partial-state room announces the state it adds and the events placed again", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", name: "Partial", room_version: "10" });
    await fillRoomWithMembers(a.hs.services, roomId, f, 20);
    const hold = holdStateFetches(b.hs.services);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);
    await eventually(() => hold.held() > 0, "B's resync asking A for the state");
    const before = noticesOf(roomId).length;
    // The join itself went through the group commit: a notice with its event.
    expect(noticesOf(roomId).some((c) => c.events.some((e) => e.eventId === joined.json.event_id || e.pdu.state_key === bob.user_id))).toBe(true);
    expect(noticesOf(roomId).every((c) => c.notice.eventIds.length > 0)).toBe(true);

    hold.release();
    await eventually(async () => !(await isPartialState(b.hs.services, roomId)) || undefined, "B completing the room's state", 60_000);
    const stateOnly = noticesOf(roomId).slice(before).filter((c) => c.notice.eventIds.length === 0);
    // One for the state entries added (the members A left out), one for the recheck that clears the flag.
    expect(stateOnly.length).toBe(2);
    for (const c of stateOnly) {
      expect(c.notice).toMatchObject({ stream: "events", writer: "master", roomId });
      expect(c.events).toEqual([]);
      expect(c.snapshot).toBeUndefined();
      expect(Number.isInteger(c.notice.position)).toBe(true);
    }
    // The readers that follow the feed reload the room: B's members now hold every member.
    const members = await b.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: bob.access_token });
    expect(members.status).toBe(200);
    expect(Object.keys(members.json.joined).length).toBe(22);
  });
});
