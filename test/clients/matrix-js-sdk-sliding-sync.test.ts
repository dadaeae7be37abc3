// matrix-js-sdk 43's own simplified sliding sync (MSC4186) client — its `SlidingSync` class wired into a
// MatrixClient by `startClient({ slidingSync })` (the SDK's SlidingSyncSdk, which registers the SDK's
// extensions: to_device, account_data, typing, receipts, MSC4354's sticky events, and e2ee with its Rust
// crypto) — against Weft (SQLite and PostgreSQL) and a live Synapse, the same scenarios and the same
// assertions on both: a list whose window grows from [0,1] to [0,9] (its room ids in activity order and
// its count), room subscriptions with timelines and a grown timeline_limit, every extension the SDK
// speaks, and live updates another user's messages bring through the SDK's loop. (The SDK also asks for
// MSC4354's sticky events, `org.matrix.msc4354.sticky_events`, in every request: Weft does not serve
// them, Synapse only with `experimental_features.msc4354_enabled`; neither answers it here.)
//
// WEFT_TEST_SS_TRACE=<dir> writes each server's sliding sync exchanges (query, request body, status,
// answer) to <dir>/<server>.json, to compare what the servers answered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import {
  SlidingSync,
  SlidingSyncEvent,
  SlidingSyncState,
  type MSC3575List,
  type MSC3575RoomSubscription,
  type MSC3575SlidingSyncResponse,
} from "matrix-js-sdk/lib/sliding-sync.js";
import { backends, startTestServer, type JsonResponse } from "../helpers/server.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { makeClient } from "../helpers/js-sdk.ts";
import { waitFor } from "../helpers/js-sdk-crypto.ts";

// The SDK's loggers (its child loggers copy the root's method factory, and set their own level) stay quiet
// unless WEFT_TEST_SDK_LOG=1.
if (process.env.WEFT_TEST_SDK_LOG !== "1") {
  const root = sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void; methodFactory: unknown; rebuild(): void };
  root.methodFactory = () => () => {};
  root.setLevel("silent", false);
  root.rebuild();
}

const WAIT_MS = 10_000;
const SS_PATH = "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync";
const enc = encodeURIComponent;

/** What the scenarios need of a homeserver: its client URL, raw calls, accounts. */
interface Homeserver {
  kind: "weft" | "synapse";
  label: string;
  baseUrl: string;
  call(method: string, p: string, opts?: { body?: unknown; token?: string }): Promise<JsonResponse>;
  register(localpart: string): Promise<Session>;
  login(localpart: string): Promise<Session>;
  close(): Promise<void>;
}

async function weft(backend: "sqlite" | "postgres"): Promise<Homeserver> {
  const t = await startTestServer({ backend });
  return { kind: "weft", label: `weft-${backend}`, baseUrl: t.baseUrl, call: (m, p, o) => t.call(m, p, o), register: (lp) => registerUser(t, lp), login: (lp) => loginUser(t, lp), close: () => t.close() };
}

async function synapse(): Promise<Homeserver> {
  const syn = await startSynapse();
  return {
    kind: "synapse",
    label: "synapse",
    baseUrl: syn.clientUrl,
    call: (m, p, o) => syn.call(m, p, o),
    register: async (lp) => (await syn.register(lp)) as Session,
    login: async (lp) => {
      const res = await syn.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: lp }, password: "password" } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json as Session;
    },
    close: () => syn.close(),
  };
}

interface Exchange {
  query: string;
  request: unknown;
  status: number;
  response: unknown;
}

/** The client's fetch, recording the sliding sync exchanges (nothing is changed on the way). */
function recordingFetch(log: Exchange[]): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    if (url.pathname === SS_PATH) {
      const text = await res.clone().text().catch(() => "");
      let response: unknown = text;
      try {
        response = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      log.push({ query: url.search, request: typeof init?.body === "string" ? JSON.parse(init.body) : undefined, status: res.status, response });
    }
    return res;
  }) as typeof fetch;
}

