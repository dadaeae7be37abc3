// The request a piece of work belongs to, carried through async calls (AsyncLocalStorage): its id, which
// every log line written while handling it carries (log.ts), and the user it authenticated as, which the
// request line names (http-observer.ts). Both faces note the requester here; nothing else reads it.
import { AsyncLocalStorage } from "node:async_hooks";
const storage = new AsyncLocalStorage();
/** The request being handled by the caller's async chain, if any. */
export function currentRequest() {
    return storage.getStore();
}
/** Runs `fn` (and every async continuation it starts) inside `ctx`. */
export function runInRequest(ctx, fn) {
    return storage.run(ctx, fn);
}
/** Records the user the current request authenticated as (a no-op outside a request). */
export function noteRequester(userId) {
    const ctx = storage.getStore();
    if (ctx)
        ctx.user = userId;
}
const epoch = Date.now().toString(36);
let seq = 0;
/** A fresh request id: this process's start time and a counter (short, unique, ordered). */
export function newRequestId() {
    return `${epoch}-${(++seq).toString(36)}`;
}
