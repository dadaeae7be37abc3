// Who may redact, in one place. In v1–2 the auth rules also check `m.room.redaction` events (rule 11);
// in every version `redactionTakesEffect` decides whether a redaction is applied to the event it names.
// It is called where a redaction takes effect: when it is stored (rooms/persist.ts via rooms/redactions.ts),
// when the redacted event is served (rooms/redactions.ts), and before a local user's redaction is built
// (rooms/send.ts: its 403). Spec: Room Versions v1 "Authorisation rules" rule 11, v3+ "Handling
// redactions"; Client-Server API "Redactions".
import { redactsOf } from "../events/redaction.js";
import { AuthContext, forbid, serverOf, stateMapKey } from "./context.js";
import { stateLevel, userPowerLevel } from "./power-levels.js";
/** v1–2 rule 11: redact level, or the redacted event's id has the redaction's event-id domain. */
export function checkRedactionEventV1(ctx) {
    const { event, version: v } = ctx;
    if (userPowerLevel(ctx, event.sender) >= stateLevel(ctx, "redact"))
        return;
    const target = redactsOf(event, v);
    if (typeof target === "string" && typeof event.event_id === "string" && serverOf(target) !== "" && serverOf(target) === serverOf(event.event_id)) {
        return;
    }
    forbid("redaction.power", "the sender's power level is below the redact level and the event is from another server");
}
/** The facts of a stored or received redaction event. */
export function redactionFacts(pdu, eventId, roomId, v) {
    return { type: pdu.type, sender: pdu.sender, isState: typeof pdu.state_key === "string", roomId, redacts: redactsOf(pdu, v), eventId };
}
/**
 * Does `redaction` take effect on `target`? Only a non-state m.room.redaction naming an event of its own
 * room does, and then when its sender sent that event, or has the redact level in the state the redaction
 * was authorised against (a later change of power levels neither grants nor revokes it). Without either,
 * a user of another server may still redact when their server vouches for it (as the spec's server-level
 * rule has it): v3+ when the sender's server is the original sender's, v1–2 when the event ids share a
 * domain (rule 11). This server's own users are held to their own events, as Synapse does. A redaction
 * whose target is unknown takes no effect (yet).
 */
export function redactionTakesEffect(c) {
    const { redaction: r, target, version: v } = c;
    if (r.type !== "m.room.redaction" || r.isState)
        return false;
    if (!target || r.redacts !== target.eventId || r.roomId !== target.roomId)
        return false;
    if (r.sender === target.sender)
        return true;
    const create = c.authState.get(stateMapKey("m.room.create", "")) ?? c.createEvent;
    if (create) {
        const ctx = new AuthContext(create, c.authState, v, { createEvent: c.createEvent });
        if (userPowerLevel(ctx, r.sender) >= stateLevel(ctx, "redact"))
            return true;
    }
    if (serverOf(r.sender) === c.localServer)
        return false;
    if (v.redactionAuthInRules)
        return r.eventId !== undefined && serverOf(r.eventId) !== "" && serverOf(r.eventId) === serverOf(target.eventId);
    return serverOf(r.sender) === serverOf(target.sender);
}
