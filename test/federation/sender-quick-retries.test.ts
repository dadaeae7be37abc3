// The federation sender's quick retries (Synapse's long retries of a transaction), on SQLite and
// PostgreSQL: a transaction that fails while its destination is up is tried again shortly (`max_long_retries`
// times, at most `max_long_retry_delay` apart), so a peer back within that gets it long before the backoff's
// first retry; only once they are spent is the destination down.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { eventually, joinFromPeer, startRecordingPeer, type RecordingPeer } from "../helpers/federation-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("federation sender's quick retries on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let roomId: string;
  let txn = 0;

  beforeAll(async () => {
    peer = await startRecordingPeer();
    // Quick retries half a second apart; the backoff after them a minute (longer than the test waits).
    a = await startFederatedServer({ backend, config: { federation: { max_long_retries: 3, max_long_retry_delay: 500, destination_min_retry_interval: 60_000 } } });
    peer.trust(a.serverName, a.hs.services.signingKeys[0]!);
    alice = await registerUser(a, "alice");
    roomId = await createRoom(a, alice, { preset: "public_chat" });
    await joinFromPeer(a, peer, roomId, peer.user("pat"));
  });
  afterAll(async () => {
    await Promise.all([a?.close(), peer?.close()]);
  });

  const send = async (body: string) => {
    const res = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/q${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  };
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
