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

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const LAZY = enc(JSON.stringify({ room: { state: { lazy_load_members: true }, timeline: { lazy_load_members: true } } }));

describe.each(backends().slice(0, 1))("scratch %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let f: FakeOrigin;
  let alice: Session;
  let bob: Session;
  beforeAll(async () => {
    f = await startFakeOrigin((req) => (req.path.startsWith("/_matrix/federation/v1/send/") ? { status: 200, json: { pdus: {} } } : undefined));
    [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), f?.close()]);
  });
  it("incremental lazy sync shows a remote join to a new room while another is partial", async () => {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
    await fillRoomWithMembers(a.hs.services, roomId, f, 3);
    const hold = holdStateFetches(b.hs.services);
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(a.serverName)}`, { token: bob.access_token, body: {} });
    expect(joined.status).toBe(200);
    expect(await isPartialState(b.hs.services, roomId)).toBe(true);
    const since = (await b.call("GET", `${V3}/sync?timeout=0&filter=${LAZY}`, { token: bob.access_token })).json.next_batch as string;
    const other = await createRoom(b, bob, { preset: "public_chat" });
    const j2 = await a.call("POST", `${V3}/join/${enc(other)}?via=${enc(b.serverName)}`, { token: alice.access_token, body: {} });
    expect(j2.status, JSON.stringify(j2.json)).toBe(200);
    let tok = since;
    await eventually(async () => {
      const res = await b.call("GET", `${V3}/sync?timeout=0&filter=${LAZY}&since=${enc(tok)}`, { token: bob.access_token });
      const r = res.json.rooms?.join?.[other];
      console.log(JSON.stringify({ tl: r?.timeline?.events?.map((e: any) => [e.type, e.state_key]), st: r?.state?.events?.map((e: any) => [e.type, e.state_key]) }));
      tok = res.json.next_batch;
      const evs = [...(r?.timeline?.events ?? []), ...(r?.state?.events ?? [])];
      return evs.some((e: any) => e.type === "m.room.member" && e.state_key === alice.user_id) || undefined;
    }, "alice's join in bob's sync", 5000);
    hold.release();
  }, 60_000);
});
