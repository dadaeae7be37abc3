// matrix-js-sdk 43's MatrixRTC — the code Element Call runs — against Weft on SQLite and PostgreSQL and,
// with the same scenario and assertions, against the pinned live Synapse (with MSC4140 delayed events and
// MSC4143 transports on): real syncing clients, a room whose call members may send
// `org.matrix.msc3401.call.member`, and:
// - the transports the client discovers (GET /unstable/org.matrix.msc4143/rtc/transports at startClient);
// - a member joining the room's call session (MatrixRTCSession.joinRoomSession): its membership state
//   event, the delayed leave event it schedules first and then keeps restarting, another member's session
//   seeing it; leaving empties the membership and the delayed leave is gone;
// - a member whose process is killed without leaving: its delayed leave fires once the delay has run out,
//   and the other member's session sees it leave.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import type { Session } from "../helpers/users.ts";
import { homesWith, type Home } from "../helpers/homes.ts";
import { makeClient, membershipsWhere, pollUntil, startSyncing } from "../helpers/js-sdk.ts";

// MatrixRTC logs through child loggers of the SDK's global one, which take its method factory: quiet unless asked.
if (process.env.WEFT_TEST_SDK_LOG !== "1") {
  const root = sdkGlobalLogger as unknown as { methodFactory: () => () => void; rebuild(): void };
  root.methodFactory = () => () => {};
  root.rebuild();
}

const CALL_MEMBER = "org.matrix.msc3401.call.member";
const TRANSPORT = { type: "livekit", livekit_service_url: "https://sfu.rtc.test/livekit/jwt" };
const RTC_CONFIG = { matrix_rtc: { transports: [TRANSPORT] } };
const DELAY_MS = 4000;
const RESTART_MS = 500;
const enc = encodeURIComponent;

// Element Call's restarts come every RESTART_MS here: the management limit is raised for them.
const homes = homesWith(
  { ...RTC_CONFIG, max_event_delay_duration: "24h", rc_delayed_event_mgmt: { per_second: 50, burst_count: 100 } },
  { ...RTC_CONFIG, max_event_delay_duration: "24h", experimental_features: { msc4143_enabled: true }, rc_delayed_event_mgmt: { per_second: 50, burst_count: 100 } },
);

/** The state key js-sdk's membership manager uses for a device in the room's call (m.call, slot ""). */
const memberKey = (userId: string, deviceId: string) => `_${userId}_${deviceId}_m.call`;

