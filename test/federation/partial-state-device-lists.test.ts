// Device lists of a room joined with partial state whose send_join answer left servers out, Weft↔Weft over
// TLS with two stand-in servers (SQLite and PostgreSQL), as Synapse behaves: A's room holds users of F and
// one of G, but B is told only of A (servers_in_room cut down on B's side). While B's resync is held back,
// bob's device change reaches A alone, G's user leaves and F's user sends a device-list update. Once the
// state is complete: the change reaches F (joined, and absent from the answer) and G (its member's
// membership changed since the join, though it left), and bob's /sync shows F's user's devices changed.
// And an event whose auth events the partial state contradicts (a kick by a member who had left, let
// through while partial, then a message of the member it "kicked" citing their join) is authorized against
// the two resolved, as Synapse does: the message is taken.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { fillRoomWithMembers } from "../helpers/big-room.ts";
import { eventOnRoom, pushEvents, sendTransaction, signedCall } from "../helpers/by-hand.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { buildEvent } from "../../src/domain/rooms/build-event.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const LAZY = enc(JSON.stringify({ room: { state: { lazy_load_members: true }, timeline: { lazy_load_members: true } } }));

type Edu = { edu_type: string; content: any };

describe.each(backends())("device lists and auth in a room joined with partial state, on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let f: FakeOrigin;
  let g: FakeOrigin;
  let alice: Session;
  let bob: Session;
  const edusTo = new Map<string, Edu[]>();
  const recording = (name: () => string) => (req: { path: string; body: unknown }) => {
    if (!req.path.startsWith("/_matrix/federation/v1/send/")) return undefined;
    const list = edusTo.get(name()) ?? [];
    list.push(...(((req.body as { edus?: unknown[] }).edus ?? []) as Edu[]));
    edusTo.set(name(), list);
    return { status: 200, json: { pdus: {} } };
  };

  beforeAll(async () => {
    f = await startFakeOrigin(recording(() => f.serverName));
    g = await startFakeOrigin(recording(() => g.serverName));
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), f?.close(), g?.close()]);
  });

  const bobsUpdates = (server: string) => (edusTo.get(server) ?? []).filter((e) => e.edu_type === "m.device_list_update" && e.content.user_id === bob.user_id);

  it("sends local changes to the servers the join's answer left out, and replays remote updates, once complete", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
    const fUsers = await fillRoomWithMembers(a.hs.services, roomId, f, 8);
    const [gUser] = await fillRoomWithMembers(a.hs.services, roomId, g, 1, "g");

    // A's send_join answer, as B reads it, names A alone.
    const fed = b.hs.services.federation;
    const putJson = fed.putJson.bind(fed);
    fed.putJson = (async (dest: string, path: string, ...rest: unknown[]) => {
      const answer = await (putJson as (...x: unknown[]) => Promise<unknown>)(dest, path, ...rest);
      if (path.startsWith("/_matrix/federation/v2/send_join/")) (answer as { servers_in_room: string[] }).servers_in_room = [a.serverName];
      return answer;
    }) as typeof fed.putJson;
    const hold = holdStateFetches(b.hs.services);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);
    const since = (await b.call("GET", `${V3}/sync?timeout=0&filter=${LAZY}`, { token: bob.access_token })).json.next_batch as string;

    // G's user leaves (A passes the leave on to B); an F user B does not know of yet changes a
    // device.
    const leave = await eventOnRoom(a.hs.services, roomId, g, { type: "m.room.member", stateKey: gUser!, sender: gUser!, content: { membership: "leave" } });
    expect((await receiveRemoteEvents(a.hs.services, roomId, [{ pdu: leave.pdu }]))[0]?.status).toBe("accepted");
    expect((await pushEvents(a, b, [leave.eventId])).status).toBe(200);
    await eventually(async () => (await b.hs.services.rooms.store.membership(roomId, gUser!))?.membership === "leave" || undefined, "G's leave on B");
    // (One B does not know is in the room: the answer's state holds a few members, the room's heroes.)
    const bState = (await loadRoom(b.hs.services, roomId))!.state;
    const unknown = fUsers.find((u) => !bState.has(stateKeyOf("m.room.member", u)))!;
    expect(unknown).toBeDefined();
    const update = { edu_type: "m.device_list_update", content: { user_id: unknown, device_id: "FDEVICE", stream_id: 1, prev_id: [] } };
    expect((await sendTransaction(f, b, [], [update])).status).toBe(200);

    // Bob renames his device: only A, named by the answer, hears of it while partial.
    const devices = await b.call("GET", `${V3}/devices`, { token: bob.access_token });
    const deviceId = devices.json.devices[0].device_id as string;
    const aHeard = new Promise<void>((resolve) => {
      const queue = b.hs.services.federationSender;
      const original = queue.queueDurableEdu.bind(queue);
      queue.queueDurableEdu = (async (...args: Parameters<typeof original>) => {
        const out = await original(...args);
        if ((args[2] as Edu).edu_type === "m.device_list_update" && [...args[1]].includes(a.serverName)) resolve();
        return out;
      }) as typeof original;
    });
    expect((await b.call("PUT", `${V3}/devices/${enc(deviceId)}`, { token: bob.access_token, body: { display_name: "renamed" } })).status).toBe(200);
    await aHeard;
    expect([bobsUpdates(f.serverName), bobsUpdates(g.serverName)]).toEqual([[], []]);

    hold.release();
    await eventually(async () => !(await isPartialState(b.hs.services, roomId)) || undefined, "B completing the room's state", 60_000);
    // F (joined) and G (left since the join) get the change they missed.
    for (const server of [f.serverName, g.serverName]) {
      const [missed] = await eventually(() => (bobsUpdates(server).length > 0 ? bobsUpdates(server) : undefined), `bob's missed update reaching ${server}`);
      expect([missed!.content.device_id, missed!.content.deleted]).toEqual([deviceId, undefined]);
    }
    // F's user's update, noted while partial, shows once B knows they are in the room.
    await eventually(async () => {
      const res = await b.call("GET", `${V3}/sync?timeout=0&filter=${LAZY}&since=${enc(since)}`, { token: bob.access_token });
      return ((res.json.device_lists?.changed ?? []) as string[]).includes(unknown) || undefined;
    }, "F's user in bob's device_lists.changed");
  }, 120_000);

  it("authorizes an event whose auth events the partial state contradicts against both, resolved (as Synapse)", async () => {
    // A's room: F's derek is made an admin, then leaves; F's victim stays joined.
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
    const ks = await fillRoomWithMembers(a.hs.services, roomId, f, 8, "k");
    // (The last to join: not among the few members the answer's state holds, the room's heroes.)
    const [victim, derek] = [ks[0], ks[7]];
    const pl = (await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: alice.access_token })).json;
    const setPl = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels/`, { token: alice.access_token, body: { ...pl, users: { ...pl.users, [derek!]: 100 } } });
    expect(setPl.status).toBe(200);
    const derekJoin = (await loadRoom(a.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", derek!))!;
    const victimJoin = (await loadRoom(a.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", victim!))!;
    const gone = await eventOnRoom(a.hs.services, roomId, f, { type: "m.room.member", stateKey: derek!, sender: derek!, content: { membership: "leave" } });
    expect((await receiveRemoteEvents(a.hs.services, roomId, [{ pdu: gone.pdu }]))[0]?.status).toBe("accepted");
    // F answers /event_auth for the events it makes up below: derek's join and its auth chain, from A.
    let made: string[] = [];
    f.handler = async (req) => {
      const recorded = recording(() => f.serverName)(req);
      if (recorded) return recorded;
      if (req.path.startsWith("/_matrix/federation/v1/event_auth/") && made.some((id) => req.path.endsWith(`/${id}`))) {
        const res = await signedCall(f, a, "GET", `/_matrix/federation/v1/event_auth/${enc(roomId)}/${enc(derekJoin)}`);
        const join = (await a.hs.services.rooms.events.get(derekJoin))!.pdu;
        return { status: 200, json: { auth_chain: [join, ...res.json.auth_chain] } };
      }
      return undefined;
    };

    const hold = holdStateFetches(b.hs.services);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const bRoom = (await loadRoom(b.hs.services, roomId))!;
    expect(bRoom.state.has(stateKeyOf("m.room.member", derek!))).toBe(false);

    // Derek, gone, "kicks" the victim citing his old join: B's partial state lets it through.
    const lookup = async (id: string) => (await a.hs.services.rooms.events.get(id))?.pdu;
    const onA = (await loadRoom(a.hs.services, roomId))!;
    const asIfJoined = new Map(onA.state).set(stateKeyOf("m.room.member", derek!), derekJoin);
    // (Its auth events leave the victim's join out, as Complement's kick does: else state resolution orders
    // the join, an auth event of the kick, before it.)
    const forKick = new Map(asIfJoined);
    forKick.delete(stateKeyOf("m.room.member", victim!));
    const ctx = { roomId, version: onA.version, state: forKick, extremities: onA.extremities, maxDepth: onA.maxDepth, lookup };
    const kick = await buildEvent(b.hs.services, ctx, { type: "m.room.member", stateKey: victim!, sender: derek!, content: { membership: "leave" } }, Date.now(), f);
    made = [kick.eventId];
    const sent = await sendTransaction(f, b, [kick.pdu]);
    expect([sent.status, sent.json.pdus?.[kick.eventId]], JSON.stringify(sent.json)).toEqual([200, {}]);
    expect((await loadRoom(b.hs.services, roomId))!.state.get(stateKeyOf("m.room.member", victim!))).toBe(kick.eventId);

    // The victim speaks, citing their join: the state before it (the kick) and the auth events resolve to
    // the join, so B takes the message.
    const afterKick = { roomId, version: onA.version, state: new Map(asIfJoined).set(stateKeyOf("m.room.member", victim!), victimJoin), extremities: [kick.eventId], maxDepth: kick.pdu.depth, lookup: async (id: string) => (id === kick.eventId ? kick.pdu : lookup(id)) };
    const msg = await buildEvent(b.hs.services, afterKick, { type: "m.room.message", sender: victim!, content: { msgtype: "m.text", body: "still here" } }, Date.now(), f);
    expect(msg.pdu.auth_events).toContain(victimJoin);
    made = [kick.eventId, msg.eventId];
    const spoke = await sendTransaction(f, b, [msg.pdu]);
    expect([spoke.status, spoke.json.pdus?.[msg.eventId]], JSON.stringify(spoke.json)).toEqual([200, {}]);
    const stored = (await b.hs.services.rooms.events.get(msg.eventId))!;
    expect([stored.rejectedReason, stored.softFailed], JSON.stringify([stored.rejectedReason, stored.softFailed])).toEqual([null, false]);
    hold.release();
    await eventually(async () => !(await isPartialState(b.hs.services, roomId)) || undefined, "B completing the room's state", 60_000);
  }, 120_000);
});
