// Device lists of a room joined with partial state whose send_join answer left servers out, Weft↔Weft over
// TLS with two stand-in servers (SQLite and PostgreSQL), as Synapse behaves: A's room holds users of F and
// one of G, but B is told only of A (servers_in_room cut down on B's side). While B's resync is held back,
// bob's device change reaches A alone, G's user leaves and F's user sends a device-list update. Once the
// state is complete: the change reaches F (joined, and absent from the answer) and G (its member's
// membership changed since the join, though it left), and bob's /sync shows F's user's devices changed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { fillRoomWithMembers } from "../helpers/big-room.ts";
import { eventOnRoom, pushEvents, sendTransaction } from "../helpers/by-hand.ts";
import { holdStateFetches } from "../helpers/partial-state.ts";
import { isPartialState } from "../../src/domain/federation/partial-state/flag.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const LAZY = enc(JSON.stringify({ room: { state: { lazy_load_members: true }, timeline: { lazy_load_members: true } } }));

type Edu = { edu_type: string; content: any };

describe.each(backends())("device lists of a room joined with partial state, on %s", (backend) => {
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
});
