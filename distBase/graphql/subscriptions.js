/**
 * An async iterable of payloads: `backlog` (optional) runs first and yields what happened before the
 * subscription started; then each notice accepted by `wants` is turned into payloads by `toPayloads`.
 * Notices arriving while the backlog is read are queued, not lost.
 */
export function notifierIterable(s, opts) {
    const queue = [];
    const ready = [];
    let wake;
    let done = false;
    const push = (n) => {
        if (done || !opts.wants(n))
            return;
        queue.push(n);
        wake?.();
    };
    const offEvent = s.rooms.notifier.onEvent((n) => push({ kind: "event", n }));
    const offStream = s.rooms.notifier.onStream((n) => {
        if (n.stream !== "events")
            push({ kind: "stream", n });
    });
    const onClose = () => void finish();
    const closing = s.sync.shutdownSignal;
    closing.addEventListener("abort", onClose);
    let backlog = opts.backlog;
    const finish = async () => {
        done = true;
        offEvent();
        offStream();
        closing.removeEventListener("abort", onClose);
        wake?.();
        return { value: undefined, done: true };
    };
    return {
        [Symbol.asyncIterator]() {
            return this;
        },
        async next() {
            if (backlog) {
                const run = backlog;
                backlog = undefined;
                ready.push(...(await run()));
            }
            for (;;) {
                if (ready.length > 0)
                    return { value: ready.shift(), done: false };
                if (done)
                    return { value: undefined, done: true };
                const n = queue.shift();
                if (n) {
                    ready.push(...(await opts.toPayloads(n)));
                    continue;
                }
                const unpark = s.rooms.notifier.park();
                await new Promise((resolve) => (wake = resolve));
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
