// Knocking and restricted joins between Weft (SQLite and PostgreSQL) and a live Synapse over TLS on
// loopback: a Synapse user knocks on a Weft room (Synapse calls Weft's make_knock / send_knock and reads
// its knock_room_state), is invited by Weft's moderator and joins; a Weft user knocks on a Synapse room
// (Weft checks Synapse's answers), is invited and joins; restricted rooms in a space, each side authorising
// (and signing) the other's join; a knock on a room that does not allow it is refused. What each side sees
// is read from its own client API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { eventually } from "../helpers/federation-peer.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

type Caller = { call(method: string, p: string, o?: { body?: unknown; token?: string }): Promise<{ status: number; json: any }> };
type Who = { user_id: string; access_token: string };

async function membership(t: Caller, who: Who, roomId: string, userId: string): Promise<string | undefined> {
  const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: who.access_token });
  return res.status === 200 ? res.json.membership : undefined;
}

/**
 * Waits until `who`'s /sync on `t` shows `roomId` in rooms.invite / rooms.knock; returns that section.
 * Each poll goes on from the last next_batch (Synapse answers a repeated request from its cache).
 */
async function inSync(t: Caller, who: Who, section: "invite" | "knock", roomId: string, ms = 30_000): Promise<any> {
  const deadline = Date.now() + ms;
  let since: string | undefined;
  for (;;) {
    const res = await t.call("GET", `${V3}/sync?timeout=${since ? 1000 : 0}${since ? `&since=${enc(since)}` : ""}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const found = res.json?.rooms?.[section]?.[roomId];
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${roomId} in rooms.${section}`);
    since = res.json.next_batch;
  }
}

