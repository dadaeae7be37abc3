// Element X's engine against Weft: test/element-x is a small Rust program on matrix-sdk and
// matrix-sdk-ui 0.18 (the crates Element X iOS and Android are built on), scripted over stdin, printing
// one JSON observation per line. It logs in with a password, runs the SyncService (simplified sliding
// sync, MSC4186: its "room-list" and "encryption" connections), sees the room list sorted by activity
// and re-sorted when a room gets a new message, opens a room's timeline, sends (local echo, then the
// server's event id, then the remote echo through sliding sync) and receives a message sent over plain
// HTTP; then, with its crypto on, accepts an invite to an encrypted room of a matrix-js-sdk user (Rust
// crypto) and the two exchange messages that decrypt on the other side and are ciphertext on the server.
//
// The binary is built by scripts/build-element-x.sh into ~/.cache/weft-element-x/target (a no-op of
// about a second when nothing changed; a cold build takes about 10 minutes on two cores: .ci/run then
// builds it in the background beside the suite and runs this file at the end, if the build finished in time). WEFT_ELEMENT_X_BIN names a prebuilt binary instead. WEFT_ELEMENT_X_SERVER=synapse
// runs the same scenario against the pinned Synapse (test/helpers/synapse.ts), the reference the
// scenario was written against. WEFT_ELEMENT_X_LOG=<tracing filter> shows the SDK's log on stderr.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import { backends, startTestServer, type Backend, type JsonResponse } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { BUILD_TIMEOUT_MS, ElementX, elementXBinary } from "../helpers/element-x.ts";
import { WAIT_MS, decryptedBody, deviceKnown, encryptedRoom, startCryptoClient, waitFor } from "../helpers/js-sdk-crypto.ts";

if (process.env.WEFT_TEST_SDK_LOG !== "1") (sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void }).setLevel("silent", false);

const AGAINST_SYNAPSE = process.env.WEFT_ELEMENT_X_SERVER === "synapse";
const PASSWORD = "password";

/** The server under test, Weft (or, with WEFT_ELEMENT_X_SERVER=synapse, the reference Synapse). */
interface Server {
  baseUrl: string;
  call(method: string, p: string, opts?: { body?: unknown; token?: string }): Promise<JsonResponse>;
  register(localpart: string): Promise<Session>;
  close(): Promise<void>;
}

async function startServer(backend: Backend): Promise<Server> {
  if (AGAINST_SYNAPSE) {
    const syn = await startSynapse();
    return {
      baseUrl: syn.clientUrl,
      call: syn.call,
      async register(localpart) {
        await syn.register(localpart, PASSWORD);
        const res = await syn.call("POST", "/_matrix/client/v3/login", { body: { type: "m.login.password", identifier: { type: "m.id.user", user: localpart }, password: PASSWORD } });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        return res.json as Session;
      },
      close: syn.close,
    };
  }
  const t = await startTestServer({ backend });
  return { baseUrl: t.baseUrl, call: t.call, register: (localpart) => registerUser(t, localpart, PASSWORD), close: t.close };
}

const serverBackends: Backend[] = AGAINST_SYNAPSE ? ["sqlite"] : backends();