type Ops = { op: string; range: number[]; room_ids: string[] }[];
/** The room ids of a list in an answer, window by window (MSC4186's SYNC operations, as Synapse sends them). */
const listIds = (resp: MSC3575SlidingSyncResponse, key: string): string[] => ((resp.lists[key] as unknown as { ops?: Ops }).ops ?? []).flatMap((op) => op.room_ids);
const listRanges = (resp: MSC3575SlidingSyncResponse, key: string): number[][] => ((resp.lists[key] as unknown as { ops?: Ops }).ops ?? []).map((op) => op.range);
const bodies = (room: sdk.Room | null | undefined): unknown[] => (room?.getLiveTimeline().getEvents() ?? []).filter((e) => e.getType() === "m.room.message").map((e) => e.getContent().body);

const LIST: MSC3575List = {
  ranges: [[0, 1]],
  timeline_limit: 1,
  required_state: [
    ["m.room.create", ""],
    ["m.room.name", ""],
    ["m.room.member", "$ME"],
    ["m.room.member", "$LAZY"],
  ],
};
const SUBSCRIPTION: MSC3575RoomSubscription = { timeline_limit: 2, required_state: [["m.room.name", ""], ["m.room.member", "$LAZY"]] };

function scenarios(start: () => Promise<Homeserver>): void {
  let hs: Homeserver;
  let alice: Session;
  let bob: Session;
  /** r[0..11]: alice's rooms, named "room N". */
  const r: string[] = [];
  let client: sdk.MatrixClient | undefined;
  let ss: SlidingSync;
  const exchanges: Exchange[] = [];
  /** Every answer the SDK's loop processed (its Lifecycle Complete events), in order. */
  const answers: MSC3575SlidingSyncResponse[] = [];
  const answerWaiters = new Set<() => void>();
  /** The to-device messages the SDK emitted. */
  const toDevice: sdk.MatrixEvent[] = [];
  let txn = 0;

  const api = async (who: Session, method: string, p: string, body: unknown = {}) => {
    const res = await hs.call(method, `/_matrix/client/v3${p}`, { token: who.access_token, body });
    expect(res.status, `${method} ${p}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json;
  };
  const send = async (who: Session, roomId: string, body: string): Promise<string> =>
    (await api(who, "PUT", `/rooms/${enc(roomId)}/send/m.room.message/ss${++txn}`, { msgtype: "m.text", body })).event_id;
  const join = (who: Session, roomId: string) => api(who, "POST", `/join/${enc(roomId)}`);
  /** Resolves once `probe` answers, re-checked on each of the client's `events`; fails after WAIT_MS. */
  const until = <T,>(events: string[], probe: () => T | undefined, what: string): Promise<T> => waitFor(client!, events, probe, `${what} (${hs.label})`, WAIT_MS);

  /** The answer as it came over the wire (the SDK adds room_id and more to the events of the one it processed). */
  const wire = (a: MSC3575SlidingSyncResponse): MSC3575SlidingSyncResponse => {
    const x = exchanges.findLast((e) => e.status === 200 && (e.response as { pos?: string }).pos === a.pos);
    if (!x) throw new Error(`no exchange answered pos ${a.pos}`);
    return x.response as MSC3575SlidingSyncResponse;
  };
  /**
   * The first answer the loop processes from now on (or from the `from`th answer on) that `pred`
   * accepts, as it came over the wire; fails after WAIT_MS.
   */
  const answer = (pred: (a: MSC3575SlidingSyncResponse) => boolean, what: string, from = answers.length): Promise<MSC3575SlidingSyncResponse> => {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = answers.slice(from).find(pred);
        if (!hit) return;
        answerWaiters.delete(check);
        clearTimeout(timer);
        resolve(wire(hit));
      };
      const timer = setTimeout(() => {
        answerWaiters.delete(check);
        reject(new Error(`${hs.label}: timed out waiting for an answer with ${what}; last request ${JSON.stringify(exchanges.at(-1)?.request)}`));
      }, WAIT_MS);
      answerWaiters.add(check);
      check();
    });
  };

  beforeAll(async () => {
    hs = await start();
    alice = await hs.register("alice");
    bob = await hs.register("bob");
    const create = async (n: number) => (r[n] = (await api(alice, "POST", "/createRoom", { name: `room ${n}`, preset: "public_chat" })).room_id);
    // r0 is the oldest room, with four messages; bob joins r2 at once (it stays old); then r3..r11.
    await create(0);
    for (let i = 1; i <= 4; i++) await send(alice, r[0]!, `r0 m${i}`);
    await create(1);
    await create(2);
    await join(bob, r[2]!);
    for (let n = 3; n <= 11; n++) await create(n);
    await join(bob, r[1]!);
    await join(bob, r[3]!);
    await join(bob, r[5]!);
    await send(alice, r[3]!, "news in r3");
    // Activity, newest first: r3, r5, r1, r11, r10, r9, r8, r7, r6, r4, r2, r0.

    client = makeClient(hs.baseUrl, { userId: alice.user_id, accessToken: alice.access_token, deviceId: alice.device_id }, "/_matrix/client/v3", { fetchFn: recordingFetch(exchanges) });
    await client.initRustCrypto({ useIndexedDB: false });
    ss = new SlidingSync(hs.baseUrl, new Map([["all", structuredClone(LIST)]]), structuredClone(SUBSCRIPTION), client, 10_000);
    ss.on(SlidingSyncEvent.Lifecycle, (state, resp) => {
      if (state !== SlidingSyncState.Complete || !resp) return;
      answers.push(resp);
      for (const w of [...answerWaiters]) w();
    });
    client.on(sdk.ClientEvent.ToDeviceEvent, (ev) => void toDevice.push(ev));
    const prepared = until([sdk.ClientEvent.Sync], () => (client!.getSyncState() === sdk.SyncState.Syncing ? true : undefined), "the sliding sync loop running");
    await client.startClient({ slidingSync: ss });
    await prepared;
  }, 120_000);

  afterAll(async () => {
    client?.stopClient();
    if (process.env.WEFT_TEST_SS_TRACE && hs) {
      mkdirSync(process.env.WEFT_TEST_SS_TRACE, { recursive: true });
      writeFileSync(path.join(process.env.WEFT_TEST_SS_TRACE, `${hs.label}.json`), JSON.stringify({ rooms: r, alice: alice?.user_id, bob: bob?.user_id, exchanges }, null, 1));
    }
    await hs?.close();
  });

  it("a list's window [0,1] grows to [0,9]: its rooms in activity order, its count, the rooms' data in the SDK's store", async () => {
    const first = await answer((a) => a.lists.all !== undefined, "the list", 0);
    expect(first.lists.all!.count).toBe(12);
    expect(ss.getListData("all")!.joinedCount).toBe(12);
    expect(listRanges(first, "all")).toEqual([[0, 1]]);
    expect(listIds(first, "all")).toEqual([r[3], r[5]]);
    expect(Object.keys(first.rooms).sort()).toEqual([r[3], r[5]].sort());
    for (const n of [3, 5]) expect(first.rooms[r[n]!]!.initial).toBe(true);

    // What the SDK made of them: rooms with their names, the user's membership ($ME), the timeline's last event.
    const r3 = client!.getRoom(r[3]!)!;
    const r5 = client!.getRoom(r[5]!)!;
    expect([r3.name, r5.name]).toEqual(["room 3", "room 5"]);
    expect([r3.getMyMembership(), r5.getMyMembership()]).toEqual(["join", "join"]);
    expect(bodies(r3)).toEqual(["news in r3"]);
    expect(r5.getLiveTimeline().getEvents().map((e) => [e.getType(), e.getStateKey()])).toEqual([["m.room.member", bob.user_id]]);
    expect([r3.getJoinedMemberCount(), r5.getJoinedMemberCount()]).toEqual([2, 2]);
    // bump_stamp: r3's message is newer than anything that bumps r5 (its creation; a join does not bump).
    expect(r3.getBumpStamp()).toBeGreaterThan(r5.getBumpStamp()!);
    expect(client!.getRoom(r[1]!)).toBeNull();

    ss.setListRanges("all", [[0, 9]]);
    const wide = await answer((a) => JSON.stringify(listRanges(a, "all")) === "[[0,9]]", "the list's range [0,9]");
    const top10 = [3, 5, 1, 11, 10, 9, 8, 7, 6, 4].map((n) => r[n]);
    expect(listIds(wide, "all")).toEqual(top10);
    expect(wide.lists.all!.count).toBe(12);
    expect(ss.getListData("all")!.joinedCount).toBe(12);
    // Only the rooms new to the connection are sent: r3 and r5 have nothing new.
    expect(Object.keys(wide.rooms).sort()).toEqual([1, 11, 10, 9, 8, 7, 6, 4].map((n) => r[n]!).sort());
    for (const room of Object.values(wide.rooms)) expect(room.initial).toBe(true);
    for (const n of [3, 5, 1, 11, 10, 9, 8, 7, 6, 4]) {
      const room = client!.getRoom(r[n]!);
      expect(room?.name, `room ${n}`).toBe(`room ${n}`);
      expect(room!.getMyMembership()).toBe("join");
    }
    expect(client!.getRoom(r[2]!)).toBeNull();
    expect(client!.getRoom(r[0]!)).toBeNull();
  });

  it("a room subscription brings a room outside the window with its timeline; a grown timeline_limit brings more of it", async () => {
    ss.modifyRoomSubscriptions(new Set([r[0]!]));
    const sub = await answer((a) => a.rooms[r[0]!] !== undefined, "the subscribed room");
    const data = sub.rooms[r[0]!]!;
    expect(data.initial).toBe(true);
    expect(data.timeline.map((e) => e.content.body)).toEqual(["r0 m3", "r0 m4"]);
    expect(data.limited).toBe(true);
    expect(typeof data.prev_batch).toBe("string");
    // $LAZY: the member event of the timeline's sender, alice.
    expect(data.required_state.filter((e) => e.type === "m.room.member").map((e) => e.state_key)).toEqual([alice.user_id]);
    // The list is unchanged: r0 is not in its window.
    expect(listIds(sub, "all")).toEqual([3, 5, 1, 11, 10, 9, 8, 7, 6, 4].map((n) => r[n]));
    const room = client!.getRoom(r[0]!)!;
    expect(room.name).toBe("room 0");
    expect(bodies(room)).toEqual(["r0 m3", "r0 m4"]);
    expect(room.getMember(alice.user_id)?.membership).toBe("join");
    // The SDK can page back from the timeline's prev_batch.
    await client!.scrollback(room, 2);
    expect(bodies(room)).toEqual(["r0 m1", "r0 m2", "r0 m3", "r0 m4"]);

    // The SDK resends every subscription with the new room config: timeline_limit 2 → 4.
    ss.modifyRoomSubscriptionInfo({ ...SUBSCRIPTION, timeline_limit: 4 });
    const grown = await answer((a) => a.rooms[r[0]!] !== undefined, "the subscribed room with timeline_limit 4");
    const g = grown.rooms[r[0]!]! as typeof data & { unstable_expanded_timeline?: boolean };
    expect(g.initial).toBeUndefined();
    expect(g.unstable_expanded_timeline).toBe(true);
    expect(g.timeline.map((e) => e.content.body)).toEqual(["r0 m1", "r0 m2", "r0 m3", "r0 m4"]);
    expect(bodies(client!.getRoom(r[0]!))).toEqual(["r0 m1", "r0 m2", "r0 m3", "r0 m4"]);
  });

  it("live updates: another user's messages come through the SDK's loop, reordering the list", async () => {
    const before = answers.length;
    const seen = until([sdk.RoomEvent.Timeline], () => client!.getRoom(r[1]!)?.getLiveTimeline().getEvents().find((e) => e.getContent().body === "live from bob"), "bob's message in r1");
    const eventId = await send(bob, r[1]!, "live from bob");
    const ev = await seen;
    expect(ev.getId()).toBe(eventId);
    expect(ev.getSender()).toBe(bob.user_id);
    const live = await answer((a) => a.rooms[r[1]!] !== undefined, "r1's new message", before);
    const d = live.rooms[r[1]!]!;
    expect(d.initial).toBeUndefined();
    expect(d.timeline.map((e) => e.event_id)).toEqual([eventId]);
    expect(d.num_live).toBe(1);
    expect(d.limited ?? false).toBe(false);
    // notification_count: Weft counts bob's message as /v3/sync does (MSC4186: "same as /v3/sync");
    // Synapse always answers 0 (the MSC's note: "Synapse always returns 0 for notification_count and
    // highlight_count"). The SDK shows what the server said.
    const unread = hs.kind === "weft" ? 1 : 0;
    expect([d.notification_count, d.highlight_count]).toEqual([unread, 0]);
    expect(client!.getRoom(r[1]!)!.getUnreadNotificationCount(sdk.NotificationCountType.Total)).toBe(unread);
    expect(listIds(live, "all")).toEqual([1, 3, 5, 11, 10, 9, 8, 7, 6, 4].map((n) => r[n]));
    // $LAZY brought bob's member event: the SDK knows who sent it.
    expect(client!.getRoom(r[1]!)!.getMember(bob.user_id)?.membership).toBe("join");

    // A message in r2 (outside the window) brings it in at the top, new to the connection; r4 drops out.
    const entered = answer((a) => a.rooms[r[2]!] !== undefined, "r2 entering the window");
    const wakeId = await send(bob, r[2]!, "r2 wakes up");
    const e = await entered;
    expect(listIds(e, "all")).toEqual([2, 1, 3, 5, 11, 10, 9, 8, 7, 6].map((n) => r[n]));
    expect(e.lists.all!.count).toBe(12);
    expect(e.rooms[r[2]!]!.initial).toBe(true);
    expect(e.rooms[r[2]!]!.timeline.map((x) => x.event_id)).toEqual([wakeId]);
    expect(e.rooms[r[2]!]!.num_live).toBe(1);
    const r2 = client!.getRoom(r[2]!)!;
    expect(r2.name).toBe("room 2");
    expect(bodies(r2)).toEqual(["r2 wakes up"]);
    expect(r2.getBumpStamp()).toBeGreaterThan(client!.getRoom(r[1]!)!.getBumpStamp()!);

    // A new name (a state change of required_state) comes as the room's name and its state event.
    const renamed = until([sdk.RoomEvent.Name], () => (client!.getRoom(r[5]!)?.name === "room five" ? true : undefined), "r5's new name");
    const nameId = (await api(alice, "PUT", `/rooms/${enc(r[5]!)}/state/m.room.name/`, { name: "room five" })).event_id;
    await renamed;
    const named = await answer((a) => a.rooms[r[5]!]?.name === "room five", "r5's new name", 0);
    expect(named.rooms[r[5]!]!.initial).toBeUndefined();
    expect(listIds(named, "all").slice(0, 3)).toEqual([r[5], r[2], r[1]]);
    // Only the new state: alice's member event (the timeline's sender, for $LAZY) was sent with the room
    // already ($ME), and MSC4186 leaves out "membership events that were previously returned".
    expect(named.rooms[r[5]!]!.required_state.map((x) => [x.type, x.state_key])).toEqual([["m.room.name", ""]]);
    expect(named.rooms[r[5]!]!.required_state.map((x) => x.event_id)).toEqual([nameId]);
  });

  it("an invite arrives with its stripped state; once joined, the room comes with heroes naming it", async () => {
    const roomId = (await api(bob, "POST", "/createRoom", { preset: "private_chat", invite: [alice.user_id] })).room_id as string;
    const invited = await until([sdk.ClientEvent.Room, sdk.RoomEvent.MyMembership], () => (client!.getRoom(roomId)?.getMyMembership() === "invite" ? client!.getRoom(roomId)! : undefined), "the invite");
    const inv = await answer((a) => a.rooms[roomId] !== undefined, "the invite", 0);
    expect(inv.rooms[roomId]!.initial).toBe(true);
    expect(inv.rooms[roomId]!.timeline).toBeUndefined();
    const stripped = inv.rooms[roomId]!.invite_state!;
    expect(stripped.map((e) => [e.type, e.state_key])).toEqual(expect.arrayContaining([["m.room.create", ""], ["m.room.join_rules", ""], ["m.room.member", bob.user_id], ["m.room.member", alice.user_id]]));
    // Stripped state only, the invite itself too (as Synapse: type, state_key, sender, content).
    for (const e of stripped) expect.soft(Object.keys(e).sort(), JSON.stringify(e)).toEqual(["content", "sender", "state_key", "type"]);
    expect(listIds(inv, "all")[0]).toBe(roomId);
    expect(invited.getMember(alice.user_id)?.events.member?.getSender()).toBe(bob.user_id);

    await client!.joinRoom(roomId);
    const joined = await answer((a) => a.rooms[roomId] !== undefined && a.rooms[roomId]!.invite_state === undefined, "the joined room", 0);
    const j = joined.rooms[roomId]!;
    // The room was sent as an invite: joined, it is sent afresh.
    expect(j.initial).toBe(true);
    expect(j.timeline.map((e) => [e.type, (e as { state_key?: string }).state_key])).toEqual([["m.room.member", alice.user_id]]);
    expect(j.heroes).toEqual([{ user_id: bob.user_id, displayname: "bob" }]);
    expect([j.joined_count, j.invited_count]).toEqual([2, 0]);
    expect(j.name).toBeUndefined();
    await until([sdk.RoomEvent.MyMembership, sdk.RoomEvent.Name], () => (client!.getRoom(roomId)?.getMyMembership() === "join" && client!.getRoom(roomId)?.name === "bob" ? true : undefined), "the joined room named after bob");
    expect(listIds(joined, "all")[0]).toBe(roomId);
  });

  it("account_data: global and per-room account data and tags reach the SDK", async () => {
    // setAccountData resolves once the new content came back down the sync loop.
    await client!.setAccountData("org.example.pref" as never, { n: 1 } as never);
    expect(client!.getAccountData("org.example.pref" as never)?.getContent()).toEqual({ n: 1 });
    const tagged = until([sdk.RoomEvent.Tags], () => (client!.getRoom(r[3]!)?.tags["m.favourite"] ? true : undefined), "r3's tag");
    const roomData = until([sdk.RoomEvent.AccountData], () => client!.getRoom(r[3]!)?.getAccountData("org.example.room" as never)?.getContent(), "r3's account data");
    await client!.setRoomTag(r[3]!, "m.favourite", { order: 0.5 });
    await client!.setRoomAccountData(r[3]!, "org.example.room" as never, { b: 2 } as never);
    await tagged;
    expect(await roomData).toEqual({ b: 2 });
    expect(client!.getRoom(r[3]!)!.tags["m.favourite"]).toEqual({ order: 0.5 });
  });

  it("account_data: push rules (m.push_rules) come in the initial answer and again when a rule changes", async () => {
    // The first answers carry the global account data, push rules among it, as /v3/sync and Synapse (Synapse
    // once sent them in its second answer, not its first, in a full run: any answer so far counts).
    const global = answers.flatMap((a) => (wire(a).extensions?.account_data as { global?: { type: string }[] } | undefined)?.global ?? []);
    expect.soft(global.map((e) => e.type)).toContain("m.push_rules");
    expect.soft(client!.getAccountData("m.push_rules" as never)?.getContent().global).toBeDefined();
    // A push rule changed: the whole ruleset comes down again as m.push_rules, and the SDK takes it.
    const rulesBack = until([sdk.ClientEvent.AccountData], () => {
      const override = client!.getAccountData("m.push_rules" as never)?.getContent().global?.override as { rule_id: string; enabled: boolean }[] | undefined;
      return override?.find((x) => x.rule_id === ".m.rule.suppress_notices")?.enabled === false ? true : undefined;
    }, "the changed push rules");
    await client!.setPushRuleEnabled("global", sdk.PushRuleKind.Override, ".m.rule.suppress_notices", false);
    await rulesBack;
    expect(client!.pushRules?.global.override?.find((x) => x.rule_id === ".m.rule.suppress_notices")?.enabled).toBe(false);
  });

  it("receipts and typing: bob's read receipt and typing notice reach the SDK's rooms", async () => {
    const r3 = client!.getRoom(r[3]!)!;
    const newsId = r3.getLiveTimeline().getEvents().find((e) => e.getContent().body === "news in r3")!.getId()!;
    const read = until([sdk.RoomEvent.Receipt], () => (client!.getRoom(r[3]!)?.getEventReadUpTo(bob.user_id) === newsId ? true : undefined), "bob's receipt in r3");
    await api(bob, "POST", `/rooms/${enc(r[3]!)}/receipt/m.read/${enc(newsId)}`);
    await read;
    expect(r3.getReadReceiptForUserId(bob.user_id)?.eventId).toBe(newsId);

    // Bob's member event in r1 is known (his message there, lazily loaded): his typing shows on it.
    const typing = until([sdk.RoomMemberEvent.Typing], () => (client!.getRoom(r[1]!)?.getMember(bob.user_id)?.typing ? true : undefined), "bob typing in r1");
    await api(bob, "PUT", `/rooms/${enc(r[1]!)}/typing/${enc(bob.user_id)}`, { typing: true, timeout: 30_000 });
    await typing;
    const stopped = until([sdk.RoomMemberEvent.Typing], () => (client!.getRoom(r[1]!)?.getMember(bob.user_id)?.typing === false ? true : undefined), "bob no longer typing");
    await api(bob, "PUT", `/rooms/${enc(r[1]!)}/typing/${enc(bob.user_id)}`, { typing: false });
    await stopped;
  });

  it("to_device and e2ee: a to-device message reaches the SDK; its Rust crypto's keys are counted; a new device of bob is listed", async () => {
    const ping = until([sdk.ClientEvent.ToDeviceEvent], () => toDevice.find((e) => e.getType() === "org.example.ping"), "bob's to-device message");
    await api(bob, "PUT", `/sendToDevice/org.example.ping/td${++txn}`, { messages: { [alice.user_id]: { [alice.device_id]: { n: 1 } } } });
    const got = await ping;
    expect([got.getSender(), got.getContent()]).toEqual([bob.user_id, { n: 1 }]);
    // Delivered once: the SDK's to_device `since` (the last next_batch) moves past it.
    const carried = exchanges.filter((x) => ((x.response as { extensions?: { to_device?: { events?: { type: string }[] } } })?.extensions?.to_device?.events ?? []).some((e) => e.type === "org.example.ping"));
    expect(carried.length).toBe(1);

    // The SDK's Rust crypto uploaded one-time and fallback keys: the e2ee extension counts them.
    const counted = await answer((a) => ((a.extensions.e2ee as { device_one_time_keys_count?: Record<string, number> })?.device_one_time_keys_count?.signed_curve25519 ?? 0) > 0, "a one-time key count", 0);
    expect((counted.extensions.e2ee as { device_unused_fallback_key_types?: string[] }).device_unused_fallback_key_types).toEqual(["signed_curve25519"]);

    // Bob signs in on a new device: alice, who shares rooms with him, sees his device list change.
    const changed = answer((a) => ((a.extensions.e2ee as { device_lists?: { changed?: string[] } })?.device_lists?.changed ?? []).includes(bob.user_id), "bob's device list change");
    const bob2 = await hs.login("bob");
    expect(bob2.device_id).not.toBe(bob.device_id);
    await changed;
  });
}

describe.each(backends())("matrix-js-sdk SlidingSync on Weft (%s)", { timeout: 60_000 }, (backend) => {
  scenarios(() => weft(backend));
});

describe("matrix-js-sdk SlidingSync on Synapse", { timeout: 60_000 }, () => {
  scenarios(synapse);
});
