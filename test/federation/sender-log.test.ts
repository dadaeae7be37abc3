// The federation sender's log of destinations going down and coming back (issue 15 item 8), against the
// recording peer (test/helpers/federation-peer.ts), on SQLite and PostgreSQL: one warning when a
// destination stops answering, however many retries follow, and one line when it is back — for each
// outage.
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { startSenderRoom, type SenderRoom } from "../helpers/sender-room.ts";
import { eventually, type RecordingPeer } from "../helpers/federation-peer.ts";
import type { Session } from "../helpers/users.ts";

const DOWN = "federation destination is down: its queue waits";
const UP = "federation destination is back up: sending what waited";

describe.each(backends())("federation sender log on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let roomId: string;
  const lines: { msg?: string; destination?: string; level?: number }[] = [];

  let w: SenderRoom;
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l));
        done();
      },
    });
    w = await startSenderRoom({ backend, log: pino({ level: "info" }, sink), config: { federation: { destination_min_retry_interval: 50, destination_max_retry_interval: 100 } } });
    ({ a, peer, alice, roomId } = w);
  });
  afterAll(() => w?.close());

  const send = (body: string, room?: string) => w.send(body, room);
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
