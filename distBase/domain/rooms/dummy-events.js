import { appendEvent } from "./append.js";
import { loadRoom } from "./room-cache.js";
export const DUMMY_EVENT_TYPE = "org.matrix.dummy_event";
export const mergeForwardExtremities = (s, c) => {
    if (!c.snapshot || c.snapshot.extremities.length <= s.config.dummy_events_threshold)
        return;
    // A dummy event's own commit leaves one extremity: it never triggers another.
    sendDummyEvent(s, c.notice.roomId).catch((err) => s.log.warn({ err, roomId: c.notice.roomId }, "could not send a dummy event to merge forward extremities"));
};
async function sendDummyEvent(s, roomId) {
    const room = await loadRoom(s, roomId);
    if (!room || room.extremities.length <= s.config.dummy_events_threshold)
        return;
    const local = `:${s.config.server_name}`;
    const members = (await s.rooms.store.joinedMembersOf([roomId])).get(roomId) ?? [];
    for (const sender of members.filter((u) => u.endsWith(local))) {
        try {
            await appendEvent(s, roomId, { type: DUMMY_EVENT_TYPE, sender, content: {} });
            return;
        }
        catch (err) {
            // This member may not send (power levels): try the next one.
            s.log.debug({ err, roomId, sender }, "dummy event refused for this sender");
        }
    }
}
