// The federation sender's metrics (issue 15 item 8, issue 19 item 5): per destination, the PDUs queued,
// whether it is backing off and its retry interval, and the transactions sent — following a recording
// peer that fails, then answers. Read as the metrics listeners serve them, through the strict parser.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { startSenderRoom, type SenderRoom } from "../helpers/sender-room.ts";
import { eventually, type RecordingPeer } from "../helpers/federation-peer.ts";
import type { Session } from "../helpers/users.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prometheus.ts";

describe.each(backends())("federation sender metrics on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let roomId: string;

  let w: SenderRoom;
  beforeAll(async () => {
    w = await startSenderRoom({ backend, config: { enable_metrics: true, federation: { destination_min_retry_interval: 100, destination_max_retry_interval: 400 } } });
    ({ a, peer, alice, roomId } = w);
  });
  afterAll(() => w?.close());

  const send = (body: string, room?: string) => w.send(body, room);
  const metric = async (name: string) => sampleValue(parsePrometheusText(await a.hs.metrics!.text()), name, { destination: peer.serverName });

  it("shows a destination's queue, backoff and transactions", async () => {
    peer.mode = "failing";
    for (const body of ["one", "two", "three"]) await send(body);
    await eventually(async () => (await metric("weft_federation_destination_down")) === 1 && (await metric("weft_federation_destination_queued_pdus")) === 3, "the peer down with 3 PDUs queued");
    const interval = await metric("weft_federation_destination_retry_interval_seconds");
    expect(interval).toBeGreaterThanOrEqual(0.1);
    expect(interval).toBeLessThanOrEqual(0.4);
    expect(await metric("weft_federation_destination_next_attempt_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 60);
    const sentBefore = await metric("weft_federation_transactions_sent_total");

    peer.mode = "up";
    await eventually(async () => (await metric("weft_federation_destination_queued_pdus")) === 0 && (await metric("weft_federation_destination_down")) === 0, "the queue drained");
    expect(await metric("weft_federation_destination_retry_interval_seconds")).toBe(0);
    expect(await metric("weft_federation_transactions_sent_total")).toBeGreaterThan(sentBefore);
  });
});
