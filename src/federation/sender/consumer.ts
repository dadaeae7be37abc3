// The federation sender's durable consumer of the events stream (declared in src/main.ts): for each local
// timeline event it queues one row per remote destination (src/domain/federation/room-servers.ts decides
// which), in the consumer's own transaction with its position — so an event is queued exactly once even
// across a crash or restart — and wakes those destinations once the transaction committed. It starts at
// "now": events from before the first start are not sent. Spec: Server-Server API "Transactions".
import type { DurableConsumer } from "../../domain/consumers/durable.ts";
import { destinationsOfEvents } from "../../domain/federation/room-servers.ts";
import type { QueuedPdu } from "./store.ts";

export const federationSenderConsumer: DurableConsumer = {
  name: "federation_sender",
  // Destinations come from the state group of each event: handling again decides the same (durable.ts).
  replayable: true,
  startAt: "now",
  batchSize: 100,
  async handle(tx, events, s) {
    if (!s.config.send_federation) return;
    const destinations = await destinationsOfEvents(s, events);
    if (destinations.size === 0) return;
    const rows: QueuedPdu[] = [];
    for (const e of events)
      for (const destination of destinations.get(e.eventId) ?? []) rows.push({ destination, streamOrdering: e.streamOrdering, roomId: e.roomId, eventId: e.eventId });
    if (rows.length === 0) return;
    const sender = s.federationSender;
    await sender.store.enqueue(tx, rows);
    const touched = new Set(rows.map((r) => r.destination));
    tx.onSettled?.((committed) => {
      if (committed) sender.wake(touched);
    });
  },
};
