// The federation sender's log of destinations going down and coming back (issue 15 item 8), against the
// recording peer (test/helpers/federation-peer.ts), on SQLite and PostgreSQL: one warning when a
// destination stops answering, however many retries follow, and one line when it is back — for each
// outage.
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually, joinFromPeer, startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const DOWN = "federation destination is down: its queue waits";
const UP = "federation destination is back up: sending what waited";

describe.each(backends())("federation sender log on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let roomId: string;
  let txn = 0;
  const lines: { msg?: string; destination?: string; level?: number }[] = [];

  beforeAll(async () => {
    peer = await startRecordingPeer();
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l));
        done();
      },
    });
    a = await startFederatedServer({ backend, log: pino({ level: "info" }, sink), config: { federation: { destination_min_retry_interval: 50, destination_max_retry_interval: 100 } } });
    peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
    alice = await registerUser(a, "alice");
    roomId = await createRoom(a, alice, { preset: "public_chat" });
    await joinFromPeer(a, peer, roomId, peer.user("pat"));
  });
  afterAll(async () => {
    await Promise.all([a?.close(), peer?.close()]);
  });

  const send = async (body: string) => {
    const res = await a.call("PUT", `${V3}/rooms/${encodeURIComponent(roomId)}/send/m.room.message/l${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(res.status).toBe(200);
  };
  const count = (msg: string) => lines.filter((l) => l.msg === msg && l.destination === peer.serverName).length;

  it("one line when a destination goes down (not one per retry) and one when it comes back, for each outage", async () => {
    await send("first");
    await eventually(() => peer.pdus().length > 0 || undefined, "a first transaction");
    expect([count(DOWN), count(UP)]).toEqual([0, 0]);

    for (const outage of [1, 2]) {
      peer.mode = "failing";
      const attempts = peer.attempts;
      await send(`while down ${outage}`);
      // Several retries, one down line.
      await eventually(() => peer.attempts >= attempts + 4, "four attempts");
      expect(count(DOWN)).toBe(outage);
      expect(count(UP)).toBe(outage - 1);
      peer.mode = "up";
      await eventually(() => count(UP) === outage || undefined, "the back-up line");
      await eventually(async () => (await a.hs.services.federationSender.describe(peer.serverName))?.queuedPdus === 0 || undefined, "the queue sent");
      expect(count(DOWN)).toBe(outage);
    }
    const down = lines.find((l) => l.msg === DOWN)!;
    expect(down.level).toBe(40); // warn
  });
});
