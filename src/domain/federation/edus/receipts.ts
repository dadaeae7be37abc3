// Read receipts over federation (Server-Server API "Receipts", m.receipt EDUs). Outbound: local users'
// public `m.read` receipts — never `m.read.private` — read from the receipts stream as it moves and handed
// to the remote servers of each room, where the sender packs them per room (one receipt per room, type
// and user in an EDU, so threads go apart). Inbound: a remote server's m.read receipts for its own users
// who are joined to the room (in a room joined with partial state: of a server its join named) are stored
// in the receipts stream (the newer one kept, as for local ones), so local /sync and the GraphQL
// `receipts` subscription show them.
import { serverAllowedInState } from "../server-acl.ts";
import { inPartialStateRoom } from "../partial-state/flag.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import type { Services } from "../../services.ts";
import type { BackgroundTask } from "../../extensions.ts";
import type { EduHandler } from "../edu.ts";
import { isValidEventId, tryParseRoomId } from "../../ids.ts";
import { remoteServersInRoom, serverOfUser } from "../room-servers.ts";
import type { ReceiptItem } from "../../../federation/sender/edu-buffer.ts";

/** Most receipts taken from one EDU (an EDU is one server's batch: hundreds at most in practice). */
const MAX_RECEIPTS_PER_EDU = 1000;
const MAX_EVENT_IDS = 10;
/** Synapse's limit on identifiers (event ids among them). */
const MAX_EVENT_ID_LEN = 255;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Local m.read receipts to the remote servers of their rooms (declared in src/main.ts, `background`). */
export const receiptsToFederation: BackgroundTask = (s) => {
  let last: number | undefined;
  let target = 0;
  const rooms = new Set<string>();
  let running = false;
  let stopped = false;

  const flush = async () => {
    while (!stopped && last !== undefined && rooms.size > 0 && target > last) {
      const batch = [...rooms];
      rooms.clear();
      const upTo = target;
      // The viewer "" sees every m.read and nobody's private receipt.
      const rows = await s.receipts.inRooms(batch, last, upTo, "");
      last = upTo;
      const byRoom = new Map<string, ReceiptItem[]>();
      for (const r of rows) {
        if (r.receiptType !== "m.read" || serverOfUser(r.userId) !== s.config.server_name) continue;
        const list = byRoom.get(r.roomId) ?? [];
        list.push({ roomId: r.roomId, receiptType: r.receiptType, userId: r.userId, threadId: r.threadId, eventId: r.eventId, ts: r.ts });
        byRoom.set(r.roomId, list);
      }
      for (const [roomId, items] of byRoom) {
        const destinations = await remoteServersInRoom(s, roomId);
        if (destinations.length > 0) s.federationSender.sendReceipts(destinations, items);
      }
    }
  };
  const kick = () => {
    if (running || last === undefined) return;
    running = true;
    flush()
      .catch((err: unknown) => s.log.warn({ err }, "could not send receipts over federation"))
      .finally(() => {
        running = false;
        if (rooms.size > 0 && last !== undefined && target > last) kick();
      });
  };
  const off = s.rooms.notifier.onStream((n) => {
    // Public receipts name their room; a private one only its owner (and stays home).
    if (n.stream !== "receipts" || !n.roomIds) return;
    for (const r of n.roomIds) rooms.add(r);
    target = Math.max(target, n.position);
    kick();
  });
  Promise.resolve(s.receipts.currentPosition())
    .then((p) => {
      last = p; // receipts are written once the server serves requests, after this
      kick();
    })
    .catch((err: unknown) => s.log.warn({ err }, "receipts stream position unreadable"));
  return () => {
    stopped = true;
    off();
  };
};

interface Candidate {
  roomId: string;
  userId: string;
  eventIds: string[];
  threadId: string;
  ts: number;
}

