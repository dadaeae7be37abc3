import { authEventIds } from "../events/types.js";
import { authStateFromEvents, redactionFacts, redactionTakesEffect } from "../auth/index.js";
import { resolveRoomVersion } from "./room-versions.js";
/** v12 leaves the create event out of auth_events: its id is the room id with the `$` sigil. */
function createEventIdOf(roomId, v) {
    return v.roomIdIsCreateEventHash && roomId.startsWith("!") ? "$" + roomId.slice(1) : undefined;
}
/**
 * The redactions of a commit plan that record their target, as redaction id → target id: of the events
 * the planner marked as redactions (pipeline/plan.ts `redactionTarget`), those the rule
 * lets take effect, and those whose target this server does not have yet (the spec keeps them to check
 * when the target arrives; serving checks them then). `events` is the whole batch, in order: targets and
 * auth events may be among them. Other m.room.redaction events (state-keyed, refused) are stored as plain
 * events that redact nothing.
 */
export async function redactionsToRecord(s, room, events) {
    const out = new Map();
    // The planner already left out what can never redact (state-keyed, outlier, rejected, soft-failed).
    const redactions = events.filter((e) => e.redacts !== undefined);
    if (redactions.length === 0)
        return out;
    const inBatch = new Map(events.map((e) => [e.eventId, e.pdu]));
    const v = room.version;
    const wanted = new Set();
    for (const e of redactions) {
        const target = redactionFacts(e.pdu, e.eventId, room.roomId, v).redacts;
        if (target !== undefined)
            wanted.add(target);
        for (const id of authEventIds(e.pdu))
            wanted.add(id);
    }
    const stored = await s.rooms.events.getMany([...wanted].filter((id) => !inBatch.has(id)));
    const find = (id) => {
        const pdu = inBatch.get(id);
        if (pdu)
            return { pdu, roomId: room.roomId };
        return stored.get(id);
    };
    for (const e of redactions) {
        const facts = redactionFacts(e.pdu, e.eventId, room.roomId, v);
        if (facts.redacts === undefined)
            continue;
        const target = find(facts.redacts);
        if (!target) {
            out.set(e.eventId, facts.redacts);
            continue;
        }
        const auth = authEventIds(e.pdu).map(find).filter((x) => x !== undefined).map((x) => x.pdu);
        const applies = redactionTakesEffect({
            redaction: facts,
            target: { eventId: facts.redacts, roomId: target.roomId, sender: target.pdu.sender },
            authState: authStateFromEvents(auth),
            createEvent: room.createEvent,
            version: v,
            localServer: s.config.server_name,
        });
        if (applies)
            out.set(e.eventId, facts.redacts);
    }
    return out;
}
/**
 * The redaction that takes effect on each of `events` as they are served (the earliest that passes the
 * rule), by event id. Events without a recorded redaction cost nothing beyond the store's lookup.
 */
export async function effectiveRedactions(s, events, roomVersionOf) {
    const out = new Map();
    const recorded = await s.rooms.events.redactionsOf(events.map((e) => e.eventId));
    if (recorded.size === 0)
        return out;
    const redactions = await s.rooms.events.getMany([...recorded.values()].flat());
    const versions = new Map();
    for (const roomId of new Set([...redactions.values()].map((r) => r.roomId)))
        versions.set(roomId, resolveRoomVersion(await roomVersionOf(roomId)));
    // The auth events of every candidate redaction (and v12 create events) in one read.
    const authIds = new Set();
    for (const r of redactions.values()) {
        for (const id of authEventIds(r.pdu))
            authIds.add(id);
        const createId = createEventIdOf(r.roomId, versions.get(r.roomId));
        if (createId)
            authIds.add(createId);
    }
    const auth = await s.rooms.events.getMany(authIds);
    for (const e of events) {
        const candidates = (recorded.get(e.eventId) ?? [])
            .map((id) => redactions.get(id))
            .filter((r) => r !== undefined && r.rejectedReason === null)
            .sort((a, b) => a.streamOrdering - b.streamOrdering);
        for (const r of candidates) {
            const v = versions.get(r.roomId);
            const createId = createEventIdOf(r.roomId, v);
            const applies = redactionTakesEffect({
                redaction: redactionFacts(r.pdu, r.eventId, r.roomId, v),
                target: { eventId: e.eventId, roomId: e.roomId, sender: e.pdu.sender },
                authState: authStateFromEvents(authEventIds(r.pdu).map((id) => auth.get(id)?.pdu).filter((p) => p !== undefined)),
                createEvent: createId ? auth.get(createId)?.pdu : undefined,
                version: v,
                localServer: s.config.server_name,
            });
            if (applies) {
                out.set(e.eventId, r);
                break;
            }
        }
    }
    return out;
}
