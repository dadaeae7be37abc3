// matrix-js-sdk 43 with its real sync loop (startClient) against Weft on SQLite and PostgreSQL: two running
// clients in one room see each other's messages through /sync long polls (filter upload, initial and
// incremental syncs, lazy-loaded members), each sees the other's typing notifications and read receipts,
// and a room tag set by one client reaches its own sync.
// The clients start with no patch: they fetch /pushrules/ themselves, and their own push rule evaluation
// (getPushActionsForEvent) agrees with the server's highlight on mentions.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";
import { makeClient, startSyncing } from "../helpers/js-sdk.ts";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";

if (process.env.WEFT_TEST_SDK_LOG !== "1") (sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void }).setLevel("error", false);

async function running(t: TestServer, localpart: string): Promise<sdk.MatrixClient> {
  const s = await registerUser(t, localpart);
  const client = makeClient(t.baseUrl, { userId: s.user_id, accessToken: s.access_token, deviceId: s.device_id });
  await startSyncing(client);
  return client;
}

/** Resolves with the first timeline event of `roomId` matching `pred` (already there, or arriving). */
function timelineEvent(client: sdk.MatrixClient, roomId: string, pred: (e: sdk.MatrixEvent) => boolean, ms = 10000): Promise<sdk.MatrixEvent> {
  const existing = client.getRoom(roomId)?.getLiveTimeline().getEvents().find(pred);
  if (existing) return Promise.resolve(existing);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out waiting for a timeline event")), ms);
    const on = (e: sdk.MatrixEvent, room: sdk.Room | undefined) => {
      if (room?.roomId === roomId && pred(e)) {
        clearTimeout(timer);
        client.off(sdk.RoomEvent.Timeline, on);
        resolve(e);
      }
    };
    client.on(sdk.RoomEvent.Timeline, on);
  });
}

