import { roomVersionLookup, serializeEvents } from "../rooms/serialize.js";
export function wantsEphemeral(as) {
    return as.receive_ephemeral || as.push_ephemeral_unstable;
}
export async function transactionBody(s, as, rows) {
    const eventIds = rows.filter((r) => r.kind === "event").map((r) => r.eventId);
    const found = await s.rooms.events.getMany(eventIds);
    const events = eventIds.map((id) => found.get(id)).filter((e) => e !== undefined);
    const body = { events: await serializeEvents(s, undefined, roomVersionLookup(s), events) };
    if (!wantsEphemeral(as))
        return body;
    const parse = (kind) => rows.filter((r) => r.kind === kind).map((r) => JSON.parse(r.content));
    const ephemeral = parse("ephemeral");
    if (as.receive_ephemeral)
        body.ephemeral = ephemeral;
    if (as.push_ephemeral_unstable)
        body["de.sorunome.msc2409.ephemeral"] = ephemeral;
    body["de.sorunome.msc2409.to_device"] = parse("to_device");
    return body;
}
