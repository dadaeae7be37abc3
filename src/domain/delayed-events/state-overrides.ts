// A state change overrides the delayed state events other users scheduled for the same piece of state
// (MSC4140; as Synapse 1.163: a local sender's own are kept, a remote sender's change cancels them all).
// A durable consumer of the events stream (declared in src/main.ts when delayed events are on); replayable:
// what it deletes depends only on the events, and only state events write anything.
import type { DurableConsumer } from "../consumers/durable.ts";
import { inTimeline } from "../store/events.ts";
import { serverOf } from "../auth/context.ts";

export const delayedStateOverrides: DurableConsumer = {
  name: "delayed_event_state_overrides",
  startAt: "now",
  replayable: true,
  async handle(tx, events, s) {
    for (const e of events) {
      const stateKey = e.pdu.state_key;
      if (typeof stateKey !== "string" || !inTimeline(e)) continue;
      const sender = e.pdu.sender;
      const keep = serverOf(sender) === s.config.server_name ? sender : "";
      await s.delayedEvents.store.cancelStateOfOthers(tx, e.roomId, e.pdu.type, stateKey, keep);
    }
  },
};
