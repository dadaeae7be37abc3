import { LocalPlanner } from "./pipeline/plan-local.js";
import { commit } from "./pipeline/commit.js";
export { authorizeEvent } from "./pipeline/checks.js";
/**
 * Builds, authorizes and persists `drafts` in order on top of `room` (the caller holds the room's lane),
 * all or nothing. `room` may be a room being created: then its first item is the (already built) create event.
 */
export async function persistDrafts(s, room, drafts, opts = {}) {
    const planner = new LocalPlanner(s, room);
    for (const [i, d] of drafts.entries())
        await planner.add(d, i === drafts.length - 1 ? opts.txn : undefined);
    return commit(s, planner.plan(opts.alsoWrite));
}
/**
 * Group commit: builds and authorizes each item on its own (a refused item fails alone), then commits
 * every accepted one in a single transaction (`open`: one the caller opened, with positions allocated).
 * Returns, per item, its stored event or its error.
 */
export async function persistEach(s, room, items, open) {
    const planner = new LocalPlanner(s, room);
    const results = [];
    for (const item of items) {
        try {
            await planner.add(item.draft, item.txn);
            results.push(planner.events.length - 1);
        }
        catch (err) {
            results.push(err);
        }
    }
    if (planner.events.length === 0)
        return results;
    const stored = await commit(s, planner.plan(), open);
    return results.map((r) => (typeof r === "number" ? stored[r] : r));
}
