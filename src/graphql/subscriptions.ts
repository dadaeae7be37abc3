// Live GraphQL subscriptions fed by the domain notifier (the same one that wakes /sync): a notifier
// callback pushes into a queue that an async iterator drains, in order, one item at a time; the listener
// is removed when the client unsubscribes or the socket closes. No polling. New subscriptions (typing,
// receipts, syncUpdates) build on `notifierIterable`: say which notices concern them and how a notice
// becomes zero or more payloads (reading storage, applying the same access rules as REST). A payload
// that is the same object for many subscribers can be marked `shareable` (shared-execution.ts): each
// operation over it is then executed once, not once per subscriber (roomTimeline does).
import type { Services } from "../domain/services.ts";
import type { NewEventNotice, StreamNotice } from "../domain/rooms/notifier.ts";

export type Notice = { kind: "event"; n: NewEventNotice } | { kind: "stream"; n: StreamNotice };

/**
 * An async iterable of payloads: `backlog` (optional) runs first and yields what happened before the
 * subscription started; then each notice accepted by `wants` is turned into payloads by `toPayloads`.
 * Notices arriving while the backlog is read are queued, not lost.
 */
export function notifierIterable<T>(
  s: Services,
  opts: {
    wants: (n: Notice) => boolean;
    toPayloads: (n: Notice) => Promise<T[]>;
    backlog?: () => Promise<T[]>;
    /** Called once when the subscription ends (the client unsubscribed, the socket closed, shutdown). */
    onClose?: () => void;
  },
): AsyncIterableIterator<T> {
  const queue: Notice[] = [];
  const ready: T[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const push = (n: Notice) => {
    if (done || !opts.wants(n)) return;
    queue.push(n);
    wake?.();
  };
  const offEvent = s.rooms.notifier.onEvent((n) => push({ kind: "event", n }));
  const offStream = s.rooms.notifier.onStream((n) => {
    // Room events come through onEvent; of the events stream only the rooms whose state became complete.
    if (n.stream !== "events" || n.stateCompleted) push({ kind: "stream", n });
  });
  const offClosing = s.sync.shuttingDown.onAbort(() => void finish());
  let backlog = opts.backlog;
  const finish = async (): Promise<IteratorResult<T>> => {
    if (!done) opts.onClose?.();
    done = true;
    offEvent();
    offStream();
    offClosing();
    wake?.();
    return { value: undefined, done: true };
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next(): Promise<IteratorResult<T>> {
      if (backlog) {
        const run = backlog;
        backlog = undefined;
        ready.push(...(await run()));
      }
      for (;;) {
        if (ready.length > 0) return { value: ready.shift()!, done: false };
        if (done) return { value: undefined, done: true };
        const n = queue.shift();
        if (n) {
          ready.push(...(await opts.toPayloads(n)));
          continue;
        }
        const unpark = s.rooms.notifier.park();
        await new Promise<void>((resolve) => (wake = resolve));
        unpark();
        wake = undefined;
      }
    },
    return: finish,
    throw: async (err) => {
      await finish();
      throw err;
    },
  };
}