describe.each(backends())("knocking and restricted joins between Weft (%s) and Synapse", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Session;
  let sam: Who;

  beforeAll(async () => {
    weft = await startFederatedServer({ backend });
    syn = await startSynapse();
    alice = await registerUser(weft, "alice");
    sam = await syn.register("sam");
  }, 600_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  const knockRules = (rule: string, extra: Record<string, unknown> = {}) => [{ type: "m.room.join_rules", state_key: "", content: { join_rule: rule, ...extra } }];

  it("a Synapse user knocks on a Weft room, sees Weft's stripped state, and joins once Weft's moderator invites", async () => {
    const roomId = await createRoom(weft, alice, { preset: "private_chat", room_version: "10", name: "Weft knock room", initial_state: knockRules("knock") });
    const kim = await syn.register(`kim${Date.now()}`);
    const res = await syn.call("POST", `${V3}/knock/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: kim.access_token, body: { reason: "hello" } });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
    expect(await membership(weft, alice, roomId, kim.user_id)).toBe("knock");
    // Synapse shows the knock with the state Weft answered.
    const knock = await inSync(syn, kim, "knock", roomId);
    const names = (knock.knock_state.events as { type: string; content: any }[]).filter((e) => e.type === "m.room.name").map((e) => e.content.name);
    expect(names).toEqual(["Weft knock room"]);

    const invite = await weft.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: kim.user_id } });
    expect(invite.status, JSON.stringify(invite.json) + syn.logTail(30)).toBe(200);
    await inSync(syn, kim, "invite", roomId);
    const join = await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: kim.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json) + syn.logTail(30)).toBe(200);
    expect(await membership(weft, alice, roomId, kim.user_id)).toBe("join");
  }, 90_000);

  it("a Weft user knocks on a Synapse room, sees it in /sync rooms.knock, and joins once Synapse's moderator invites", async () => {
    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "private_chat", room_version: "10", name: "Synapse knock room", initial_state: knockRules("knock") } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const roomId = created.json.room_id as string;
    const kay = await registerUser(weft, `kay${Date.now()}`);
    const res = await weft.call("POST", `${V3}/knock/${enc(roomId)}?via=${enc(syn.serverName)}`, { token: kay.access_token, body: { reason: "hello" } });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
    await eventually(async () => (await membership(syn, sam, roomId, kay.user_id)) === "knock", "Synapse to hold the knock", 30_000);
    const knock = await inSync(weft, kay, "knock", roomId);
    const events = knock.knock_state.events as { type: string; state_key: string; content: any }[];
    expect(events.find((e) => e.type === "m.room.name")?.content.name).toBe("Synapse knock room");
    expect(events.find((e) => e.type === "m.room.join_rules")?.content.join_rule).toBe("knock");
    expect(events.find((e) => e.type === "m.room.member" && e.state_key === kay.user_id)?.content.membership).toBe("knock");

    const invite = await syn.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: sam.access_token, body: { user_id: kay.user_id } });
    expect(invite.status, JSON.stringify(invite.json) + syn.logTail(30)).toBe(200);
    await inSync(weft, kay, "invite", roomId);
    const join = await weft.call("POST", `${V3}/join/${enc(roomId)}`, { token: kay.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json) + syn.logTail(30)).toBe(200);
    await eventually(async () => (await membership(syn, sam, roomId, kay.user_id)) === "join", "Synapse to see kay joined", 30_000);
  }, 90_000);

  it("a knock on a Synapse room that does not allow it is refused, and Weft keeps nothing", async () => {
    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "private_chat", room_version: "10" } });
    const roomId = created.json.room_id as string;
    const kev = await registerUser(weft, `kev${Date.now()}`);
    const res = await weft.call("POST", `${V3}/knock/${enc(roomId)}?via=${enc(syn.serverName)}`, { token: kev.access_token, body: {} });
    expect([res.status, res.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect(await weft.hs.services.rooms.store.membership(roomId, kev.user_id)).toBeUndefined();
  }, 60_000);

  it("a Synapse user joins a restricted Weft room through a Weft space: Weft authorises and signs, Synapse accepts", async () => {
    const space = await createRoom(weft, alice, { preset: "public_chat", room_version: "10", name: "Weft space", creation_content: { type: "m.space" } });
    const roomId = await createRoom(weft, alice, { preset: "private_chat", room_version: "10", initial_state: knockRules("restricted", { allow: [{ type: "m.room_membership", room_id: space }] }) });
    const rae = await syn.register(`rae${Date.now()}`);
    const early = await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: rae.access_token, body: {} });
    expect(early.status, JSON.stringify(early.json)).toBe(403);
    expect((await syn.call("POST", `${V3}/join/${enc(space)}?server_name=${enc(weft.serverName)}`, { token: rae.access_token, body: {} })).status).toBe(200);
    const res = await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: rae.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
    const join = await weft.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(rae.user_id)}`, { token: alice.access_token });
    expect(join.json).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });
    const onSyn = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(rae.user_id)}`, { token: rae.access_token });
    expect(onSyn.json).toMatchObject({ membership: "join", join_authorised_via_users_server: alice.user_id });
  }, 90_000);

  it("a Weft user joins a restricted Synapse room through a Synapse space: Synapse authorises and signs, Weft checks it", async () => {
    const space = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", room_version: "10", creation_content: { type: "m.space" } } });
    const spaceId = space.json.room_id as string;
    const created = await syn.call("POST", `${V3}/createRoom`, {
      token: sam.access_token,
      body: { preset: "private_chat", room_version: "10", name: "Restricted", initial_state: knockRules("restricted", { allow: [{ type: "m.room_membership", room_id: spaceId }] }) },
    });
    const roomId = created.json.room_id as string;
    const ray = await registerUser(weft, `ray${Date.now()}`);
    const early = await weft.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(syn.serverName)}`, { token: ray.access_token, body: {} });
    expect([early.status, early.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    expect((await weft.call("POST", `${V3}/join/${enc(spaceId)}?via=${enc(syn.serverName)}`, { token: ray.access_token, body: {} })).status).toBe(200);
    const res = await weft.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(syn.serverName)}`, { token: ray.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
    const join = await weft.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(ray.user_id)}?format=event`, { token: ray.access_token });
    expect(join.json.content).toMatchObject({ membership: "join", join_authorised_via_users_server: sam.user_id });
    const stored = await weft.hs.services.rooms.events.get(join.json.event_id);
    expect(Object.keys(stored!.pdu.signatures).sort()).toEqual([syn.serverName, weft.serverName].sort());
    await eventually(async () => (await membership(syn, sam, roomId, ray.user_id)) === "join", "Synapse to see ray joined", 30_000);
  }, 90_000);
});
