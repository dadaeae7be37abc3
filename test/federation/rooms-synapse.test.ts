// Rooms shared by Weft (SQLite and PostgreSQL) and a live Synapse over TLS on loopback, driven through
// both servers' client APIs as real clients would: a Synapse user joins a Weft room and a Weft user joins a
// Synapse room, and messages both ways reach the other side's /sync; an invite from each side, accepted,
// then talked through; backfill both ways (a late joiner scrolls back through history its server never
// had); typing and read receipts both ways; a Synapse user's leave reaching Weft's /sync, and a Weft
// user's reaching Synapse's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { SyncClient, type ClientApi, type SyncEvent } from "../helpers/sync-client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

type Who = { user_id: string; access_token: string };

describe.each(backends())("rooms shared by Weft (%s) and Synapse", (backend) => {
  let weft: FederatedServer;
  let syn: SynapseServer;
  let alice: Who;
  let sam: Who;
  let n = 0;

  beforeAll(async () => {
    [weft, syn] = await Promise.all([startFederatedServer({ backend }), startSynapse()]);
    alice = await registerUser(weft, "alice");
    sam = await syn.register("sam");
  }, 600_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), weft?.close()]);
  });

  const say = async (t: ClientApi, who: Who, roomId: string, body: string) => {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/m${++n}-${Date.now()}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const joinVia = async (t: ClientApi, who: Who, roomId: string, server: string) => {
    const res = await t.call("POST", `${V3}/join/${enc(roomId)}?server_name=${enc(server)}`, { token: who.access_token, body: {} });
    expect(res.status, JSON.stringify(res.json) + syn.logTail(20)).toBe(200);
    expect(res.json.room_id).toBe(roomId);
  };
  const synapseRoom = async (body: Record<string, unknown>) => {
    const res = await syn.call("POST", `${V3}/createRoom`, { token: sam.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.room_id as string;
  };
  const joinedOn = (client: SyncClient, roomId: string, userId: string) =>
    client.until(() => (client.timeline.get(roomId) ?? []).find((e) => e.type === "m.room.member" && e.state_key === userId && e.content.membership === "join"), `${userId} joined`);

  /** A room of each server with both users in it. */
  async function bothRooms(tag: string): Promise<{ onWeft: string; onSynapse: string; aliceSync: SyncClient; samSync: SyncClient }> {
    const onWeft = await createRoom(weft, alice as never, { preset: "public_chat", name: `Weft ${tag}` });
    const onSynapse = await synapseRoom({ preset: "public_chat", name: `Synapse ${tag}` });
    const [aliceSync, samSync] = [new SyncClient(weft, alice), new SyncClient(syn, sam, false)];
    await Promise.all([aliceSync.sync(), samSync.sync()]);
    await joinVia(syn, sam, onWeft, weft.serverName);
    await joinVia(weft, alice, onSynapse, syn.serverName);
    // Each resident server's users see the newcomer's join in their /sync.
    await joinedOn(aliceSync, onWeft, sam.user_id);
    await joinedOn(samSync, onSynapse, alice.user_id);
    return { onWeft, onSynapse, aliceSync, samSync };
  }

  it("a Synapse user joins a Weft room and a Weft user a Synapse room; messages both ways reach the other side's /sync", async () => {
    const { onWeft, onSynapse, aliceSync, samSync } = await bothRooms("talk");
    for (const roomId of [onWeft, onSynapse]) {
      await say(weft, alice, roomId, "alice 1");
      await say(syn, sam, roomId, "sam 1");
      await say(weft, alice, roomId, "alice 2");
      await say(syn, sam, roomId, "sam 2");
    }
    for (const client of [aliceSync, samSync]) {
      for (const roomId of [onWeft, onSynapse]) {
        const bodies = await client.until(() => client.bodies(roomId).length >= 4 && client.bodies(roomId), `four messages in ${roomId}`);
        expect(bodies.filter((b) => b.startsWith("alice"))).toEqual(["alice 1", "alice 2"]);
        expect(bodies.filter((b) => b.startsWith("sam"))).toEqual(["sam 1", "sam 2"]);
        const fromSam = client.timeline.get(roomId)!.find((e) => e.content.body === "sam 1")!;
        expect(fromSam).toMatchObject({ sender: sam.user_id, type: "m.room.message", content: { msgtype: "m.text" } });
      }
    }
    // Both servers hold the same current state of each room.
    for (const roomId of [onWeft, onSynapse]) {
      const [w, s] = await Promise.all([weft.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: alice.access_token }), syn.call("GET", `${V3}/rooms/${enc(roomId)}/state`, { token: sam.access_token })]);
      const ids = (list: SyncEvent[]) => list.map((e) => `${e.type}|${e.state_key}|${e.event_id}`).sort();
      expect(ids(w.json)).toEqual(ids(s.json));
    }
  }, 120_000);

  it("an invite from each side: accepted, and the invitee's first message reaches the inviter's /sync", async () => {
    // Weft invites a Synapse user.
    const weftRoom = await createRoom(weft, alice as never, { preset: "private_chat", name: "Weft invites" });
    const sid = await syn.register(`sid${Date.now()}`);
    const sidSync = new SyncClient(syn, sid, false);
    await sidSync.sync();
    expect((await weft.call("POST", `${V3}/rooms/${enc(weftRoom)}/invite`, { token: alice.access_token, body: { user_id: sid.user_id } })).status).toBe(200);
    const toSid = await sidSync.until(() => sidSync.invites.get(weftRoom), "Weft's invite on Synapse");
    expect(toSid.find((e) => e.type === "m.room.name")?.content.name).toBe("Weft invites");
    expect((await syn.call("POST", `${V3}/rooms/${enc(weftRoom)}/join`, { token: sid.access_token, body: {} })).status).toBe(200);

    // Synapse invites a Weft user.
    const synRoom = await synapseRoom({ preset: "private_chat", name: "Synapse invites" });
    const wes = await registerUser(weft, `wes${n++}`);
    const wesSync = new SyncClient(weft, wes);
    await wesSync.sync();
    const inv = await syn.call("POST", `${V3}/rooms/${enc(synRoom)}/invite`, { token: sam.access_token, body: { user_id: wes.user_id } });
    expect(inv.status, JSON.stringify(inv.json)).toBe(200);
    const toWes = await wesSync.until(() => wesSync.invites.get(synRoom), "Synapse's invite on Weft");
    expect(toWes.find((e) => e.type === "m.room.member" && e.state_key === wes.user_id)).toMatchObject({ sender: sam.user_id, content: { membership: "invite" } });
    const accepted = await weft.call("POST", `${V3}/rooms/${enc(synRoom)}/join`, { token: wes.access_token, body: {} });
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);

    // Each invitee speaks; each inviter's /sync hears it.
    const aliceSync = new SyncClient(weft, alice);
    const samSync = new SyncClient(syn, sam, false);
    const fromSid = await say(syn, sid, weftRoom, "thanks, Weft");
    const fromWes = await say(weft, wes, synRoom, "thanks, Synapse");
    await aliceSync.until(() => aliceSync.has(weftRoom, fromSid), "sid's message on Weft");
    await samSync.until(() => samSync.has(synRoom, fromWes), "wes's message on Synapse");
  }, 120_000);

  /** `reader`'s /messages on `t`, back from the end page by page until there is no more. */
  async function scrollBack(t: ClientApi, reader: Who, roomId: string, validate: boolean): Promise<SyncEvent[]> {
    const events: SyncEvent[] = [];
    let from: string | undefined;
    for (let page = 0; page < 40; page++) {
      const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=10${from ? `&from=${enc(from)}` : ""}`, { token: reader.access_token });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      if (validate) expectMatchesSpec(res, "GET", `${V3}/rooms/x/messages`);
      events.push(...res.json.chunk);
      if (res.json.end === undefined || res.json.chunk.length === 0) return events;
      from = res.json.end;
    }
    throw new Error("pagination did not end");
  }

  it("backfill both ways: a late joiner scrolls back through the history its server never had", async () => {
    const history = (prefix: string) => Array.from({ length: 25 }, (_, i) => `${prefix}${25 - i}`);
    // A Weft user joins a Synapse room after 25 messages: Weft asks Synapse for /backfill.
    const synRoom = await synapseRoom({ preset: "public_chat", name: "Synapse history", initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "shared" } }] });
    for (let i = 1; i <= 25; i++) await say(syn, sam, synRoom, `s${i}`);
    const late = await registerUser(weft, `late${n++}`);
    await joinVia(weft, late, synRoom, syn.serverName);
    const onWeft = await scrollBack(weft, late, synRoom, true);
    expect(onWeft.filter((e) => e.type === "m.room.message").map((e) => e.content.body)).toEqual(history("s"));
    expect(onWeft.at(-1)!.type).toBe("m.room.create");
    expect(new Set(onWeft.map((e) => e.event_id)).size).toBe(onWeft.length);

    // A Synapse user joins a Weft room after 25 messages: Synapse asks Weft for /backfill.
    const weftRoom = await createRoom(weft, alice as never, { preset: "public_chat", name: "Weft history", initial_state: [{ type: "m.room.history_visibility", state_key: "", content: { history_visibility: "shared" } }] });
    for (let i = 1; i <= 25; i++) await say(weft, alice, weftRoom, `w${i}`);
    const sly = await syn.register(`sly${Date.now()}`);
    await joinVia(syn, sly, weftRoom, weft.serverName);
    const onSynapse = await scrollBack(syn, sly, weftRoom, false);
    expect(onSynapse.filter((e) => e.type === "m.room.message").map((e) => e.content.body)).toEqual(history("w"));
    expect(onSynapse.at(-1)!.type).toBe("m.room.create");
  }, 180_000);

  it("typing and read receipts both ways reach the other side's /sync", async () => {
    const { onWeft, onSynapse, aliceSync, samSync } = await bothRooms("ephemeral");
    for (const roomId of [onWeft, onSynapse]) {
      // alice (Weft) types: sam's Synapse /sync shows it, then its end.
      expect((await weft.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, body: { typing: true, timeout: 30000 } })).status).toBe(200);
      await samSync.until(() => samSync.typing(roomId)?.includes(alice.user_id), "alice typing on Synapse");
      expect((await weft.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, body: { typing: false } })).status).toBe(200);
      await samSync.until(() => samSync.typing(roomId) && !samSync.typing(roomId)!.includes(alice.user_id), "alice stopped typing on Synapse");
      // sam (Synapse) types: alice's Weft /sync shows it, then its end.
      expect((await syn.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(sam.user_id)}`, { token: sam.access_token, body: { typing: true, timeout: 30000 } })).status).toBe(200);
      await aliceSync.until(() => aliceSync.typing(roomId)?.includes(sam.user_id), "sam typing on Weft");
      expect((await syn.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(sam.user_id)}`, { token: sam.access_token, body: { typing: false } })).status).toBe(200);
      await aliceSync.until(() => aliceSync.typing(roomId) && !aliceSync.typing(roomId)!.includes(sam.user_id), "sam stopped typing on Weft");

      // Each reads the other's message: the receipt reaches the sender's /sync.
      const fromAlice = await say(weft, alice, roomId, "read me, sam");
      const fromSam = await say(syn, sam, roomId, "read me, alice");
      await samSync.until(() => samSync.has(roomId, fromAlice), "alice's message on Synapse");
      await aliceSync.until(() => aliceSync.has(roomId, fromSam), "sam's message on Weft");
      expect((await syn.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(fromAlice)}`, { token: sam.access_token, body: {} })).status).toBe(200);
      expect((await weft.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(fromSam)}`, { token: alice.access_token, body: {} })).status).toBe(200);
      expect((await aliceSync.until(() => aliceSync.receipt(roomId, fromAlice, sam.user_id), "sam's receipt on Weft")).ts).toEqual(expect.any(Number));
      expect((await samSync.until(() => samSync.receipt(roomId, fromSam, alice.user_id), "alice's receipt on Synapse")).ts).toEqual(expect.any(Number));
    }
  }, 180_000);

  it("leaves: a Synapse user's leave reaches Weft's /sync, a Weft user's reaches Synapse's", async () => {
    const { onWeft, onSynapse, aliceSync, samSync } = await bothRooms("leaving");
    const left = await syn.call("POST", `${V3}/rooms/${enc(onWeft)}/leave`, { token: sam.access_token, body: { reason: "bye from Synapse" } });
    expect(left.status, JSON.stringify(left.json)).toBe(200);
    const samLeave = await aliceSync.until(() => (aliceSync.timeline.get(onWeft) ?? []).find((e) => e.type === "m.room.member" && e.state_key === sam.user_id && e.content.membership === "leave"), "sam's leave on Weft");
    expect(samLeave.content.reason).toBe("bye from Synapse");
    const members = await weft.call("GET", `${V3}/rooms/${enc(onWeft)}/joined_members`, { token: alice.access_token });
    expect(Object.keys(members.json.joined)).toEqual([alice.user_id]);

    const gone = await weft.call("POST", `${V3}/rooms/${enc(onSynapse)}/leave`, { token: alice.access_token, body: { reason: "bye from Weft" } });
    expect(gone.status, JSON.stringify(gone.json)).toBe(200);
    const aliceLeave = await samSync.until(() => (samSync.timeline.get(onSynapse) ?? []).find((e) => e.type === "m.room.member" && e.state_key === alice.user_id && e.content.membership === "leave"), "alice's leave on Synapse");
    expect(aliceLeave.content.reason).toBe("bye from Weft");
    // Alice's own /sync shows the room left.
    await aliceSync.until(() => aliceSync.has(onSynapse, aliceLeave.event_id), "alice's leave in her /sync");
  }, 120_000);
});
