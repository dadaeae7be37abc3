// Sticky events kept inside the event commit (an in-transaction indexer, declared in src/main.ts with
// experimental_features.msc4354_enabled): each timeline event — local or received, not an outlier, rejected
// or soft-failed — whose `msc4354_sticky` makes it sticky and that is not already expired becomes a row of
// sticky_events at the next position of the sticky-events stream, waking the /sync of its room's members;
// a redaction that takes effect drops the redacted event's row (redaction removes stickiness). And a
// server whose first user joins a room is sent this server's unexpired sticky events of it (MSC4354 "When a
// new server joins the room, existing servers MUST attempt to push all of their own sticky events"; the
// federation sender's catch-up keeps them too: src/federation/sender). They are queued for it a moment after
// the join committed (JOINER_PUSH_DELAY_MS): a server joining through us is still storing our send_join
// answer when the join commits here, and drops what it is sent for a room it is not in yet. That queueing is
// in memory until it happens: a restart in between loses it (Synapse does not push to new servers at all).
// Spec: MSC4354 "Sticky Events" (Synapse's insert_sticky_events_txn).
import type { EventIndexer } from "../rooms/pipeline/commit.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import { serverOfUser } from "../federation/room-servers.ts";
import { stickyExpiry } from "./sticky.ts";

export const indexStickyEvents: EventIndexer = async (tx, s, { room, events, redactions }) => {
  const now = s.clock.now();
  const rows = [];
  for (const e of events) {
    const expiresAt = stickyExpiry(e.pdu, now);
    if (expiresAt === undefined || expiresAt <= now) continue;
    rows.push({ eventId: e.eventId, roomId: room.roomId, eventStreamOrdering: e.streamOrdering, sender: e.pdu.sender, expiresAt });
  }
  const top = await s.sticky.insert(tx, rows);
  if (redactions.size > 0) await s.sticky.remove(tx, [...redactions.values()]);
  if (top !== undefined) {
    tx.onSettled?.((committed) => {
      if (committed) s.rooms.notifier.notify({ stream: "sticky_events", position: top, roomIds: [room.roomId] });
    });
  }
  await pushToJoiningServers(tx, s, room.roomId, events, now);
};

/** Queues our unexpired sticky events of the room for each server whose first member joins in `events`. */
async function pushToJoiningServers(tx: SqlExecutor, s: Services, roomId: string, events: readonly StoredEvent[], now: number): Promise<void> {
  if (!s.config.send_federation) return;
  const joiners = new Map<string, Set<string>>();
  for (const e of events) {
    const p = e.pdu;
    if (p.type !== "m.room.member" || typeof p.state_key !== "string" || (p.content as { membership?: unknown }).membership !== "join") continue;
    const server = serverOfUser(p.state_key);
    if (!server || server === s.config.server_name) continue;
    let users = joiners.get(server);
    if (!users) joiners.set(server, (users = new Set()));
    users.add(p.state_key);
  }
  if (joiners.size === 0) return;
  const ours = (await s.sticky.unexpiredFrom(tx, roomId, s.config.server_name, now)).filter((r) => !events.some((e) => e.eventId === r.eventId));
  if (ours.length === 0) return;
  const destinations: string[] = [];
  for (const [server, users] of joiners) {
    // Already in the room through another member (memberships are up to date with this commit here).
    const joined = await tx.all<{ user_id: string }>(`SELECT user_id FROM room_memberships WHERE room_id = ? AND membership = 'join' AND user_id LIKE ? ESCAPE '\\'`, [roomId, `%:${server.replace(/[\\%_]/g, (c) => "\\" + c)}`]);
    if (joined.some((m) => !users.has(m.user_id) && serverOfUser(m.user_id) === server)) continue;
    destinations.push(server);
  }
  if (destinations.length === 0) return;
  tx.onSettled?.((committed) => {
    if (committed) setTimeout(() => void pushStickyEvents(s, roomId, destinations), JOINER_PUSH_DELAY_MS).unref();
  });
}

/** How long after a server's first join its queue is given our sticky events of the room. */
export const JOINER_PUSH_DELAY_MS = 2000;

/** Queues our unexpired sticky events of `roomId` for `destinations` and sends them. */
async function pushStickyEvents(s: Services, roomId: string, destinations: readonly string[]): Promise<void> {
  if (s.federationSender.stopped) return;
  try {
    const queued = await s.storage.sql.transaction(async (tx) => {
      const ours = await s.sticky.unexpiredFrom(tx, roomId, s.config.server_name, s.clock.now());
      if (ours.length > 0) await s.federationSender.store.enqueue(tx, destinations.flatMap((destination) => ours.map((r) => ({ destination, streamOrdering: r.eventStreamOrdering, roomId, eventId: r.eventId }))));
      return ours.length;
    });
    if (queued > 0) s.federationSender.wake(destinations);
  } catch (err) {
    s.log.warn({ err, roomId, destinations }, "sticky events: could not queue them for servers that joined");
  }
}
