// Background work that runs on exactly one instance at a time: the federation sender, the pushers, the
// application-service senders, the server-wide tasks and the media jobs — each a named piece with its
// background tasks and durable consumers, and the candidate instances the worker options allow for it
// (cluster/topology.ts `candidatesFor`). With one candidate (the default: this process alone) the piece
// starts with the server and stops with it, as it always did: no lease row, no renewal, no fence. With
// several, each candidate keeps a lease on it (leases.ts): the holder starts the piece's tasks and
// consumers from their stored positions, every position it advances is fenced by its lease token, and
// it stops them at once when the lease is lost; the others try again every renewal interval and take
// over once a killed holder's lease expired. Spec: none (process architecture; README "Scaling out").
import type { Services } from "../services.ts";
import type { BackgroundTask } from "../extensions.ts";
import type { DurableConsumer } from "../consumers/durable.ts";
import { LeaseKeeper, LeaseStore, type Fence } from "./leases.ts";

export interface LeasedWork {
  /** Its lease's name (a row of worker_leases). */
  name: string;
  /** The instances that may run it; one of them does at a time. */
  candidates: readonly string[];
  background: BackgroundTask[];
  consumers: DurableConsumer[];
}

type Stop = () => Promise<void>;

/** Starts the piece's tasks, then its consumers; returns what stops both (consumers first). */
async function startPiece(s: Services, w: LeasedWork, fence: Fence | undefined): Promise<Stop> {
  const stops = w.background.map((task) => task(s, fence));
  const stopAll = async () => {
    for (const stop of [...stops].reverse()) await stop();
  };
  let stopConsumers: Stop;
  try {
    stopConsumers = await s.consumers.add(w.consumers, fence);
  } catch (err) {
    await stopAll();
    throw err;
  }
  return async () => {
    await stopConsumers();
    await stopAll();
  };
}

/**
 * Starts every piece this instance is a candidate for: at once when it is the only candidate, else under
 * a lease (the first attempt to acquire it awaited, so a lone survivor starts its work before it serves).
 * Their stops (and the leases' release) run on close.
 */
export async function startLeasedWork(s: Services, work: readonly LeasedWork[]): Promise<void> {
  const me = s.topology.instanceName;
  const store = new LeaseStore(s.storage.sql);
  for (const w of work) {
    if (!w.candidates.includes(me)) continue;
    if (w.candidates.length === 1) {
      s.onClose.push(await startPiece(s, w, undefined));
      continue;
    }
    let stop: Stop | undefined;
    const keeper = new LeaseKeeper(store, w.name, me, s.topology.leaseTiming, {
      acquired: async (fence) => {
        stop = await startPiece(s, w, fence);
      },
      lost: async () => {
        const running = stop;
        stop = undefined;
        await running?.();
      },
    }, s.log);
    s.processState.leases.set(w.name, keeper);
    s.onClose.push(() => keeper.stop());
    await keeper.start();
  }
}