describe.each(serverBackends)(`Element X (matrix-sdk-ui 0.18, sliding sync) against ${AGAINST_SYNAPSE ? "Synapse" : "Weft on %s"}`, { timeout: 120_000 }, (backend) => {
  let bin: string;
  let hs: Server;
  let ex: ElementX | undefined;
  let alice: Session;
  let bob: Session;
  let bobJs: sdk.MatrixClient | undefined;
  let exDevice: string;
  const rooms: Record<"alpha" | "bravo" | "charlie", string> = { alpha: "", bravo: "", charlie: "" };

  const send = async (who: Session, roomId: string, body: string): Promise<string> => {
    const txn = `t${Date.now()}${Math.random().toString(36).slice(2)}`;
    const res = await hs.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txn}`, { token: who.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
  const createRoom = async (who: Session, body: Record<string, unknown>): Promise<string> => {
    const res = await hs.call("POST", "/_matrix/client/v3/createRoom", { token: who.access_token, body });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.room_id as string;
  };
  const event = async (who: Session, roomId: string, eventId: string) => {
    const res = await hs.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(eventId)}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  };

  beforeAll(async () => {
    bin = elementXBinary();
    hs = await startServer(backend);
    alice = await hs.register("alice");
    bob = await hs.register("bob");
    // Three rooms of alice, created alpha, bravo, charlie; their last activity is in the order
    // bravo (bob's message), alpha, charlie — not the order of creation.
    rooms.alpha = await createRoom(alice, { name: "Alpha" });
    rooms.bravo = await createRoom(alice, { name: "Bravo", invite: [bob.user_id] });
    rooms.charlie = await createRoom(alice, { name: "Charlie" });
    const join = await hs.call("POST", `/_matrix/client/v3/join/${encodeURIComponent(rooms.bravo)}`, { token: bob.access_token, body: {} });
    expect(join.status, JSON.stringify(join.json)).toBe(200);
    await send(alice, rooms.charlie, "charlie 1");
    await send(alice, rooms.alpha, "alpha 1");
    await send(bob, rooms.bravo, "bravo 1 from bob");
  }, BUILD_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    bobJs?.stopClient();
    if (ex && ex.exitCode === undefined) await ex.quit();
    await hs?.close();
  });

  it("logs in with a password and runs the sync service", async () => {
    ex = ElementX.start(bin, hs.baseUrl);
    const login = await ex.one({ cmd: "login", user: alice.user_id, password: PASSWORD }, "logged_in");
    expect(login.user_id).toBe(alice.user_id);
    // Element X discovers sliding sync in /versions (org.matrix.simplified_msc3575).
    expect(login.sliding_sync_version).toBe("Native");
    exDevice = login.device_id;
    expect(exDevice).toBeTruthy();
    await ex.one({ cmd: "start_sync" }, "sync_started");
  });

  it("sees the room list sorted by activity, and re-sorted on a new message", async () => {
    // The UI crate sorts on the client: by each room's latest event's timestamp once the SDK computed
    // it (its room previews), by the rooms' bump_stamp before that.
    const list = await ex!.one({ cmd: "wait_rooms", min: 3, order: [rooms.bravo, rooms.alpha, rooms.charlie], timeout_ms: WAIT_MS }, "room_list");
    expect(list.rooms.map((r: any) => r.room_id)).toEqual([rooms.bravo, rooms.alpha, rooms.charlie]);
    expect(list.rooms.map((r: any) => r.name)).toEqual(["Bravo", "Alpha", "Charlie"]);
    expect(list.rooms.every((r: any) => r.state === "joined" && r.encrypted === false)).toBe(true);
    expect(list.maximum_number_of_rooms).toBe(3);
    expect(ex!.lines.some((l) => l.event === "sync_state" && l.service === "sync_service" && l.state === "Running")).toBe(true);

    // New messages in bravo (bob's) then charlie (alice's own) move them up, with their previews
    // (the list's timeline_limit 1) and bravo's unread messages as the SDK counts them (no receipt
    // of alice there: bob's two messages).
    const bravo2 = await send(bob, rooms.bravo, "bravo 2 from bob");
    const charlie2 = await send(alice, rooms.charlie, "charlie 2");
    const resorted = await ex!.one({
      cmd: "wait_rooms",
      order: [rooms.charlie, rooms.bravo, rooms.alpha],
      latest_event_ids: { [rooms.charlie]: charlie2, [rooms.bravo]: bravo2 },
      unread_messages: { [rooms.bravo]: 2 },
      timeout_ms: WAIT_MS,
    }, "room_list");
    expect(resorted.rooms.slice(0, 2).map((r: any) => [r.latest_event?.body, r.latest_event?.sender])).toEqual([["charlie 2", alice.user_id], ["bravo 2 from bob", bob.user_id]]);
    expect(resorted.rooms[0].unread_messages).toBe(0);
  });

  it("opens a room's timeline, sends and receives", async () => {
    const tl = await ex!.one({ cmd: "open_timeline", room_id: rooms.bravo, last: 5, min_items: 2, timeout_ms: WAIT_MS }, "timeline");
    const bodies = tl.items.filter((i: any) => i.kind === "message").map((i: any) => i.body);
    expect(bodies.slice(-2)).toEqual(["bravo 1 from bob", "bravo 2 from bob"]);
    expect(tl.items.at(-1).sender).toBe(bob.user_id);

    const out = await ex!.run({ cmd: "send", room_id: rooms.bravo, body: "hello from element x", timeout_ms: WAIT_MS });
    const kinds = out.map((l) => l.event).filter((e) => ["local_echo", "sent", "remote_echo"].includes(e));
    expect(kinds).toEqual(["local_echo", "sent", "remote_echo"]);
    const sent = out.find((l) => l.event === "sent")!;
    expect(sent.event_id).toMatch(/^\$/);
    expect(out.find((l) => l.event === "remote_echo")!.event_id).toBe(sent.event_id);
    const onServer = await event(bob, rooms.bravo, sent.event_id);
    expect([onServer.type, onServer.sender, onServer.content.body]).toEqual(["m.room.message", alice.user_id, "hello from element x"]);

    const reply = await send(bob, rooms.bravo, "reply from bob over http");
    const got = await ex!.one({ cmd: "wait_message", room_id: rooms.bravo, body: "reply from bob over http", timeout_ms: WAIT_MS }, "message");
    expect([got.event_id, got.sender, got.encrypted]).toEqual([reply, bob.user_id, false]);
  });

  it("with its crypto on, exchanges encrypted messages with a matrix-js-sdk user", async () => {
    bobJs = await startCryptoClient(hs.baseUrl, bob);
    const { room_id: secret } = await bobJs.createRoom({ ...encryptedRoom([alice.user_id]), name: "Secret" });

    // The invite shows in Element X's list; accepting it joins the room.
    const invited = await ex!.one({ cmd: "wait_rooms", contains: [secret], timeout_ms: WAIT_MS }, "room_list");
    expect(invited.rooms.find((r: any) => r.room_id === secret)?.state).toBe("invited");
    await ex!.one({ cmd: "join", room_id: secret }, "joined");
    const joined = await ex!.one({ cmd: "wait_rooms", joined: [secret], timeout_ms: WAIT_MS }, "room_list");
    expect(joined.rooms.find((r: any) => r.room_id === secret)?.encrypted).toBe(true);
    await ex!.one({ cmd: "open_timeline", room_id: secret, timeout_ms: WAIT_MS }, "timeline");

    // The js-sdk user encrypts for Element X's device once it knows it (uploaded through the
    // encryption sync's outgoing requests) and sees alice joined.
    await deviceKnown(bobJs, alice.user_id, exDevice, "Element X's device known to the js-sdk");
    await waitFor(bobJs, [sdk.RoomEvent.Timeline, sdk.RoomStateEvent.Members], () => (bobJs!.getRoom(secret)?.getMember(alice.user_id)?.membership === "join" ? true : undefined), "alice's join at bob");
    const fromJs = await bobJs.sendTextMessage(secret, "secret from the js-sdk");
    const got = await ex!.one({ cmd: "wait_message", room_id: secret, event_id: fromJs.event_id, timeout_ms: WAIT_MS }, "message");
    expect([got.body, got.sender, got.encrypted, got.decrypted]).toEqual(["secret from the js-sdk", bob.user_id, true, true]);
    expect(got.sender_device).toBe(bobJs.getDeviceId());

    // Element X encrypts for the js-sdk's device (it asks the server for bob's keys).
    await ex!.one({ cmd: "wait_device", user_id: bob.user_id, device_id: bobJs.getDeviceId(), timeout_ms: WAIT_MS }, "device_known");
    const out = await ex!.run({ cmd: "send", room_id: secret, body: "secret from element x", timeout_ms: WAIT_MS });
    const sent = out.find((l) => l.event === "sent")!;
    expect(sent.room_encrypted).toBe(true);
    const onServer = await event(bob, secret, sent.event_id);
    expect(onServer.type).toBe("m.room.encrypted");
    expect(JSON.stringify(onServer)).not.toContain("secret from element x");
    expect(await decryptedBody(bobJs, secret, sent.event_id)).toBe("secret from element x");
  });

  it("stops cleanly, no sync having failed", async () => {
    const code = await ex!.quit();
    expect(code, ex!.tail()).toBe(0);
    const failures = ex!.lines.filter((l) => l.event === "error" || (l.event === "sync_state" && (l.state === "Error" || l.state === "Offline")));
    expect(failures, `${JSON.stringify(failures)}\n${ex!.tail()}`).toEqual([]);
  });
});
