// Reading an event's relation (Client-Server API "Forming relationships between events"): content
// `m.relates_to` with a string `rel_type` and `event_id`. A reply that only has `m.in_reply_to` is no
// relation. Annotations (m.annotation) carry their `key`. A rel_type or event_id carrying NUL makes no
// relation, and a key carrying NUL no key (they are indexed in columns: src/domain/text.ts).
import { isPlainObject } from "../events/types.js";
import { hasNul, indexableText } from "../text.js";
export function relationOf(pdu) {
    const rel = isPlainObject(pdu.content) ? pdu.content["m.relates_to"] : undefined;
    if (!isPlainObject(rel))
        return undefined;
    const { rel_type: relType, event_id: eventId } = rel;
    if (typeof relType !== "string" || relType === "" || typeof eventId !== "string" || !eventId.startsWith("$"))
        return undefined;
    if (hasNul(relType) || hasNul(eventId))
        return undefined;
    const key = relType === "m.annotation" ? (indexableText(rel.key) ?? undefined) : undefined;
    return { relType, eventId, ...(key !== undefined ? { key } : {}) };
}
