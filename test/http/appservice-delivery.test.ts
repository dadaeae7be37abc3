// Delivery of transactions to application services when things go wrong, on both databases: a service
// that is down, answers 500 or hangs gets every event once and in order when it is back (a failed
// transaction is retried with the same txnId and content), also across a restart of Weft; and it never
// delays local sends or the other services.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { RecordingAppService, writeRegistration } from "../helpers/appservice.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("application service delivery on %s", (backend) => {
  let t: TestServer;
  let flaky: RecordingAppService;
  let steady: RecordingAppService;
  let alice: Session;
  let roomId: string;

  beforeAll(async () => {
    flaky = await new RecordingAppService("flaky-hs").start();
    steady = await new RecordingAppService("steady-hs").start();
    const files = [
      // Both see every room (a non-exclusive rooms namespace).
      writeRegistration(flaky.registration({ id: "flaky", as_token: "flaky-as", sender_localpart: "flakybot", namespaces: { rooms: [{ exclusive: false, regex: ".*" }] } })),
      writeRegistration(steady.registration({ id: "steady", as_token: "steady-as", sender_localpart: "steadybot", namespaces: { rooms: [{ exclusive: false, regex: ".*" }] } })),
    ];
    t = await startTestServer({ backend, config: { app_service_config_files: files } });
    alice = await registerUser(t, "alice");
    roomId = await createRoom(t, alice);
  });
  afterAll(async () => {
    await t?.close();
    await flaky?.stop();
    await steady?.stop();
  });

  async function send(body: string): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${enc(body)}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }

  /** Every event a service received, once each (by id, across all its accepted transactions). */
  function expectOnce(service: RecordingAppService): void {
    const ids = service.events().map((e) => e.event_id as string);
    expect(new Set(ids).size, "an event arrived twice").toBe(ids.length);
  }

  /** The transaction ids a service was sent, in the order of the attempts (retries included). */
  const attempts = (service: RecordingAppService) => service.requests.filter((r) => r.method === "PUT").map((r) => r.path.split("/").pop()!);

  it("retries a service that answers 500 with the same transaction, while the others and local sends go on", async () => {
    flaky.mode = "fail";
    const sent = ["f1", "f2", "f3"];
    for (const b of sent) await send(b);
    await steady.until(() => sent.every((b) => steady.bodies(roomId).includes(b)), 20_000, "the steady service");
    await flaky.until(() => attempts(flaky).length > 0, 20_000, "a first attempt at the flaky service");
    const firstTxn = attempts(flaky)[0]!;
    flaky.mode = "ok";
    await flaky.until(() => sent.every((b) => flaky.bodies(roomId).includes(b)), 20_000, "the flaky service after its recovery");
    expect(flaky.bodies(roomId).filter((b) => sent.includes(b))).toEqual(sent);
    // The first accepted transaction is the one that failed, sent again under its id.
    expect(flaky.transactions[0]!.txnId).toBe(firstTxn);
    expect(attempts(flaky).filter((id) => id === firstTxn).length).toBeGreaterThan(1);
    expectOnce(flaky);
    expectOnce(steady);
    expect(flaky.invalid).toEqual([]);
  });

  it("a hanging service holds up neither local sends nor the other services", async () => {
    flaky.mode = "hang";
    const before = attempts(flaky).length;
    await send("h0");
    await flaky.until(() => attempts(flaky).length > before, 20_000, "the hanging request");
    // With its request still hanging, sends answer and the steady service keeps receiving.
    const sent = ["h1", "h2", "h3", "h4"];
    for (const b of sent) await send(b);
    await steady.until(() => sent.every((b) => steady.bodies(roomId).includes(b)), 20_000, "the steady service");
    expect(flaky.bodies(roomId)).not.toContain("h0");
    // Cut the hanging request: the service fails it, then gets everything in order.
    flaky.mode = "ok";
    await flaky.stop();
    await flaky.restart();
    await flaky.until(() => ["h0", ...sent].every((b) => flaky.bodies(roomId).includes(b)), 30_000, "the recovered service");
    expect(flaky.bodies(roomId).filter((b) => b.startsWith("h"))).toEqual(["h0", ...sent]);
    expectOnce(flaky);
  });

  it("keeps what a service that is down missed, and delivers it once, in order, when it is back", async () => {
    await flaky.stop();
    const sent = ["d1", "d2", "d3", "d4", "d5"];
    for (const b of sent) await send(b);
    await steady.until(() => sent.every((b) => steady.bodies(roomId).includes(b)), 20_000, "the steady service");
    await flaky.restart();
    await flaky.until(() => sent.every((b) => flaky.bodies(roomId).includes(b)), 30_000, "the service back up");
    expect(flaky.bodies(roomId).filter((b) => b.startsWith("d"))).toEqual(sent);
    expectOnce(flaky);
  });

  it("keeps the queue across a restart of Weft: the events arrive once, in order, with transaction ids that only grow", async () => {
    await flaky.stop();
    const sent = ["r1", "r2", "r3"];
    for (const b of sent) await send(b);
    await steady.until(() => sent.every((b) => steady.bodies(roomId).includes(b)), 20_000, "the steady service");
    const lastTxnBefore = Math.max(...flaky.transactions.map((x) => Number(x.txnId)));
    await t.stop();
    await flaky.restart();
    await t.restart();
    const more = ["r4", "r5"];
    for (const b of more) await send(b);
    await flaky.until(() => [...sent, ...more].every((b) => flaky.bodies(roomId).includes(b)), 30_000, "the service after the restart");
    expect(flaky.bodies(roomId).filter((b) => b.startsWith("r"))).toEqual([...sent, ...more]);
    expectOnce(flaky);
    expectOnce(steady);
    const ids = flaky.transactions.map((x) => Number(x.txnId));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(Math.min(...ids.filter((id) => id > lastTxnBefore))).toBe(lastTxnBefore + 1);
    // Nothing is left waiting once delivered.
    await expect.poll(() => t.hs.services.appservices.queue.pending("flaky")).toBe(0);
  });
});
