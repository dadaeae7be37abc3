// The body of POST /_matrix/push/v1/notify (spec: Push Gateway API) for one notification of one pusher:
// the event's id (also as the legacy `id`, as Synapse sends it), room, type, sender (a member event's
// `membership` and `user_is_target`), the sender's display name and the room's name, its content (unless
// the pusher's format is `event_id_only`, or push.include_content is off), prio (`high` for encrypted
// events and when the actions sound or highlight, as Synapse), counts.unread, and the device: app_id,
// pushkey, pushkey_ts in seconds, the pusher's data without `url`, and the tweaks of the actions. Also
// the badge-only body sent when the user reads. counts.unread follows Synapse: invites plus rooms with
// unread notifications (or their notifications, with push.group_unread_count_by_room off).
import type { Services } from "../../services.ts";
import type { StoredEvent } from "../../store/events.ts";
import type { PusherRow } from "../../store/pushers.ts";
import type { NotificationRow } from "../../store/push-notifications.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import { redactEvent } from "../../events/redaction.ts";
import { total } from "../counts.ts";
import { tweaksOf, type PushAction } from "../rule-types.ts";

function device(p: PusherRow, tweaks?: Record<string, unknown>): Record<string, unknown> {
  const { url: _url, ...data } = p.data;
  return { app_id: p.appId, pushkey: p.pushkey, pushkey_ts: Math.floor(p.pushkeyTs / 1000), data, ...(tweaks && Object.keys(tweaks).length > 0 ? { tweaks } : {}) };
}

/** The user's badge: invites plus rooms with unread notifications (or the notifications themselves). */
export async function badgeCount(s: Services, userId: string): Promise<number> {
  const [joined, invited] = await Promise.all([s.rooms.store.roomsOfUser(userId, "join"), s.rooms.store.roomsOfUser(userId, "invite")]);
  const counts = await s.push.counts.get(s, userId, joined);
  let badge = invited.length;
  for (const roomId of joined) {
    const n = total(counts.get(roomId)).notifications;
    if (n > 0) badge += s.config.push.group_unread_count_by_room ? 1 : n;
  }
  return badge;
}

async function stateContent(s: Services, roomId: string, type: string, stateKey: string): Promise<Record<string, unknown> | undefined> {
  const room = await loadRoom(s, roomId);
  const id = room?.state.get(stateKeyOf(type, stateKey));
  return id ? (await s.rooms.events.get(id))?.pdu.content : undefined;
}

export async function notifyBody(s: Services, p: PusherRow, n: NotificationRow, event: StoredEvent, badge: number): Promise<Record<string, unknown>> {
  const actions = JSON.parse(n.actions) as PushAction[];
  const tweaks = tweaksOf(actions);
  const pdu = event.pdu;
  const prio = pdu.type === "m.room.encrypted" || tweaks.highlight || tweaks.sound ? "high" : "low";
  if (p.data.format === "event_id_only")
    return { notification: { event_id: event.eventId, room_id: event.roomId, prio, counts: { unread: badge }, devices: [device(p)] } };
  // `id` is the event id under its legacy name, beside `event_id`: Synapse still sends it and gateways in
  // the field read it.
  const notification: Record<string, unknown> = { id: event.eventId, event_id: event.eventId, room_id: event.roomId, type: pdu.type, sender: pdu.sender, prio, counts: { unread: badge } };
  if (pdu.type === "m.room.member" && pdu.state_key !== undefined) {
    // The membership as Synapse adds it (an invite's push says it is one).
    if (typeof pdu.content.membership === "string") notification.membership = pdu.content.membership;
    notification.user_is_target = pdu.state_key === p.userId;
  }
  const redacted = (await s.rooms.events.redactionsOf([event.eventId])).size > 0;
  const room = await loadRoom(s, event.roomId);
  const content = redacted && room ? redactEvent(pdu, room.version).content : pdu.content;
  if (s.config.push.include_content && Object.keys(content).length > 0) notification.content = content;
  const member = await stateContent(s, event.roomId, "m.room.member", pdu.sender);
  if (typeof member?.displayname === "string" && member.displayname !== "") notification.sender_display_name = member.displayname;
  const name = (await stateContent(s, event.roomId, "m.room.name", ""))?.name;
  const alias = (await stateContent(s, event.roomId, "m.room.canonical_alias", ""))?.alias;
  if (typeof name === "string" && name !== "") notification.room_name = name;
  else if (typeof alias === "string" && alias !== "") notification.room_name = alias;
  notification.devices = [device(p, tweaks)];
  return { notification };
}

/** A counts-only notification (the user read something: their badge changed). */
export function badgeBody(p: PusherRow, badge: number): Record<string, unknown> {
  return { notification: { counts: { unread: badge }, devices: [device(p)] } };
}
