// matrix-js-sdk 43's MatrixRTC with sticky-event memberships (joinConfig `unstableSendStickyEvents`:
// StickyEventMembershipManager, MSC4354 + MSC4140) against Weft on SQLite and PostgreSQL and, with the same
// scenario and assertions, against the pinned live Synapse, both with experimental_features.msc4354_enabled
// and delayed events on: real syncing clients; a member joining the room's call session sends its
// `org.matrix.msc4143.rtc.member` membership as a sticky event (`org.matrix.msc4354.sticky_duration_ms`, an
// hour) after scheduling a delayed sticky leave, and another member's session sees it (through /sync: the
// sticky events of the timeline and of the `msc4354_sticky` section); leaving sends the sticky "left"
// membership, the delayed leave is gone, and the other member's session sees the member leave. A member that
// joins the room after the call began sees the running membership through the sticky section of its sync.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import type { Session } from "../helpers/users.ts";
import { homesWith, type Home } from "../helpers/homes.ts";
import { makeClient, membershipsWhere, pollUntil, startSyncing, type RtcMember } from "../helpers/js-sdk.ts";

if (process.env.WEFT_TEST_SDK_LOG !== "1") {
  const root = sdkGlobalLogger as unknown as { methodFactory: () => () => void; rebuild(): void };
  root.methodFactory = () => () => {};
  root.rebuild();
}

const RTC_MEMBER = "org.matrix.msc4143.rtc.member";
const TRANSPORT = { type: "livekit", livekit_service_url: "https://sfu.rtc.test/livekit/jwt" };
const CONFIG = {
  matrix_rtc: { transports: [TRANSPORT] },
  max_event_delay_duration: "24h",
  rc_delayed_event_mgmt: { per_second: 50, burst_count: 100 },
  experimental_features: { msc4354_enabled: true, msc4143_enabled: true },
};
const DELAY_MS = 4000;
const RESTART_MS = 500;
const enc = encodeURIComponent;

const homes = homesWith(CONFIG);

const has = (who: Session) => (m: RtcMember[]) => m.some((x) => (x.userId ?? x.sender) === who.user_id && x.deviceId === who.device_id);

describe.each(homes)("matrix-js-sdk MatrixRTC with sticky memberships on %s", (_name, start) => {
  let home: Home;
  let alice: Session, bob: Session, carol: Session;
  let aliceClient: sdk.MatrixClient, bobClient: sdk.MatrixClient, carolClient: sdk.MatrixClient | undefined;
  let roomId: string;

  const delayedOf = async (who: Session) => {
    const res = await home.call("GET", "/_matrix/client/unstable/org.matrix.msc4140/delayed_events", { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.delayed_events as Record<string, any>[];
  };
  /** alice's rtc.member events in the room, newest first. */
  const rtcEvents = async () => {
    const res = await home.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/messages?dir=b&limit=50&filter=${enc(JSON.stringify({ types: [RTC_MEMBER] }))}`, { token: bob.access_token });
    expect(res.status).toBe(200);
    return res.json.chunk as Record<string, any>[];
  };

  beforeAll(async () => {
    home = await start();
    [alice, bob, carol] = [await home.register("alice"), await home.register("bob"), await home.register("carol")];
    const created = await home.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { preset: "public_chat", name: "Sticky call room" } });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    roomId = created.json.room_id;
    expect((await home.call("POST", `/_matrix/client/v3/join/${enc(roomId)}`, { token: bob.access_token, body: {} })).status).toBe(200);
    aliceClient = makeClient(home.baseUrl, { userId: alice.user_id, accessToken: alice.access_token, deviceId: alice.device_id });
    bobClient = makeClient(home.baseUrl, { userId: bob.user_id, accessToken: bob.access_token, deviceId: bob.device_id });
    await Promise.all([startSyncing(aliceClient), startSyncing(bobClient)]);
  }, 120_000);
  afterAll(async () => {
    aliceClient?.stopClient();
    bobClient?.stopClient();
    carolClient?.stopClient();
    await home?.close();
  });

  it("joins with a sticky membership seen by the other members, and leaving ends it", async () => {
    const session = aliceClient.matrixRTC.getRoomSession(aliceClient.getRoom(roomId)!);
    session.joinRoomSession([TRANSPORT], TRANSPORT, { delayedLeaveEventDelayMs: DELAY_MS, delayedLeaveEventRestartMs: RESTART_MS, unstableSendStickyEvents: true });

    // The membership: a sticky rtc.member event of an hour, keyed by alice's member id.
    const joined = await pollUntil(async () => (await rtcEvents()).find((e) => e.sender === alice.user_id && e.content.application), 15_000, "alice's sticky membership");
    expect(joined.msc4354_sticky).toEqual({ duration_ms: 3_600_000 });
    expect(joined.unsigned.msc4354_sticky_duration_ttl_ms).toBeGreaterThan(3_500_000);
    expect(joined.content).toMatchObject({ msc4354_sticky_key: `${alice.user_id}:${alice.device_id}`, application: { type: "m.call" } });
    // (The sticky membership manager needs the active transport: the second argument, multiSfuFocus.)
    // Its delayed leave: a delayed rtc.member message (not state), restarted while alice is in the call.
    const [first] = await delayedOf(alice);
    expect(first).toMatchObject({ room_id: roomId, type: RTC_MEMBER });
    expect(first!.state_key).toBeUndefined();

    const bobSession = bobClient.matrixRTC.getRoomSession(bobClient.getRoom(roomId)!);
    await membershipsWhere(bobSession, has(alice), "bob's session to see alice");

    // Carol joins the room after the call began: the membership reaches her through the sticky section.
    expect((await home.call("POST", `/_matrix/client/v3/join/${enc(roomId)}`, { token: carol.access_token, body: {} })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await home.call("PUT", `/_matrix/client/v3/rooms/${enc(roomId)}/send/m.room.message/after${i}`, { token: bob.access_token, body: { msgtype: "m.text", body: `after ${i}` } });
      expect(res.status).toBe(200);
    }
    const sync = await home.call("GET", `/_matrix/client/v3/sync?filter=${enc(JSON.stringify({ room: { timeline: { limit: 1 } } }))}`, { token: carol.access_token });
    expect(sync.json.rooms.join[roomId].msc4354_sticky.events.map((e: { event_id: string }) => e.event_id)).toContain(joined.event_id);
    carolClient = makeClient(home.baseUrl, { userId: carol.user_id, accessToken: carol.access_token, deviceId: carol.device_id });
    await startSyncing(carolClient);
    const carolSession = carolClient.matrixRTC.getRoomSession(carolClient.getRoom(roomId)!);
    await membershipsWhere(carolSession, has(alice), "carol's session to see alice");

    // Leaving: a sticky "left" membership (only its keys), the delayed leave gone, the others see her go.
    expect(await session.leaveRoomSession(10_000)).toBe(true);
    const left = await pollUntil(async () => (await rtcEvents()).find((e) => e.sender === alice.user_id && !e.content.application), 15_000, "alice's sticky leave");
    expect(left.msc4354_sticky).toEqual({ duration_ms: 3_600_000 });
    expect(left.content.msc4354_sticky_key).toBe(`${alice.user_id}:${alice.device_id}`);
    await pollUntil(async () => ((await delayedOf(alice)).length === 0 ? true : undefined), 10_000, "alice's delayed leave to be gone");
    await membershipsWhere(bobSession, (m) => !has(alice)(m), "bob's session to see alice leave");
    await membershipsWhere(carolSession, (m) => !has(alice)(m), "carol's session to see alice leave");
  }, 90_000);
});