/** The candidates of an m.receipt content: well-formed m.read receipts of the origin's own users. */
function parseReceipts(s: Services, origin: string, content: unknown): Candidate[] {
  const out: Candidate[] = [];
  if (!isObject(content)) return out;
  for (const [roomId, byType] of Object.entries(content)) {
    if (!tryParseRoomId(roomId) || !isObject(byType)) continue;
    // Only public read receipts travel; anything else (m.read.private, unknown types) is ignored.
    const byUser = byType["m.read"];
    if (!isObject(byUser)) continue;
    for (const [userId, receipt] of Object.entries(byUser)) {
      if (out.length >= MAX_RECEIPTS_PER_EDU) return out;
      if (serverOfUser(userId) !== origin) {
        s.log.info({ origin, userId }, "m.receipt for a user of another server dropped");
        continue;
      }
      if (!isObject(receipt) || !Array.isArray(receipt.event_ids)) continue;
      // As Synapse, the ids are taken as given (an event we do not know, or of an odd form, included).
      const eventIds = receipt.event_ids.slice(0, MAX_EVENT_IDS).filter((id): id is string => typeof id === "string" && id.length > 0 && id.length <= MAX_EVENT_ID_LEN);
      if (eventIds.length === 0) continue;
      const data = isObject(receipt.data) ? receipt.data : {};
      const ts = typeof data.ts === "number" && Number.isSafeInteger(data.ts) && data.ts >= 0 ? data.ts : s.clock.now();
      const thread = data.thread_id;
      if (thread !== undefined && (typeof thread !== "string" || (thread !== "main" && !isValidEventId(thread)))) continue;
      out.push({ roomId, userId, eventIds, threadId: thread ?? "", ts });
    }
  }
  return out;
}

/** Inbound m.receipt (declared in src/main.ts, `eduHandlers`). */
export const receiptEduHandler: EduHandler = {
  type: "m.receipt",
  async handle(s: Services, origin: string, content: unknown): Promise<void> {
    const candidates = parseReceipts(s, origin, content);
    if (candidates.length === 0) return;
    // Only users joined to the room speak in it: one read for every user of the EDU.
    const users = [...new Set(candidates.map((c) => c.userId))];
    const joined = new Set<string>();
    for (let i = 0; i < users.length; i += 500) {
      const chunk = users.slice(i, i + 500);
      const rows = await s.storage.sql.all<{ room_id: string; user_id: string }>(
        `SELECT room_id, user_id FROM room_memberships WHERE membership = 'join' AND user_id IN (${chunk.map(() => "?").join(",")})`,
        chunk,
      );
      for (const r of rows) joined.add(`${r.room_id}\u0000${r.user_id}`);
    }
    // Rooms whose server ACL denies the origin take none of its receipts; in a room joined with partial
    // state (members unknown), the users of a server its join named speak in it (as Synapse).
    const denied = new Set<string>();
    const partial = new Set<string>();
    for (const roomId of new Set(candidates.map((c) => c.roomId))) {
      const room = await loadRoom(s, roomId);
      if (room && !(await serverAllowedInState(s, room.state, origin))) denied.add(roomId);
      else if (await inPartialStateRoom(s, roomId, origin)) partial.add(roomId);
    }
    const accepted = candidates.filter((c) => (joined.has(`${c.roomId}\u0000${c.userId}`) || partial.has(c.roomId)) && !denied.has(c.roomId));
    if (accepted.length === 0) return;
    const events = await s.rooms.events.getMany(accepted.flatMap((c) => c.eventIds));
    for (const c of accepted) {
      // Of several events, the latest we know of; an event of another room is no receipt for this one.
      const known = c.eventIds.map((id) => events.get(id)).filter((e) => e !== undefined);
      if (known.some((e) => e.roomId !== c.roomId)) continue;
      const latest = known.sort((a, b) => b.streamOrdering - a.streamOrdering)[0];
      const eventId = latest?.eventId ?? c.eventIds[0]!;
      const pos = await s.receipts.put({ roomId: c.roomId, receiptType: "m.read", userId: c.userId, threadId: c.threadId, eventId, ts: c.ts }, async (existing) => {
        if (existing.eventId === eventId) return true;
        const old = await s.rooms.events.get(existing.eventId);
        return old !== undefined && latest !== undefined && old.streamOrdering > latest.streamOrdering;
      });
      if (pos !== undefined) s.rooms.notifier.notify({ stream: "receipts", position: pos, roomIds: [c.roomId] });
    }
  },
};
