// A real bridge framework against Weft, on SQLite and PostgreSQL: an application service built on
// matrix-bot-sdk's Appservice (0.7.1), registered through a registration file that Weft and the bridge
// both read. A matrix-js-sdk client (its real sync loop) invites a virtual user of the bridge (Weft asks
// the bridge about the unknown user, the bridge creates it), the virtual user joins, the client's
// "!echo" message reaches the bridge in a transaction, and the bridge's answer — sent through the
// virtual user's intent — reaches the client's /sync. Then the bridge goes down, messages are sent, it
// comes back: each arrives once, in order; and again across a restart of Weft.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import YAML from "yaml";
import * as sdk from "matrix-js-sdk";
import { logger as sdkGlobalLogger } from "matrix-js-sdk/lib/logger.js";
import { backends, freePort, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { makeClient } from "../helpers/js-sdk.ts";
import { writeRegistration } from "../helpers/appservice.ts";
import { loadBotSdk } from "../helpers/bot-sdk.ts";
import type { Appservice } from "matrix-bot-sdk";

if (process.env.WEFT_TEST_SDK_LOG !== "1") (sdkGlobalLogger as unknown as { setLevel(level: string, persist?: boolean): void }).setLevel("error", false);

const bot = loadBotSdk();

/** What the bridge saw: every room event of every transaction, in the order it processed them. */
interface Bridge {
  appservice: Appservice;
  seen: { roomId: string; eventId: string; type: string; sender: string; body?: string }[];
}

/** Resolves when `pred` holds, re-checked on each call of the returned `check` (never on a timer). */
function condition(pred: () => boolean, what: string, ms = 30_000): { done: Promise<void>; check: () => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  const check = () => {
    if (pred()) {
      clearTimeout(timer);
      resolve();
    }
  };
  check();
  return { done, check };
}

describe.each(backends())("a matrix-bot-sdk bridge on %s", (backend) => {
  let t: TestServer;
  let port: number;
  let registrationFile: string;
  let bridge: Bridge;
  let alice: Session;
  let client: sdk.MatrixClient;
  let roomId: string;
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((w) => w());

  /** Starts the bridge on its port, with fresh memory (as a restarted bridge process has). */
  async function startBridge(seen: Bridge["seen"] = []): Promise<Bridge> {
    const registration = YAML.parse(readFileSync(registrationFile, "utf8"));
    const appservice = new bot.Appservice({
      port,
      bindAddress: "127.0.0.1",
      homeserverName: "weft.test",
      homeserverUrl: t.baseUrl,
      registration,
      storage: new bot.MemoryStorageProvider(),
    });
    // Weft asks about unknown users of the namespace: the bridge creates them, with a display name.
    appservice.on("query.user", (_userId: string, createUser: (profile: object | false) => Promise<void>) => void createUser({ display_name: "Parrot" }));
    // Virtual users accept invites.
    appservice.on("room.invite", (room: string, event: { state_key: string }) => void appservice.getIntentForUserId(event.state_key).joinRoom(room));
    appservice.on("room.event", (room: string, event: { event_id: string; type: string; sender: string; content?: { body?: string } }) => {
      seen.push({ roomId: room, eventId: event.event_id, type: event.type, sender: event.sender, body: event.content?.body });
      wake();
    });
    // The bridge's answer: "!echo x" from a human becomes "echo: x" from the virtual user.
    appservice.on("room.message", (room: string, event: { sender: string; content?: { body?: string } }) => {
      const body = event.content?.body ?? "";
      if (!appservice.isNamespacedUser(event.sender) && body.startsWith("!echo ")) void appservice.getIntentForSuffix("parrot").sendText(room, `echo: ${body.slice(6)}`);
    });
    await appservice.begin();
    return { appservice, seen };
  }

  /**
   * Waits until Weft has nothing in flight for the bridge. A bridge restarted with fresh memory cannot
   * recognise a transaction it processed but whose answer was cut: stopping it mid-transaction would make
   * that transaction (rightly) arrive twice.
   */
  async function settled(): Promise<void> {
    await expect.poll(() => t.hs.services.appservices.queue.pending("echo-bridge"), { timeout: 20_000 }).toBe(0);
  }

  /** The bridge goes down: its listener closes and open connections are cut (connections are refused). */
  function stopBridge(b: Bridge): void {
    const server = (b.appservice as unknown as { appServer: import("node:http").Server }).appServer;
    server.close();
    server.closeAllConnections();
  }

  async function startClient(session: Session): Promise<sdk.MatrixClient> {
    const c = makeClient(t.baseUrl, { userId: session.user_id, accessToken: session.access_token, deviceId: session.device_id });
    const prepared = new Promise<void>((resolve, reject) => {
      c.on(sdk.ClientEvent.Sync, (state) => {
        if (state === sdk.SyncState.Prepared) resolve();
        if (state === sdk.SyncState.Error) reject(new Error("sync error"));
      });
    });
    await c.startClient({ pollTimeout: 30_000 });
    await prepared;
    c.on(sdk.RoomEvent.Timeline, () => setImmediate(wake));
    c.on(sdk.RoomEvent.MyMembership, () => setImmediate(wake));
    c.on(sdk.RoomStateEvent.Members, () => setImmediate(wake));
    return c;
  }

  async function until(pred: () => boolean, what: string): Promise<void> {
    const c = condition(pred, what);
    waiters.add(c.check);
    try {
      await c.done;
    } finally {
      waiters.delete(c.check);
    }
  }

  const bodiesAtBridge = (b: Bridge) => b.seen.filter((e) => e.roomId === roomId && e.type === "m.room.message" && e.sender === alice.user_id).map((e) => e.body!);
  const timelineBodies = (c: sdk.MatrixClient) => (c.getRoom(roomId)?.getLiveTimeline().getEvents() ?? []).filter((e) => e.getType() === "m.room.message").map((e) => ({ sender: e.getSender(), body: e.getContent().body as string }));

  beforeAll(async () => {
    port = await freePort();
    registrationFile = writeRegistration({
      id: "echo-bridge",
      url: `http://127.0.0.1:${port}`,
      as_token: "echo-as-token",
      hs_token: "echo-hs-token",
      sender_localpart: "echobot",
      namespaces: { users: [{ exclusive: true, regex: "@_echo_.*:weft\\.test" }], aliases: [], rooms: [] },
      rate_limited: false,
      "de.sorunome.msc2409.push_ephemeral": true,
    });
    t = await startTestServer({ backend, config: { app_service_config_files: [registrationFile] } });
    bridge = await startBridge();
    alice = await registerUser(t, "alice");
    client = await startClient(alice);
  });
  afterAll(async () => {
    client?.stopClient();
    if (bridge) stopBridge(bridge);
    await t?.close();
  });

  it("receives a client's message and answers through a virtual user's intent; the answer reaches the client's sync", async () => {
    const parrot = "@_echo_parrot:weft.test";
    roomId = (await client.createRoom({ name: "bridged" })).room_id;
    // The virtual user does not exist yet: Weft asks the bridge, which creates it.
    await client.invite(roomId, parrot);
    await until(() => client.getRoom(roomId)?.getMember(parrot)?.membership === "join", "the virtual user to join");
    expect(client.getRoom(roomId)?.getMember(parrot)?.name).toBe("Parrot");
    await client.sendTextMessage(roomId, "!echo hello bridge");
    await until(() => timelineBodies(client).some((m) => m.sender === parrot && m.body === "echo: hello bridge"), "the bridge's answer in the client's sync");
    expect(bodiesAtBridge(bridge)).toEqual(["!echo hello bridge"]);
  });

  it("delivers what was sent while the bridge was down once, in order, when it is back", async () => {
    await settled();
    stopBridge(bridge);
    const sent = ["down 1", "down 2", "down 3", "down 4"];
    for (const body of sent) await client.sendTextMessage(roomId, body);
    bridge = await startBridge(bridge.seen);
    await until(() => sent.every((b) => bodiesAtBridge(bridge).includes(b)), "the messages sent while the bridge was down");
    expect(bodiesAtBridge(bridge).slice(1)).toEqual(sent);
    const ids = bridge.seen.map((e) => e.eventId);
    expect(new Set(ids).size, "an event reached the bridge twice").toBe(ids.length);
    // And it still answers.
    await client.sendTextMessage(roomId, "!echo back again");
    await until(() => timelineBodies(client).some((m) => m.body === "echo: back again"), "the answer after the outage");
  });

  it("keeps the undelivered messages across a restart of Weft", async () => {
    await settled();
    stopBridge(bridge);
    const sent = ["restart 1", "restart 2", "restart 3"];
    for (const body of sent) await client.sendTextMessage(roomId, body);
    client.stopClient();
    await t.stop();
    await t.restart();
    bridge = await startBridge(bridge.seen);
    await until(() => sent.every((b) => bodiesAtBridge(bridge).includes(b)), "the messages kept across the restart");
    const atBridge = bodiesAtBridge(bridge);
    expect(atBridge.slice(atBridge.indexOf("restart 1"))).toEqual(sent);
    const ids = bridge.seen.map((e) => e.eventId);
    expect(new Set(ids).size, "an event reached the bridge twice").toBe(ids.length);
    // A new client session after the restart still gets the bridge's answers.
    client = await startClient(alice);
    await client.sendTextMessage(roomId, "!echo after restart");
    await until(() => timelineBodies(client).some((m) => m.body === "echo: after restart"), "the answer after the restart");
  });
});
