import { MatrixError } from "../errors.js";
import { Waiter } from "./wait.js";
import { formatSyncToken, parseSyncToken } from "./token.js";
export const MAX_SYNC_TIMEOUT_MS = 10 * 60 * 1000;
function emptyResult() {
    return { rooms: { join: {}, invite: {}, knock: {}, leave: {} }, account_data: { events: [] }, presence: { events: [] } };
}
function newContext(s, r, req, since, to) {
    const result = emptyResult();
    return {
        s,
        requester: r,
        filter: req.filter,
        since,
        to,
        fullState: req.fullState,
        result,
        joinedRooms: new Set(),
        joinedRoom(roomId) {
            return (result.rooms.join[roomId] ??= {
                state: { events: [] },
                timeline: { events: [], limited: false, prev_batch: `s${to.events}` },
                ephemeral: { events: [] },
                account_data: { events: [] },
            });
        },
    };
}
/** Runs every provider once over (since, now]; returns the context and whether anything was added. */
export async function collectOnce(s, r, req, since) {
    const ctx = newContext(s, r, req, since, await s.sync.currentToken(s));
    let added = false;
    for (const p of s.sync.providers())
        if (await p.collect(ctx, since?.[p.stream], ctx.to[p.stream]))
            added = true;
    for (const d of s.sync.decorators)
        await d(ctx);
    return { ctx, added };
}
export async function sync(s, r, req) {
    const since = req.since !== undefined ? parseSyncToken(req.since) : undefined;
    // Spec: without `set_presence` the client is marked online by syncing.
    const setPresence = req.setPresence ?? "online";
    if (!["online", "offline", "unavailable"].includes(setPresence))
        throw new MatrixError("M_INVALID_PARAM", "set_presence must be online, offline or unavailable", 400);
    for (const set of s.extensions.presenceSetters)
        await set(s, r, setPresence);
    const deadline = Date.now() + Math.min(Math.max(req.timeoutMs, 0), MAX_SYNC_TIMEOUT_MS);
    let signals;
    const abortSignals = () => (signals ??= [s.sync.shutdownSignal, ...(req.signal ? [typeof req.signal === "function" ? req.signal() : req.signal] : [])]);
    // Listening starts before the first read: a change committed while reading still wakes the wait.
    const waiter = new Waiter(s.rooms.notifier, r.userId);
    try {
        for (;;) {
            const { ctx, added } = await collectOnce(s, r, req, since);
            waiter.rooms = ctx.joinedRooms;
            const remaining = deadline - Date.now();
            if (added || since === undefined || req.fullState || remaining <= 0 || abortSignals().some((x) => x.aborted))
                return { next_batch: formatSyncToken(ctx.to), ...ctx.result };
            waiter.consumed(ctx.to);
            if (!(await waiter.until(ctx.to, remaining, abortSignals())))
                return { next_batch: formatSyncToken(ctx.to), ...ctx.result };
        }
    }
    finally {
        waiter.dispose();
    }
}
