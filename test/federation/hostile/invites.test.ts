// Hostile servers, invites and knocks (issue 40): a hostile server hosting its own rooms (a hand-built DAG signed
// with its key) invites Weft's alice with forged stripped state — another room's create event, an entry
// claiming alice as sender with no valid signature, a name that is not the room's — or invites a user of
// a third server, or signs an invite whose sender is a third server's user; and a hostile server whose
// room alice knocks on answers send_knock with forged knock_room_state. Judged by alice's /sync: the
// invites and knocks she is shown and the stripped state she is shown with them. SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../../helpers/federation.ts";
import { registerUser, type Session } from "../../helpers/users.ts";
import { startHostileServer, withBadSignature, type HostileServer } from "../../helpers/hostile-server.ts";
import { Dag } from "../../helpers/dag.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("hostile invites on %s", (backend) => {
  let a: FederatedServer;
  let h: HostileServer;
  let alice: Session;
  let mallory: string;

  beforeAll(async () => {
    a = await startFederatedServer({ backend });
    [h, alice] = await Promise.all([startHostileServer(a), registerUser(a, "alice")]);
    mallory = h.user("mallory");
  });
  afterAll(async () => {
    await Promise.all([a?.close(), h?.close()]);
  });

  /** A room of the hostile server's (mallory its creator) and mallory's invite of `target` into it. */
  async function hostileRoom(version: string, target: string, sender = mallory) {
    const dag = new Dag(a.hs.services, version);
    const first = await dag.create(h, mallory);
    const name = await dag.event(h, { type: "m.room.name", stateKey: "", sender: mallory, content: { name: "mallory's room" } }, [first[3]!.eventId]);
    const invite = await dag.member(h, sender, target, "invite", [name.eventId]);
    return { dag, roomId: dag.roomId, create: first[0]!, name, invite };
  }
  const sendInvite = (roomId: string, invite: { eventId: string; pdu: Pdu }, version: string, inviteRoomState: unknown[]) =>
    h.call("PUT", `/_matrix/federation/v2/invite/${enc(roomId)}/${enc(invite.eventId)}`, { event: invite.pdu, room_version: version, invite_room_state: inviteRoomState });
  /** The invites alice's initial /sync shows: room id → stripped state. */
  const invitesOfAlice = async (): Promise<Record<string, any[]>> => {
    const res = await a.call("GET", `${V3}/sync`, { token: alice.access_token });
    return Object.fromEntries(Object.entries(res.json.rooms?.invite ?? {}).map(([id, r]: [string, any]) => [id, r.invite_state.events]));
  };

  it("control: an honest invite shows in alice's /sync with the room's name", async () => {
    const r = await hostileRoom("11", alice.user_id);
    const res = await sendInvite(r.roomId, r.invite, "11", [r.create.pdu, r.name.pdu]);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const shown = (await invitesOfAlice())[r.roomId]!;
    expect(shown.find((e) => e.type === "m.room.name")?.content.name).toBe("mallory's room");
  });

  it("a v12 invite whose stripped create event is another room's: 400, no invite shown", async () => {
    const r = await hostileRoom("12", alice.user_id);
    const other = await hostileRoom("12", alice.user_id);
    const res = await sendInvite(r.roomId, r.invite, "12", [other.create.pdu, r.name.pdu]);
    expect([res.status, res.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    expect(Object.keys(await invitesOfAlice())).not.toContain(r.roomId);
  });

  it("stripped state with a badly signed entry claiming a local sender: the entry is left out", async () => {
    const r = await hostileRoom("11", alice.user_id);
    const forgedName = await r.dag.event(h, { type: "m.room.name", stateKey: "", sender: alice.user_id, content: { name: "Alice's official room" } }, [r.name.eventId]);
    const res = await sendInvite(r.roomId, r.invite, "11", [r.create.pdu, withBadSignature(forgedName, h.serverName)]);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const shown = (await invitesOfAlice())[r.roomId]!;
    expect(JSON.stringify(shown)).not.toContain("Alice's official room");
  });

  it("an invite for a user of a third server: refused, nothing shown", async () => {
    const r = await hostileRoom("11", "@carol:third.example");
    const res = await sendInvite(r.roomId, r.invite, "11", [r.create.pdu]);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await a.hs.services.rooms.store.membership(r.roomId, "@carol:third.example")).toBeUndefined();
    expect(Object.keys(await invitesOfAlice())).not.toContain(r.roomId);
  });

  it("an invite signed by the hostile server from a third server's user: refused, nothing shown", async () => {
    const r = await hostileRoom("11", alice.user_id, "@carol:third.example");
    const res = await sendInvite(r.roomId, r.invite, "11", [r.create.pdu]);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(Object.keys(await invitesOfAlice())).not.toContain(r.roomId);
  });
});

