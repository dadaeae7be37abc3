// The federation sender's quick retries (Synapse's long retries of a transaction), on SQLite and
// PostgreSQL: a transaction that fails while its destination is up is tried again shortly (`max_long_retries`
// times, at most `max_long_retry_delay` apart), so a peer back within that gets it long before the backoff's
// first retry; only once they are spent is the destination down.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { startSenderRoom, type SenderRoom } from "../helpers/sender-room.ts";
import { eventually, type RecordingPeer } from "../helpers/federation-peer.ts";
import type { Session } from "../helpers/users.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";


describe.each(backends())("federation sender's quick retries on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let roomId: string;

  let w: SenderRoom;
  beforeAll(async () => {
    // Quick retries half a second apart; the backoff after them a minute (longer than the test waits).
    w = await startSenderRoom({ backend, config: { federation: { max_long_retries: 3, max_long_retry_delay: 500, destination_min_retry_interval: 60_000 } } });
    ({ a, peer, alice, roomId } = w);
  });
  afterAll(() => w?.close());

  const send = (body: string, room?: string) => w.send(body, room);
  const received = (id: string) => peer.pdus().some((p) => eventIdOf(p, "11") === id);
  const state = () => a.hs.services.federationSender.describe(peer.serverName);

  it("a peer failing for a moment gets the transaction on a quick retry, never marked down", async () => {
    peer.mode = "failing";
    const before = peer.attempts;
    const id = await send("through a hiccup");
    await eventually(() => peer.attempts >= before + 2, "a quick retry");
    expect((await state())?.down ?? false).toBe(false);
    peer.mode = "up";
    await eventually(() => received(id), "the event at the peer", 10_000);
    expect((await state())?.down ?? false).toBe(false);
    // Every attempt of the transaction went under one txn id (the peer dedupes by it): the one it accepted.
    const tried = peer.attemptedTxnIds.slice(before);
    expect(tried.length).toBeGreaterThanOrEqual(3);
    expect(new Set(tried).size).toBe(1);
    expect(peer.transactions.at(-1)!.txnId).toBe(tried[0]);
  });

  it("once the quick retries are spent, the destination is down", async () => {
    peer.mode = "failing";
    const before = peer.attempts;
    await send("into the void");
    const down = await eventually(async () => ((await state())?.down ? await state() : undefined), "the destination marked down", 10_000);
    expect(peer.attempts - before).toBe(4);
    expect(down!.retryInterval).toBeGreaterThanOrEqual(60_000);
  });
});
