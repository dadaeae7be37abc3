// Reading an event's relation (Client-Server API "Forming relationships between events"): content
// `m.relates_to` with a string `rel_type` and `event_id`. A reply that only has `m.in_reply_to` is no
// relation. Annotations (m.annotation) carry their `key`.
import { isPlainObject, type Pdu } from "../events/types.ts";

export interface Relation {
  relType: string;
  eventId: string;
  /** m.annotation's key, else undefined. */
  key?: string;
}

export function relationOf(pdu: Pick<Pdu, "content">): Relation | undefined {
  const rel = isPlainObject(pdu.content) ? pdu.content["m.relates_to"] : undefined;
  if (!isPlainObject(rel)) return undefined;
  const { rel_type: relType, event_id: eventId } = rel;
  if (typeof relType !== "string" || relType === "" || typeof eventId !== "string" || !eventId.startsWith("$")) return undefined;
  const key = relType === "m.annotation" && typeof rel.key === "string" ? rel.key : undefined;
  return { relType, eventId, ...(key !== undefined ? { key } : {}) };
}
