// The appservices durable consumer (declared in src/main.ts): reads the events stream from its own
// persisted position and appends each timeline event to the queue of every service interested in it, in
// the transaction that moves the position — so an event is queued once, in stream order, and never lost
// across a restart. The sender loops (sender.ts) are woken once the transaction committed; no request to
// a service is made here. Spec: Application Service API "Pushing events".
import type { DurableConsumer } from "../consumers/durable.ts";
import type { QueueItem } from "../store/appservice-queue.ts";
import { inTimeline } from "../store/events.ts";
import { reachableServices, RoomInterest, wantsEvent } from "./interest.ts";

export const appServiceEvents: DurableConsumer = {
  name: "appservices",
  async handle(tx, events, s) {
    const services = reachableServices(s);
    if (services.length === 0) return;
    const timeline = events.filter(inTimeline);
    if (timeline.length === 0) return;
    const rooms = await RoomInterest.load(s, timeline.map((e) => e.roomId));
    const items: QueueItem[] = [];
    const woken = new Set<string>();
    for (const e of timeline) {
      for (const as of services) {
        if (!wantsEvent(s, as, e, rooms)) continue;
        items.push({ serviceId: as.id, kind: "event", eventId: e.eventId });
        woken.add(as.id);
      }
    }
    if (items.length === 0) return;
    await s.appservices.queue.enqueue(tx, items);
    tx.onSettled?.((committed) => {
      if (committed) s.appservices.senders.wake(woken);
    });
  },
};
