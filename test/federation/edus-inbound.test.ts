// EDUs a remote server sends, on SQLite and PostgreSQL: typing, read receipts and presence of the
// remote server's own users (joined to the room through the real remote pipeline) reach local users'
// /sync and GraphQL subscriptions; EDUs naming users of another server — ours included — private
// receipts, malformed ones and those for rooms the user is not in change nothing.
// The EDUs are handed to the handlers declared in main.ts (`eduHandlers`) exactly as PUT /send hands them
// over (fed-ingest's route, not on this branch): `deliver` below stands for that route.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createClient } from "graphql-ws";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually, joinFromPeer, startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { subscribe } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

/** The graphql-ws client of the TLS test server (its certificate is self-signed). */
class InsecureWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { rejectUnauthorized: false });
  }
}

describe.each(backends())("inbound EDUs on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let roomId: string;
  let pat: string;
  let since: string;
  let txn = 0;

  beforeAll(async () => {
    peer = await startRecordingPeer();
    a = await startFederatedServer({ backend });
    peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
    alice = await registerUser(a, "alice");
    roomId = await createRoom(a, alice, { preset: "public_chat" });
    pat = peer.user("pat");
    await joinFromPeer(a, peer, roomId, pat);
    const first = await a.call("GET", `${V3}/sync`, { token: alice.access_token });
    since = first.json.next_batch;
  });
  afterAll(async () => {
    await Promise.all([a?.close(), peer?.close()]);
  });

  /** What PUT /send does with each EDU of a transaction from `origin`. */
  async function deliver(origin: string, edu_type: string, content: unknown) {
    const handler = a.hs.services.extensions.eduHandlers.find((h) => h.type === edu_type);
    expect(handler, edu_type).toBeDefined();
    await handler!.handle(a.hs.services, origin, content);
  }

  /** Long-polls alice's /sync until `pick` finds something in a response. */
  async function syncUntil<T>(pick: (sync: any) => T | undefined, what: string): Promise<T> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await a.call("GET", `${V3}/sync?since=${enc(since)}&timeout=5000`, { token: alice.access_token });
      expect(res.status).toBe(200);
      since = res.json.next_batch;
      const found = pick(res.json);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no ${what} in /sync`);
    }
  }
  const ephemeral = (sync: any, type: string) => (sync.rooms?.join?.[roomId]?.ephemeral?.events ?? []).filter((e: any) => e.type === type);
  const typingIn = (sync: any) => ephemeral(sync, "m.typing")[0]?.content.user_ids as string[] | undefined;

  const send = async (body: string) => {
    const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/i${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(res.status).toBe(200);
    return res.json.event_id as string;
  };

  it("typing of a remote member shows in /sync and the GraphQL typing subscription; none for users of other servers", async () => {
    const c = createClient({ url: a.baseUrl.replace(/^http/, "ws") + "/graphql", webSocketImpl: InsecureWebSocket, connectionParams: { authorization: `Bearer ${alice.access_token}` }, retryAttempts: 0, lazy: true });
    try {
      const sub = subscribe(c, `subscription ($roomId: String!) { typing(roomId: $roomId) { roomId userIds } }`, { roomId });
      await sub.until(1);
      expect(sub.results[0].data.typing.userIds).toEqual([]);
      // A server may only speak for its own users: the peer claiming alice (ours) or a third server's user is ignored.
      await deliver(peer.serverName, "m.typing", { room_id: roomId, user_id: alice.user_id, typing: true });
      await deliver(peer.serverName, "m.typing", { room_id: roomId, user_id: "@eve:elsewhere.test", typing: true });
      await deliver(peer.serverName, "m.typing", { room_id: roomId, user_id: pat, typing: "yes" });
      await deliver(peer.serverName, "m.typing", { room_id: roomId, user_id: pat, typing: true });
      expect(await syncUntil(typingIn, "typing")).toEqual([pat]);
      await sub.until(2);
      expect(sub.results[1].data.typing).toEqual({ roomId, userIds: [pat] });
      await deliver(peer.serverName, "m.typing", { room_id: roomId, user_id: pat, typing: false });
      expect(await syncUntil(typingIn, "typing stopped")).toEqual([]);
      await sub.until(3);
      expect(sub.results[2].data.typing.userIds).toEqual([]);
      expect(sub.results.every((r) => !r.data.typing.userIds.includes(alice.user_id))).toBe(true);
    } finally {
      await c.dispose();
    }
  });

  it("read receipts of a remote member show in /sync (threaded too); private, foreign and malformed ones do not", async () => {
    const one = await send("one");
    const two = await send("two");
    await deliver(peer.serverName, "m.receipt", {
      [roomId]: {
        "m.read.private": { [pat]: { event_ids: [one], data: { ts: 1 } } },
        "m.read": {
          [alice.user_id]: { event_ids: [one], data: { ts: 2 } },
          "@eve:elsewhere.test": { event_ids: [one], data: { ts: 3 } },
        },
      },
      "!unknown:elsewhere.test": { "m.read": { [pat]: { event_ids: [one], data: { ts: 4 } } } },
      "not a room": "garbage",
    });
    await deliver(peer.serverName, "m.receipt", { [roomId]: { "m.read": { [pat]: { event_ids: "nope", data: { ts: 5 } } } } });
    await deliver(peer.serverName, "m.receipt", { [roomId]: { "m.read": { [pat]: { event_ids: [two], data: { ts: 1234, thread_id: "main" } } } } });
    const content = await syncUntil((sync) => ephemeral(sync, "m.receipt")[0]?.content, "receipts");
    expect(content).toEqual({ [two]: { "m.read": { [pat]: { ts: 1234, thread_id: "main" } } } });
    const rows = await a.hs.services.receipts.inRooms([roomId], undefined, await a.hs.services.receipts.currentPosition(), alice.user_id);
    expect(rows.map((r) => [r.userId, r.receiptType, r.eventId, r.threadId])).toEqual([[pat, "m.read", two, "main"]]);

    await deliver(peer.serverName, "m.receipt", { [roomId]: { "m.read": { [pat]: { event_ids: [two], data: { ts: 2345 } } } } });
    const unthreaded = await syncUntil((sync) => ephemeral(sync, "m.receipt")[0]?.content, "the unthreaded receipt");
    expect(unthreaded).toEqual({ [two]: { "m.read": { [pat]: { ts: 2345 } } } });
    // An older event than the stored receipt's does not move it back.
    await deliver(peer.serverName, "m.receipt", { [roomId]: { "m.read": { [pat]: { event_ids: [one], data: { ts: 3456 } } } } });
    const now = await a.hs.services.receipts.get(roomId, "m.read", pat, "");
    expect(now?.eventId).toBe(two);
  });

  it("presence of a remote member shows in /sync; none for users of other servers or users in no room here", async () => {
    await deliver(peer.serverName, "m.presence", {
      push: [
        { user_id: alice.user_id, presence: "unavailable", last_active_ago: 10 },
        { user_id: "@eve:elsewhere.test", presence: "online", last_active_ago: 10 },
        { user_id: peer.user("stranger"), presence: "online", last_active_ago: 10 },
        { user_id: pat, presence: "bogus" },
      ],
    });
    await deliver(peer.serverName, "m.presence", { push: [{ user_id: pat, presence: "online", last_active_ago: 5000, currently_active: true, status_msg: "remote and well" }] });
    const event = await syncUntil((sync) => sync.presence?.events?.find((e: any) => e.sender === pat), "pat's presence");
    expect(event.content).toMatchObject({ presence: "online", currently_active: true, status_msg: "remote and well" });
    expect(event.content.last_active_ago).toBeGreaterThanOrEqual(5000);
    const stored = await a.hs.services.presence.ofUsers(["@eve:elsewhere.test", peer.user("stranger")], undefined, await a.hs.services.presence.currentPosition());
    expect(stored).toEqual([]);
    // Alice is online from her own /sync calls, whatever the peer claims.
    expect(await a.hs.services.presence.get(alice.user_id)).toMatchObject({ state: "online", lastFederationUpdateTs: 0 });
    const status = await a.call("GET", `${V3}/presence/${enc(pat)}/status`, { token: alice.access_token });
    expect(status.json).toMatchObject({ presence: "online", status_msg: "remote and well" });
  });
});
