import { loadRoom } from "../../rooms/room-cache.js";
import { stateKeyOf } from "../../store/state-groups.js";
import { redactEvent } from "../../events/redaction.js";
import { total } from "../counts.js";
import { tweaksOf } from "../rule-types.js";
function device(p, tweaks) {
    const { url: _url, ...data } = p.data;
    return { app_id: p.appId, pushkey: p.pushkey, pushkey_ts: Math.floor(p.pushkeyTs / 1000), data, ...(tweaks && Object.keys(tweaks).length > 0 ? { tweaks } : {}) };
}
/** The user's badge: invites plus rooms with unread notifications (or the notifications themselves). */
export async function badgeCount(s, userId) {
    const [joined, invited] = await Promise.all([s.rooms.store.roomsOfUser(userId, "join"), s.rooms.store.roomsOfUser(userId, "invite")]);
    const counts = await s.push.counts.get(s, userId, joined);
    let badge = invited.length;
    for (const roomId of joined) {
        const n = total(counts.get(roomId)).notifications;
        if (n > 0)
            badge += s.config.push.group_unread_count_by_room ? 1 : n;
    }
    return badge;
}
async function stateContent(s, roomId, type, stateKey) {
    const room = await loadRoom(s, roomId);
    const id = room?.state.get(stateKeyOf(type, stateKey));
    return id ? (await s.rooms.events.get(id))?.pdu.content : undefined;
}
export async function notifyBody(s, p, n, event, badge) {
    const actions = JSON.parse(n.actions);
    const tweaks = tweaksOf(actions);
    const pdu = event.pdu;
    const prio = pdu.type === "m.room.encrypted" || tweaks.highlight || tweaks.sound ? "high" : "low";
    if (p.data.format === "event_id_only")
        return { notification: { event_id: event.eventId, room_id: event.roomId, prio, counts: { unread: badge }, devices: [device(p)] } };
    const notification = { event_id: event.eventId, room_id: event.roomId, type: pdu.type, sender: pdu.sender, prio, counts: { unread: badge } };
    if (pdu.type === "m.room.member" && pdu.state_key !== undefined)
        notification.user_is_target = pdu.state_key === p.userId;
    const redacted = (await s.rooms.events.redactionsOf([event.eventId])).size > 0;
    const room = await loadRoom(s, event.roomId);
    const content = redacted && room ? redactEvent(pdu, room.version).content : pdu.content;
    if (s.config.push.include_content && Object.keys(content).length > 0)
        notification.content = content;
    const member = await stateContent(s, event.roomId, "m.room.member", pdu.sender);
    if (typeof member?.displayname === "string" && member.displayname !== "")
        notification.sender_display_name = member.displayname;
    const name = (await stateContent(s, event.roomId, "m.room.name", ""))?.name;
    const alias = (await stateContent(s, event.roomId, "m.room.canonical_alias", ""))?.alias;
    if (typeof name === "string" && name !== "")
        notification.room_name = name;
    else if (typeof alias === "string" && alias !== "")
        notification.room_name = alias;
    notification.devices = [device(p, tweaks)];
    return { notification };
}
/** A counts-only notification (the user read something: their badge changed). */
export function badgeBody(p, badge) {
    return { notification: { counts: { unread: badge }, devices: [device(p)] } };
}