describe.each(homes)("matrix-js-sdk MatrixRTC on %s", (_name, start) => {
  let home: Home;
  let alice: Session, bob: Session, carol: Session;
  let aliceClient: sdk.MatrixClient, bobClient: sdk.MatrixClient;
  let roomId: string;
  let discovered: Promise<unknown>;
  const children: ChildProcess[] = [];

  const delayedOf = async (who: Session) => {
    const res = await home.call("GET", "/_matrix/client/unstable/org.matrix.msc4140/delayed_events", { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.delayed_events as Record<string, any>[];
  };
  const memberState = async (who: Session) => {
    const res = await home.call("GET", `/_matrix/client/v3/rooms/${enc(roomId)}/state/${CALL_MEMBER}/${enc(memberKey(who.user_id, who.device_id))}`, { token: bob.access_token });
    return res.status === 200 ? (res.json as Record<string, any>) : undefined;
  };

  beforeAll(async () => {
    home = await start();
    [alice, bob, carol] = [await home.register("alice"), await home.register("bob"), await home.register("carol")];
    const created = await home.call("POST", "/_matrix/client/v3/createRoom", {
      token: alice.access_token,
      body: { preset: "public_chat", name: "Call room", power_level_content_override: { events: { [CALL_MEMBER]: 0 } } },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    roomId = created.json.room_id;
    for (const who of [bob, carol]) expect((await home.call("POST", `/_matrix/client/v3/join/${enc(roomId)}`, { token: who.access_token, body: {} })).status).toBe(200);

    aliceClient = makeClient(home.baseUrl, { userId: alice.user_id, accessToken: alice.access_token, deviceId: alice.device_id });
    bobClient = makeClient(home.baseUrl, { userId: bob.user_id, accessToken: bob.access_token, deviceId: bob.device_id });
    discovered = new Promise((resolve) => aliceClient.once(sdk.ClientEvent.RtcTransportsUpdated, resolve));
    await Promise.all([startSyncing(aliceClient), startSyncing(bobClient)]);
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill("SIGKILL");
    aliceClient?.stopClient();
    bobClient?.stopClient();
    await home?.close();
  });

  it("discovers the configured transports when the client starts", async () => {
    expect(await discovered).toEqual([TRANSPORT]);
    expect(await aliceClient._unstable_getRTCTransports()).toEqual([TRANSPORT]);
  });

  it("joins the call session: a membership state event, its delayed leave scheduled and restarted, seen by another member", async () => {
    const session = aliceClient.matrixRTC.getRoomSession(aliceClient.getRoom(roomId)!);
    session.joinRoomSession([TRANSPORT], undefined, { delayedLeaveEventDelayMs: DELAY_MS, delayedLeaveEventRestartMs: RESTART_MS });

    const state = await pollUntil(memberState.bind(null, alice), 15_000, "alice's call membership");
    expect(state).toMatchObject({ application: "m.call", call_id: "", device_id: alice.device_id, foci_preferred: [TRANSPORT] });

    // The delayed leave: the same state slot, empty content, the asked delay; restarted (its start moves on, same id).
    const [first] = await delayedOf(alice);
    expect(first).toMatchObject({ room_id: roomId, type: CALL_MEMBER, state_key: memberKey(alice.user_id, alice.device_id), content: {} });
    expect(first!.delay_ms ?? first!.delay).toBe(DELAY_MS);
    const since = (e: Record<string, any>) => (e.delayed_since_ts ?? e.running_since) as number;
    await pollUntil(async () => {
      const [now] = await delayedOf(alice);
      return now && now.delay_id === first!.delay_id && since(now) > since(first!) ? true : undefined;
    }, 10_000, "the delayed leave to be restarted");

    const bobSession = bobClient.matrixRTC.getRoomSession(bobClient.getRoom(roomId)!);
    await membershipsWhere(bobSession, (m) => m.some((x) => x.sender === alice.user_id && x.deviceId === alice.device_id), "bob's session to see alice");

    // Leaving: the membership is emptied and the delayed leave is no longer scheduled.
    expect(await session.leaveRoomSession(10_000)).toBe(true);
    expect(await memberState(alice)).toEqual({});
    expect(await delayedOf(alice)).toEqual([]);
    await membershipsWhere(bobSession, (m) => !m.some((x) => x.sender === alice.user_id), "bob's session to see alice leave");
  }, 60_000);

  it("a member killed without leaving leaves by its delayed event once the delay has run out", async () => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, "../helpers/rtc-member-process.ts"), JSON.stringify({
      baseUrl: home.baseUrl, userId: carol.user_id, accessToken: carol.access_token, deviceId: carol.device_id, roomId,
      transport: TRANSPORT, delayedLeaveEventDelayMs: DELAY_MS, delayedLeaveEventRestartMs: RESTART_MS,
    })], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("carol's process did not join")), 30_000);
      child.stdout!.on("data", (d: Buffer) => { if (d.toString().includes("joined")) { clearTimeout(timer); resolve(); } });
      child.once("exit", (code) => reject(new Error(`carol's process exited (${code})`)));
    });
    const bobSession = bobClient.matrixRTC.getRoomSession(bobClient.getRoom(roomId)!);
    await membershipsWhere(bobSession, (m) => m.some((x) => x.sender === carol.user_id), "bob's session to see carol");
    await pollUntil(async () => ((await delayedOf(carol)).length === 1 ? true : undefined), 10_000, "carol's delayed leave");

    child.kill("SIGKILL");
    const killedAt = Date.now();
    await pollUntil(async () => {
      const s = await memberState(carol);
      return s && Object.keys(s).length === 0 ? true : undefined;
    }, DELAY_MS + 15_000, "carol's delayed leave to fire");
    // Not before the delay ran out: at most one restart interval of it had passed when she was killed.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(DELAY_MS - RESTART_MS - 250);
    expect(await delayedOf(carol)).toEqual([]);
    await membershipsWhere(bobSession, (m) => !m.some((x) => x.sender === carol.user_id), "bob's session to see carol leave");
  }, 90_000);
});
