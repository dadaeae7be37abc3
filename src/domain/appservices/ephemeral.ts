// Ephemeral data for application services that asked for it (receive_ephemeral, or MSC2409's
// push_ephemeral): typing, read receipts and presence of rooms and users they are interested in, and
// to-device messages for their users (MSC2409/MSC4203, with to_user_id and to_device_id). The feed
// listens to the notifier's streams (after their positions are persisted) and appends to the services'
// persistent queues, in order. Like Synapse, typing and presence are dropped for a service that is
// backing off (they would be stale when it returns); receipts and to-device messages wait for it.
// Spec: Application Service API "Pushing ephemeral data".
import type { Services } from "../services.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";
import type { StreamNotice } from "../rooms/notifier.ts";
import type { BackgroundTask } from "../extensions.ts";
import type { QueueItem } from "../store/appservice-queue.ts";
import { isAppServiceUser } from "../accounts/appservices.ts";
import { presenceEvent } from "../presence/presence.ts";
import { receiptContent } from "../sync/providers/receipts.ts";
import { reachableServices, RoomInterest, wantsPresence } from "./interest.ts";
import { wantsEphemeral } from "./transaction-body.ts";

type Item = { as: AppServiceRegistration; content: unknown; kind: "ephemeral" | "to_device" };

async function typing(s: Services, services: AppServiceRegistration[], n: StreamNotice): Promise<Item[]> {
  const roomIds = n.roomIds ?? [];
  const rooms = await RoomInterest.load(s, roomIds);
  const out: Item[] = [];
  for (const roomId of roomIds) {
    const content = { type: "m.typing", room_id: roomId, content: { user_ids: s.typing.typingIn(roomId) } };
    for (const as of services) if (rooms.interested(as, roomId)) out.push({ as, content, kind: "ephemeral" });
  }
  return out;
}

async function receipts(s: Services, services: AppServiceRegistration[], n: StreamNotice): Promise<Item[]> {
  // Private receipts (their notices name users, not rooms) are for their owner alone: never sent.
  const roomIds = n.roomIds ?? [];
  if (roomIds.length === 0) return [];
  const rows = await s.receipts.inRooms(roomIds, n.position - 1, n.position, "");
  const rooms = await RoomInterest.load(s, roomIds);
  const out: Item[] = [];
  for (const roomId of roomIds) {
    const mine = rows.filter((r) => r.roomId === roomId && r.receiptType === "m.read");
    if (mine.length === 0) continue;
    const content = { type: "m.receipt", room_id: roomId, content: receiptContent(mine) };
    for (const as of services) if (rooms.interested(as, roomId)) out.push({ as, content, kind: "ephemeral" });
  }
  return out;
}

async function presence(s: Services, services: AppServiceRegistration[], n: StreamNotice): Promise<Item[]> {
  const out: Item[] = [];
  const now = s.clock.now();
  for (const row of await s.presence.changed(n.position - 1, n.position)) {
    const roomIds = await s.rooms.store.roomsOfUser(row.userId, "join");
    const rooms = await RoomInterest.load(s, roomIds);
    const content = presenceEvent(row, now);
    for (const as of services) if (wantsPresence(s, as, row.userId, roomIds, rooms)) out.push({ as, content, kind: "ephemeral" });
  }
  return out;
}

async function toDevice(s: Services, services: AppServiceRegistration[], n: StreamNotice): Promise<Item[]> {
  const out: Item[] = [];
  for (const m of await s.e2ee.toDeviceAt([n.position])) {
    const content = { type: m.type, sender: m.sender, content: JSON.parse(m.content) as unknown, to_user_id: m.recipientUserId, to_device_id: m.recipientDeviceId };
    for (const as of services) if (isAppServiceUser(s.config, as, m.recipientUserId)) out.push({ as, content, kind: "to_device" });
  }
  return out;
}

const READERS: Partial<Record<StreamNotice["stream"], (s: Services, services: AppServiceRegistration[], n: StreamNotice) => Promise<Item[]>>> = {
  typing,
  receipts,
  presence,
  to_device: toDevice,
};

/** Transient kinds a service that is backing off does not get. */
const DROPPED_WHILE_DOWN = new Set(["typing", "presence"]);

async function handle(s: Services, services: AppServiceRegistration[], n: StreamNotice): Promise<void> {
  const read = READERS[n.stream];
  if (!read) return;
  const listening = DROPPED_WHILE_DOWN.has(n.stream) ? services.filter((as) => !s.appservices.senders.status(as.id)?.backingOff) : services;
  if (listening.length === 0) return;
  const items = await read(s, listening, n);
  if (items.length === 0) return;
  const rows: QueueItem[] = items.map((i) => ({ serviceId: i.as.id, kind: i.kind, content: JSON.stringify(i.content) }));
  await s.storage.sql.transaction((tx) => s.appservices.queue.enqueue(tx, rows));
  s.appservices.senders.wake(new Set(items.map((i) => i.as.id)));
}

/** The feed, as a background task: notices are handled one at a time, in the order they came. */
export const appServiceEphemeral: BackgroundTask = (s) => {
  const services = reachableServices(s).filter(wantsEphemeral);
  if (services.length === 0) return () => {};
  let chain = Promise.resolve();
  const off = s.rooms.notifier.onStream((n) => {
    if (!READERS[n.stream]) return;
    chain = chain.then(() => handle(s, services, n)).catch((err) => s.log.warn({ err, stream: n.stream }, "ephemeral data for application services failed"));
  });
  return async () => {
    off();
    await chain;
  };
};
