/**
 * Stores an out-of-band member event and moves its target's membership to it. An event already stored is
 * left as it is (a retried invite): its stored form is returned.
 */
export function commitOutOfBandMembership(s, m) {
    const { roomId, pdu, eventId } = m;
    return s.rooms.lanes.run(roomId, async () => {
        const existing = await s.rooms.events.get(eventId);
        if (existing)
            return existing;
        const userId = pdu.state_key;
        const json = JSON.stringify(pdu);
        const content = pdu.content;
        return s.storage.sql.transaction(async (tx) => {
            await s.rooms.store.insertRoomIfAbsent(tx, { roomId, roomVersion: m.version.id, creator: pdu.sender, isPublic: false }, s.clock.now());
            const marks = { outlier: true, rejectedReason: null, softFailed: false };
            const streamOrdering = await s.rooms.events.insert(tx, { eventId, roomId, pdu, json, stateGroup: null, replacesState: null, prevEvents: [], ...marks });
            await s.rooms.store.upsertMembership(tx, {
                roomId,
                userId,
                membership: String(content.membership),
                eventId,
                sender: pdu.sender,
                displayname: typeof content.displayname === "string" ? content.displayname : null,
                avatarUrl: typeof content.avatar_url === "string" ? content.avatar_url : null,
                streamOrdering,
            });
            const stored = { eventId, roomId, streamOrdering, stateGroup: null, replacesState: null, ...marks, pdu, json };
            if (!tx.onSettled)
                throw new Error("events must be committed through sql.transaction (settle signal needed)");
            tx.onSettled((committed) => {
                if (committed)
                    s.commits.publish({ notice: { stream: "events", writer: s.instanceName, position: streamOrdering, roomId, eventIds: [eventId], outOfBandMembers: [userId] }, events: [stored] });
            });
            return stored;
        });
    });
}
