import { isAppServiceUser } from "../accounts/appservices.js";
import { presenceEvent } from "../presence/presence.js";
import { receiptContent } from "../sync/providers/receipts.js";
import { reachableServices, RoomInterest, wantsPresence } from "./interest.js";
import { wantsEphemeral } from "./transaction-body.js";
async function typing(s, services, n) {
    const roomIds = n.roomIds ?? [];
    const rooms = await RoomInterest.load(s, roomIds);
    const out = [];
    for (const roomId of roomIds) {
        const content = { type: "m.typing", room_id: roomId, content: { user_ids: s.typing.typingIn(roomId) } };
        for (const as of services)
            if (rooms.interested(as, roomId))
                out.push({ as, content, kind: "ephemeral" });
    }
    return out;
}
async function receipts(s, services, n) {
    // Private receipts (their notices name users, not rooms) are for their owner alone: never sent.
    const roomIds = n.roomIds ?? [];
    if (roomIds.length === 0)
        return [];
    const rows = await s.receipts.inRooms(roomIds, n.position - 1, n.position, "");
    const rooms = await RoomInterest.load(s, roomIds);
    const out = [];
    for (const roomId of roomIds) {
        const mine = rows.filter((r) => r.roomId === roomId && r.receiptType === "m.read");
        if (mine.length === 0)
            continue;
        const content = { type: "m.receipt", room_id: roomId, content: receiptContent(mine) };
        for (const as of services)
            if (rooms.interested(as, roomId))
                out.push({ as, content, kind: "ephemeral" });
    }
    return out;
}
async function presence(s, services, n) {
    const out = [];
    const now = s.clock.now();
    for (const row of await s.presence.changed(n.position - 1, n.position)) {
        const roomIds = await s.rooms.store.roomsOfUser(row.userId, "join");
        const rooms = await RoomInterest.load(s, roomIds);
        const content = presenceEvent(row, now);
        for (const as of services)
            if (wantsPresence(s, as, row.userId, roomIds, rooms))
                out.push({ as, content, kind: "ephemeral" });
    }
    return out;
}
async function toDevice(s, services, n) {
    const out = [];
    for (const m of await s.e2ee.toDeviceAt([n.position])) {
        const content = { type: m.type, sender: m.sender, content: JSON.parse(m.content), to_user_id: m.recipientUserId, to_device_id: m.recipientDeviceId };
        for (const as of services)
            if (isAppServiceUser(s.config, as, m.recipientUserId))
                out.push({ as, content, kind: "to_device" });
    }
    return out;
}
const READERS = {
    typing,
    receipts,
    presence,
    to_device: toDevice,
};
/** Transient kinds a service that is backing off does not get. */
const DROPPED_WHILE_DOWN = new Set(["typing", "presence"]);
async function handle(s, services, n) {
    const read = READERS[n.stream];
    if (!read)
        return;
    const listening = DROPPED_WHILE_DOWN.has(n.stream) ? services.filter((as) => !s.appservices.senders.status(as.id)?.backingOff) : services;
    if (listening.length === 0)
        return;
    const items = await read(s, listening, n);
    if (items.length === 0)
        return;
    const rows = items.map((i) => ({ serviceId: i.as.id, kind: i.kind, content: JSON.stringify(i.content) }));
    await s.storage.sql.transaction((tx) => s.appservices.queue.enqueue(tx, rows));
    s.appservices.senders.wake(new Set(items.map((i) => i.as.id)));
}
/** The feed, as a background task: notices are handled one at a time, in the order they came. */
export const appServiceEphemeral = (s) => {
    const services = reachableServices(s).filter(wantsEphemeral);
    if (services.length === 0)
        return () => { };
    let chain = Promise.resolve();
    const off = s.rooms.notifier.onStream((n) => {
        if (!READERS[n.stream])
            return;
        chain = chain.then(() => handle(s, services, n)).catch((err) => s.log.warn({ err, stream: n.stream }, "ephemeral data for application services failed"));
    });
    return async () => {
        off();
        await chain;
    };
};