describe.each(backends())("hostile knock answers on %s", (backend) => {
  let a: FederatedServer;
  let h: HostileServer;
  let alice: Session;

  beforeAll(async () => {
    a = await startFederatedServer({ backend });
    [h, alice] = await Promise.all([startHostileServer(a), registerUser(a, "alice")]);
  });
  afterAll(async () => {
    h.plan = () => "default";
    await Promise.all([a?.close(), h?.close()]);
  });

  /** A knockable room the hostile server hosts, named "mallory's room". */
  async function knockRoom(version: string): Promise<string> {
    const roomId = await h.host(version);
    await h.hostedEvent(roomId, { type: "m.room.join_rules", stateKey: "", sender: h.user("mallory"), content: { join_rule: "knock" } });
    await h.hostedEvent(roomId, { type: "m.room.name", stateKey: "", sender: h.user("mallory"), content: { name: "mallory's room" } });
    return roomId;
  }
  const knock = (roomId: string) => a.call("POST", `${V3}/knock/${enc(roomId)}?server_name=${enc(h.serverName)}`, { token: alice.access_token, body: {} });
  /** The knocks alice's initial /sync shows: room id → stripped state. */
  const knocksOfAlice = async (): Promise<Record<string, any[]>> => {
    const res = await a.call("GET", `${V3}/sync`, { token: alice.access_token });
    return Object.fromEntries(Object.entries(res.json.rooms?.knock ?? {}).map(([id, r]: [string, any]) => [id, r.knock_state.events]));
  };

  it("control: an honest knock shows in alice's /sync with the room's name", async () => {
    const roomId = await knockRoom("11");
    const res = await knock(roomId);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect((await knocksOfAlice())[roomId]!.find((e) => e.type === "m.room.name")?.content.name).toBe("mallory's room");
  });

  it("knock_room_state with a badly signed entry claiming a local sender, and another room's name: both left out", async () => {
    const roomId = await knockRoom("11");
    const other = await knockRoom("11");
    const forged = await h.hostedEvent(roomId, { type: "m.room.topic", stateKey: "", sender: alice.user_id, content: { topic: "Alice vouches for this room" } });
    const otherName = await h.hostedEvent(other, { type: "m.room.name", stateKey: "", sender: h.user("mallory"), content: { name: "Another room's name" } });
    h.plan = (req) => {
      if (!req.path.startsWith("/_matrix/federation/v1/send_knock/")) return "default";
      const state = [...h.hosted.get(roomId)!.state.values()].filter((id) => id !== forged.eventId).map((id) => h.events.get(id)!);
      return { status: 200, json: { knock_room_state: [...state, withBadSignature(forged, h.serverName), otherName.pdu] } };
    };
    const res = await knock(roomId);
    h.plan = () => "default";
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const shown = JSON.stringify((await knocksOfAlice())[roomId]);
    expect(shown).toContain("mallory's room");
    expect(shown).not.toContain("Alice vouches");
    expect(shown).not.toContain("Another room's name");
  });
});
