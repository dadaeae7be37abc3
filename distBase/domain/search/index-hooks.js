import { isStateEvent } from "../events/types.js";
/** The search keys of the spec and the event type each belongs to. */
export const SEARCH_KEYS = { "content.body": "m.room.message", "content.name": "m.room.name", "content.topic": "m.room.topic" };
/** The text an event contributes to the index, if any. */
export function searchableText(e) {
    const { pdu } = e;
    const content = pdu.content;
    let value;
    if (pdu.type === "m.room.message")
        value = content.body;
    else if ((pdu.type === "m.room.name" || pdu.type === "m.room.topic") && pdu.state_key === "")
        value = pdu.type === "m.room.name" ? content.name : content.topic;
    return typeof value === "string" && value.trim() !== "" ? value : undefined;
}
export const indexSearch = async (tx, s, { room, events, redactions }) => {
    const entries = [];
    const redacted = [...redactions.values()];
    for (const e of events) {
        const text = searchableText(e);
        if (text !== undefined)
            entries.push({ streamOrdering: e.streamOrdering, value: text });
        if (isStateEvent(e.pdu) && e.pdu.state_key === "") {
            const c = e.pdu.content;
            if (e.pdu.type === "m.room.join_rules")
                await s.userDirectory.setPublicity(tx, room.roomId, "join_rule", typeof c.join_rule === "string" ? c.join_rule : null);
            if (e.pdu.type === "m.room.history_visibility")
                await s.userDirectory.setPublicity(tx, room.roomId, "history_visibility", typeof c.history_visibility === "string" ? c.history_visibility : null);
        }
    }
    if (entries.length > 0)
        await s.search.index(tx, entries);
    if (redacted.length > 0)
        await s.search.remove(tx, room.roomId, redacted);
};
