// Read-your-writes across writers. With several events writers a process's events position is the minimum
// over all of them (store/ids.ts), and an idle writer's position moves only when it echoes what it heard
// (one Redis round trip). A client that sends a message and at once reads the room from the same process
// would miss its own event for that moment; so, with replication on, a send answers once this process's
// position covers the event — bounded, since a writer that stopped answering is retired only after a
// silence (liveness.ts). A single process returns at once: its position already covers its commits.
// Spec: none (process architecture; README "Scaling out").
import type { Services } from "../services.ts";

/** The longest a send waits for the other writers' echo before answering anyway. */
const MAX_WAIT_MS = 250;

/** Resolves once this process's events position covers `position` (at once without replication). */
export function visibleHere(s: Services, position: number): Promise<void> {
  if (!s.replication) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, MAX_WAIT_MS);
    timer.unref();
    s.rooms.events.streamIds.whenPersisted(position, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
