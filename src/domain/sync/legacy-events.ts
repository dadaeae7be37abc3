// GET /events (spec: Client-Server API "Legacy endpoints"): long-poll for new events in the user's rooms,
// built on the same providers, tokens and waiter as /sync.
import type { Services } from "../services.ts";
import { MatrixError } from "../errors.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseSyncFilter } from "../filters/sync-filter.ts";
import { collectOnce, MAX_SYNC_TIMEOUT_MS } from "./sync.ts";
import { formatSyncToken, parseSyncToken } from "./token.ts";
import { Waiter, type Cancel } from "./wait.ts";
import type { JsonObject, SyncContext } from "./types.ts";
import { legacyPresence } from "./legacy-format.ts";

type Json = Record<string, unknown>;

const withRoom = (roomId: string) => (e: JsonObject) => ({ ...e, room_id: roomId });

/**
 * Everything /sync would deliver between two tokens, as one flat list of legacy events: room events
 * (with room_id), the user's invites, typing and receipts (m.typing / m.receipt with room_id), room
 * account data and tags (with room_id), global account data and presence.
 */
function flatten(res: SyncContext["result"]): JsonObject[] {
  const out: JsonObject[] = [];
  for (const [roomId, room] of Object.entries(res.rooms.join)) {
    out.push(...room.timeline.events.map(withRoom(roomId)));
    out.push(...room.ephemeral.events.map(withRoom(roomId)));
    out.push(...room.account_data.events.map(withRoom(roomId)));
  }
  for (const [roomId, room] of Object.entries(res.rooms.leave)) out.push(...room.timeline.events.map(withRoom(roomId)));
  for (const [roomId, room] of Object.entries(res.rooms.invite)) {
    const invite = room.invite_state.events.find((e) => typeof e.event_id === "string");
    if (invite) out.push(withRoom(roomId)(invite));
  }
  out.push(...res.account_data.events);
  out.push(...res.presence.events.map(legacyPresence));
  return out;
}

/**
 * GET /events: what happened in the user's rooms and account after `from` (now when absent) — room
 * events, typing, receipts, account data, tags and presence — waiting up to `timeout` for something.
 * Read with the /sync providers; `limit` caps the events of each room.
 */
export async function legacyEvents(s: Services, r: Requester, opts: { from?: string; timeoutMs?: number; limit?: number; roomId?: string; cancel?: Cancel }): Promise<Json> {
  // As Synapse: a guest reads one room's events at a time.
  if (r.isGuest && opts.roomId === undefined) throw new MatrixError("M_UNKNOWN", "Guest users must specify room_id param", 400);
  const waiter = new Waiter(s.rooms.notifier, r.userId);
  try {
    const from = opts.from !== undefined ? parseSyncToken(opts.from, "from") : await s.sync.currentToken(s);
    const filter = parseSyncFilter({ room: { timeline: { limit: opts.limit ?? 100 }, ...(opts.roomId !== undefined ? { rooms: [opts.roomId] } : {}) } });
    const deadline = Date.now() + Math.min(Math.max(opts.timeoutMs ?? 0, 0), MAX_SYNC_TIMEOUT_MS);
    const cancels = [s.sync.shuttingDown, ...(opts.cancel ? [opts.cancel] : [])];
    for (;;) {
      const { ctx } = await collectOnce(s, r, { timeoutMs: 0, fullState: false, filter }, from);
      waiter.rooms = ctx.joinedRooms;
      const chunk = flatten(ctx.result).filter((e) => opts.roomId === undefined || e.room_id === opts.roomId);
      const answer = { start: formatSyncToken(from), end: formatSyncToken(ctx.to), chunk };
      if (chunk.length > 0 || Date.now() >= deadline || cancels.some((x) => x.aborted)) return answer;
      waiter.consumed(ctx.to);
      if (!(await waiter.until(ctx.to, deadline - Date.now(), cancels))) return { ...answer, chunk: [] };
    }
  } finally {
    waiter.dispose();
  }
}
