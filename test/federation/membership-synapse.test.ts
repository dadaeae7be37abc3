// Membership between Weft (SQLite and PostgreSQL) and a live Synapse over TLS on loopback: a Synapse user
// joins Weft rooms (Synapse calls Weft's make_join / send_join and checks its answer) and a Weft user joins
// Synapse rooms (Weft checks Synapse's), in several room versions; invites from each side, accepted and
// rejected (the rejection through make_leave / send_leave); a Weft user leaving a Synapse room (a leave
// made on Weft). What each side sees is read from its own client API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

type Caller = { call(method: string, p: string, o?: { body?: unknown; token?: string }): Promise<{ status: number; json: any }> };
type Who = { user_id: string; access_token: string };

/** Polls `read` until `done` holds (or fails after `ms`). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A user's membership in a room as `t`'s client API shows it to `who` (undefined when not readable). */
async function membership(t: Caller, who: Who, roomId: string, userId: string): Promise<string | undefined> {
  const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: who.access_token });
  return res.status === 200 ? res.json.membership : undefined;
}

describe.each(backends())("membership between Weft (%s) and Synapse", (backend) => {
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

  for (const version of ["1", "10", "12"]) {
    it(`a Synapse user joins a version ${version} Weft room: Synapse checks Weft's send_join answer`, async () => {
      const roomId = await createRoom(weft, alice, { preset: "public_chat", room_version: version, name: `Weft v${version}` });
      const res = await syn.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(weft.serverName)}`, { token: sam.access_token, body: {} });
      expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
      expect(await membership(weft, alice, roomId, sam.user_id)).toBe("join");
      // Synapse holds the room's state as Weft made it.
      const name = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.name`, { token: sam.access_token });
      expect([name.status, name.json.name]).toEqual([200, `Weft v${version}`]);
      const members = await syn.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: sam.access_token });
      expect(Object.keys(members.json.joined ?? {}).sort()).toEqual([alice.user_id, sam.user_id].sort());
    }, 60_000);

    it(`a Weft user joins a version ${version} Synapse room: Weft checks Synapse's answer and holds the state`, async () => {
      const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", room_version: version, name: `Synapse v${version}` } });
      expect(created.status, JSON.stringify(created.json)).toBe(200);
      const roomId = created.json.room_id as string;
      const res = await weft.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(syn.serverName)}`, { token: alice.access_token, body: {} });
      expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
      const state = await weft.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: alice.access_token });
      expect(state.status).toBe(200);
      const byKey = new Map((state.json as { type: string; state_key: string; content: any; sender: string }[]).map((e) => [`${e.type}|${e.state_key}`, e]));
      expect(byKey.get("m.room.create|")!.sender).toBe(sam.user_id);
      expect(byKey.get("m.room.create|")!.content.room_version).toBe(version);
      expect(byKey.get("m.room.name|")!.content.name).toBe(`Synapse v${version}`);
      expect(byKey.get(`m.room.member|${alice.user_id}`)!.content.membership).toBe("join");
      // Synapse took the join.
      await until(() => membership(syn, sam, roomId, alice.user_id), (m) => m === "join", "Synapse to see alice joined");
    }, 60_000);
  }

  it("Weft invites a Synapse user: Synapse shows the invite with Weft's stripped state, and the user joins through Weft", async () => {
    const roomId = await createRoom(weft, alice, { preset: "private_chat", room_version: "11", name: "Weft invitation" });
    const sue = await syn.register(`sue${Date.now()}`);
    const res = await weft.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: sue.user_id } });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(30)).toBe(200);
    expect(await membership(weft, alice, roomId, sue.user_id)).toBe("invite");
    // The invite on Weft carries Synapse's signature beside Weft's.
    const inviteId = (await weft.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(sue.user_id)}?format=event`, { token: alice.access_token })).json.event_id;
    const stored = await weft.hs.services.rooms.events.get(inviteId);
    expect(Object.keys(stored!.pdu.signatures).sort()).toEqual([syn.serverName, weft.serverName].sort());

    const sync = await until(() => syn.call("GET", `${V3}/sync`, { token: sue.access_token }), (r) => r.json?.rooms?.invite?.[roomId] !== undefined, "Synapse's sync to show the invite");
    const events = sync.json.rooms.invite[roomId].invite_state.events as { type: string; content: any; state_key: string }[];
    expect(events.find((e) => e.type === "m.room.name")?.content.name).toBe("Weft invitation");
    expect(events.find((e) => e.type === "m.room.member" && e.state_key === sue.user_id)?.content.membership).toBe("invite");

    const join = await syn.call("POST", `${V3}/join/${enc(roomId)}`, { token: sue.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json) + syn.logTail(30)).toBe(200);
    expect(await membership(weft, alice, roomId, sue.user_id)).toBe("join");
  }, 60_000);

  for (const version of ["1", "12"]) {
    it(`Synapse invites a Weft user to a version ${version} room: Weft's /sync shows it with stripped state, and the user joins through Synapse`, async () => {
      const bob = await registerUser(weft, `bob${version}`);
      const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "private_chat", room_version: version, name: `Synapse party v${version}` } });
      expect(created.status, JSON.stringify(created.json)).toBe(200);
      const roomId = created.json.room_id as string;
      const invited = await syn.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: sam.access_token, body: { user_id: bob.user_id } });
      expect(invited.status, JSON.stringify(invited.json) + syn.logTail(30)).toBe(200);

      const sync = await until(() => weft.call("GET", `${V3}/sync`, { token: bob.access_token }), (r) => r.json?.rooms?.invite?.[roomId] !== undefined, "Weft's sync to show the invite");
      const events = sync.json.rooms.invite[roomId].invite_state.events as { type: string; content: any; state_key: string; sender: string }[];
      expect(events.find((e) => e.type === "m.room.name")?.content.name).toBe(`Synapse party v${version}`);
      expect(events.find((e) => e.type === "m.room.create")?.sender).toBe(sam.user_id);
      expect(events.find((e) => e.type === "m.room.member" && e.state_key === bob.user_id)).toMatchObject({ sender: sam.user_id, content: { membership: "invite" } });
      // Stripped state only: no federation fields reach the client.
      for (const e of events.filter((x) => x.type !== "m.room.member")) expect(Object.keys(e).sort()).toEqual(["content", "sender", "state_key", "type"]);

      const join = await weft.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
      expect(join.status, JSON.stringify(join.json) + syn.logTail(30)).toBe(200);
      await until(() => membership(syn, sam, roomId, bob.user_id), (m) => m === "join", "Synapse to see bob joined");
      // A partial-state join shows in a sync that does not lazy-load members once the state is complete (as Synapse).
      const after = await until(() => weft.call("GET", `${V3}/sync`, { token: bob.access_token }), (r) => r.json?.rooms?.join?.[roomId] !== undefined, "Weft's sync to show the room joined");
      expect(after.json.rooms.invite?.[roomId]).toBeUndefined();
    }, 60_000);
  }

  it("a Weft user rejects a Synapse invite through Synapse, and leaves a Synapse room", async () => {
    const carol = await registerUser(weft, "carol");
    const created = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body: { preset: "public_chat", room_version: "10", name: "Synapse hall" } });
    const roomId = created.json.room_id as string;
    const invited = await syn.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: sam.access_token, body: { user_id: carol.user_id } });
    expect(invited.status, JSON.stringify(invited.json)).toBe(200);
    const before = await until(() => weft.call("GET", `${V3}/sync`, { token: carol.access_token }), (r) => r.json?.rooms?.invite?.[roomId] !== undefined, "the invite on Weft");
    const reject = await weft.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: carol.access_token, body: { reason: "not today" } });
    expect(reject.status, JSON.stringify(reject.json) + syn.logTail(30)).toBe(200);
    const rejection = await until(() => syn.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(carol.user_id)}?format=event`, { token: sam.access_token }), (r) => r.json?.content?.membership === "leave", "Synapse to see the rejection");
    expect(rejection.json.content.reason).toBe("not today");
    // Carol's next sync: the room leaves the invites for the left rooms, the rejection its timeline.
    const sync = await weft.call("GET", `${V3}/sync?since=${enc(before.json.next_batch)}`, { token: carol.access_token });
    expect(sync.json.rooms?.invite?.[roomId]).toBeUndefined();
    expect(sync.json.rooms.leave[roomId].timeline.events.map((e: { event_id: string }) => e.event_id)).toEqual([rejection.json.event_id]);

    // Now carol joins (public room) and leaves: a leave made on Weft (as Synapse would), sent to Synapse.
    const join = await weft.call("POST", `${V3}/join/${enc(roomId)}?via=${enc(syn.serverName)}`, { token: carol.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    await until(() => membership(syn, sam, roomId, carol.user_id), (m) => m === "join", "Synapse to see carol joined");
    const leave = await weft.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: carol.access_token, body: {} });
    expect(leave.status, JSON.stringify(leave.json)).toBe(200);
    await until(() => membership(syn, sam, roomId, carol.user_id), (m) => m === "leave", "Synapse to see carol leave");
    expect(await membership(weft, carol, roomId, carol.user_id)).toBe("leave");
    const left = await weft.call("GET", `${V3}/sync?filter=${enc(JSON.stringify({ room: { include_leave: true } }))}`, { token: carol.access_token });
    expect(left.json.rooms.leave[roomId].timeline.events.at(-1)).toMatchObject({ type: "m.room.member", state_key: carol.user_id, content: { membership: "leave" } });
    expect(left.json.rooms.join?.[roomId]).toBeUndefined();
  }, 60_000);
});