function waitFor<T>(probe: () => T | undefined, subscribeTo: (wake: () => void) => () => void, ms = 10000, what = "a condition"): Promise<T> {
  return new Promise((resolve, reject) => {
    const now = probe();
    if (now !== undefined) return resolve(now);
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for ${what}`)); }, ms);
    const off = subscribeTo(() => {
      const v = probe();
      if (v !== undefined) { clearTimeout(timer); off(); resolve(v); }
    });
  });
}

/** Waits until `client` sees its invite to `roomId` through sync, then joins. */
async function joinWhenInvited(client: sdk.MatrixClient, roomId: string): Promise<void> {
  await waitFor(
    () => (client.getRoom(roomId)?.getMyMembership() === "invite" ? true : undefined),
    (wake) => {
      const later = () => setImmediate(wake);
      client.on(sdk.RoomEvent.MyMembership, later);
      client.on(sdk.ClientEvent.Room, later);
      return () => { client.off(sdk.RoomEvent.MyMembership, later); client.off(sdk.ClientEvent.Room, later); };
    },
  );
  await client.joinRoom(roomId);
}

describe.each(backends())("matrix-js-sdk sync loop on %s", (backend) => {
  let t: TestServer;
  let alice: sdk.MatrixClient;
  let bob: sdk.MatrixClient;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await running(t, "alice");
    bob = await running(t, "bob");
  });
  afterAll(async () => {
    alice?.stopClient();
    bob?.stopClient();
    await t?.close();
  });

  it("two running clients see each other's messages, an invite and a join", async () => {
    const { room_id: roomId } = await alice.createRoom({ name: "Sync room", invite: [bob.getUserId()!] });
    // Bob's client sees the invite through sync, and joins.
    await joinWhenInvited(bob, roomId);
    await timelineEvent(alice, roomId, (e) => e.getType() === "m.room.member" && e.getStateKey() === bob.getUserId() && e.getContent().membership === "join");

    const sent = await alice.sendTextMessage(roomId, "hello bob");
    const atBob = await timelineEvent(bob, roomId, (e) => e.getId() === sent.event_id);
    expect(atBob.getContent().body).toBe("hello bob");
    expect(atBob.getSender()).toBe(alice.getUserId());

    const reply = await bob.sendTextMessage(roomId, "hello alice");
    const atAlice = await timelineEvent(alice, roomId, (e) => e.getId() === reply.event_id);
    expect(atAlice.getContent().body).toBe("hello alice");
    // Alice's client knows bob as a member (lazy-loaded with his message or his join).
    expect(alice.getRoom(roomId)!.getMember(bob.getUserId()!)?.membership).toBe("join");
    expect(bob.getRoom(roomId)!.name).toBe("Sync room");
  });

  it("push rules: the client loads the server's ruleset and its evaluation agrees with the server's highlights", async () => {
    expect(bob.pushRules?.global.override?.[0]?.rule_id).toBe(".m.rule.master");
    const { room_id: roomId } = await alice.createRoom({ name: "Push", invite: [bob.getUserId()!] });
    await joinWhenInvited(bob, roomId);
    const plain = await alice.sendMessage(roomId, { msgtype: "m.text", body: "just chatting" } as never);
    const mention = await alice.sendMessage(roomId, { msgtype: "m.text", body: "look here", "m.mentions": { user_ids: [bob.getUserId()!] } } as never);
    const plainAtBob = await timelineEvent(bob, roomId, (e) => e.getId() === plain.event_id);
    const mentionAtBob = await timelineEvent(bob, roomId, (e) => e.getId() === mention.event_id);
    const clientHighlight = (e: sdk.MatrixEvent) => Boolean(bob.getPushActionsForEvent(e, true)?.tweaks?.highlight);
    const res = await fetch(`${t.baseUrl}/_matrix/client/v3/notifications?limit=10`, { headers: { authorization: `Bearer ${bob.getAccessToken()}` } });
    const server = ((await res.json()) as { notifications: { event: { event_id: string }; actions: unknown[] }[] }).notifications;
    const serverHighlight = (id: string) => server.find((n) => n.event.event_id === id)!.actions.some((a) => typeof a === "object" && (a as { set_tweak?: string }).set_tweak === "highlight");
    expect([clientHighlight(plainAtBob), clientHighlight(mentionAtBob)]).toEqual([false, true]);
    expect([serverHighlight(plain.event_id), serverHighlight(mention.event_id)]).toEqual([false, true]);
  });

  it("each client sees the other's typing notification and read receipt", async () => {
    const { room_id: roomId } = await alice.createRoom({ name: "Ephemeral", invite: [bob.getUserId()!] });
    await joinWhenInvited(bob, roomId);
    await timelineEvent(alice, roomId, (e) => e.getType() === "m.room.member" && e.getStateKey() === bob.getUserId() && e.getContent().membership === "join");

    const typingSeen = (client: sdk.MatrixClient, userId: string, typing: boolean) =>
      waitFor(
        () => (client.getRoom(roomId)?.getMember(userId)?.typing === typing ? true : undefined),
        (wake) => { client.on(sdk.RoomMemberEvent.Typing, wake); return () => client.off(sdk.RoomMemberEvent.Typing, wake); },
        10000,
        `${userId} typing=${typing} at ${client.getUserId()}`,
      );
    await alice.sendTyping(roomId, true, 30000);
    await typingSeen(bob, alice.getUserId()!, true);
    await bob.sendTyping(roomId, true, 30000);
    await typingSeen(alice, bob.getUserId()!, true);
    await alice.sendTyping(roomId, false, 0);
    await typingSeen(bob, alice.getUserId()!, false);

    // A read receipt from each side reaches the other (as m.read in the event's receipts).
    const readSeen = (client: sdk.MatrixClient, reader: string, eventId: string) =>
      waitFor(
        () => {
          const room = client.getRoom(roomId);
          const ev = room?.findEventById(eventId);
          return ev && room!.getReceiptsForEvent(ev).some((r) => r.userId === reader && r.type === "m.read") ? true : undefined;
        },
        (wake) => { client.on(sdk.RoomEvent.Receipt, wake); return () => client.off(sdk.RoomEvent.Receipt, wake); },
        10000,
        `${reader}'s receipt on ${eventId} at ${client.getUserId()}`,
      );
    const fromAlice = await alice.sendTextMessage(roomId, "read me");
    await bob.sendReadReceipt(await timelineEvent(bob, roomId, (e) => e.getId() === fromAlice.event_id));
    await readSeen(alice, bob.getUserId()!, fromAlice.event_id);
    expect(alice.getRoom(roomId)!.getEventReadUpTo(bob.getUserId()!)).toBe(fromAlice.event_id);
    const fromBob = await bob.sendTextMessage(roomId, "and me");
    await alice.sendReadReceipt(await timelineEvent(alice, roomId, (e) => e.getId() === fromBob.event_id));
    await readSeen(bob, alice.getUserId()!, fromBob.event_id);
    expect(bob.getRoom(roomId)!.getEventReadUpTo(alice.getUserId()!)).toBe(fromBob.event_id);
  });

  it("account data (a room tag) reaches the client's own sync", async () => {
    const { room_id: roomId } = await alice.createRoom({ name: "Tagged" });
    await alice.setRoomTag(roomId, "m.favourite", { order: 0.5 });
    const tags = await waitFor(
      () => {
        const tagsNow = alice.getRoom(roomId)?.tags;
        return tagsNow && tagsNow["m.favourite"] ? tagsNow : undefined;
      },
      (wake) => { alice.on(sdk.RoomEvent.Tags, wake); return () => alice.off(sdk.RoomEvent.Tags, wake); },
    );
    expect(tags["m.favourite"]).toEqual({ order: 0.5 });
  });
});
