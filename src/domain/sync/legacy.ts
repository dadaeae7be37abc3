// The deprecated reads the spec still defines (Client-Server API "Legacy endpoints"): GET /initialSync
// (every room with its latest messages, state and account data), GET /rooms/{roomId}/initialSync (one
// room), and GET /events (long-poll for new events in the user's rooms). Built on the same providers,
// tokens and waiter as /sync.
import type { Services } from "../services.ts";
import { MatrixError } from "../errors.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseSyncFilter } from "../filters/sync-filter.ts";
import { getMessages, getRoomState } from "../rooms/read.ts";
import { readAccess } from "../rooms/read-access.ts";
import { SyncReads } from "../store/sync-reads.ts";
import { collectOnce, MAX_SYNC_TIMEOUT_MS } from "./sync.ts";
import { formatSyncToken, parseSyncToken } from "./token.ts";
import { Waiter, type Cancel } from "./wait.ts";
import type { JsonObject, SyncContext } from "./types.ts";
import { receiptContent } from "./providers/receipts.ts";
import { presenceEvent } from "../presence/presence.ts";

type Json = Record<string, unknown>;

/** The current state from the state at the timeline's start plus the timeline's state events. */
function currentStateOf(state: JsonObject[], timeline: JsonObject[]): JsonObject[] {
  const byKey = new Map<string, JsonObject>();
  for (const e of [...state, ...timeline]) if (typeof e.state_key === "string") byKey.set(`${String(e.type)}\u0000${e.state_key}`, e);
  return [...byKey.values()];
}

const withRoom = (roomId: string) => (e: JsonObject) => ({ ...e, room_id: roomId });

export async function legacyInitialSync(s: Services, r: Requester, opts: { limit?: number; archived?: boolean }): Promise<Json> {
  const filter = parseSyncFilter({ room: { include_leave: opts.archived ?? false, timeline: { limit: opts.limit ?? 10 } } });
  const { ctx } = await collectOnce(s, r, { timeoutMs: 0, fullState: true, filter }, undefined);
  const memberships = new Map((await new SyncReads(s.storage.sql).membershipsOf(r.userId)).map((m) => [m.roomId, m.membership]));
  const rooms: Json[] = [];
  const res = ctx.result;
  for (const [roomId, room] of [...Object.entries(res.rooms.join), ...Object.entries(res.rooms.leave)]) {
    const timeline = room.timeline.events.map(withRoom(roomId));
    rooms.push({
      room_id: roomId,
      membership: memberships.get(roomId) ?? "join",
      messages: { chunk: timeline, start: room.timeline.prev_batch, end: `s${ctx.to.events}` },
      state: currentStateOf(room.state.events.map(withRoom(roomId)), timeline),
      account_data: room.account_data.events,
    });
  }
  for (const [roomId, room] of Object.entries(res.rooms.invite)) {
    const events = room.invite_state.events;
    const invite = events.find((e) => typeof e.event_id === "string");
    rooms.push({ room_id: roomId, membership: "invite", ...(invite ? { invite } : {}), messages: { chunk: [], end: `s${ctx.to.events}` }, state: [] });
  }
  // Synapse's extra field: every joined room's receipts as m.receipt events with their room_id.
  const receipts = Object.entries(res.rooms.join).flatMap(([roomId, room]) => room.ephemeral.events.filter((e) => e.type === "m.receipt").map(withRoom(roomId)));
  return { end: formatSyncToken(ctx.to), rooms, presence: res.presence.events.map(legacyPresence), receipts, account_data: res.account_data.events };
}

export async function roomInitialSync(s: Services, r: Requester, roomId: string, opts: { limit?: number } = {}): Promise<Json> {
  const access = await readAccess(s, r, roomId);
  const messages = await getMessages(s, r, roomId, { dir: "b", limit: opts.limit ?? 10, filter: {} });
  const chunk = [...messages.chunk].reverse();
  const room = await s.rooms.store.getRoom(roomId);
  const accountData = await s.accountData.changed(r.userId, undefined, Number.MAX_SAFE_INTEGER);
  return {
    room_id: roomId,
    ...(access.membership ? { membership: access.membership } : {}),
    messages: { chunk, start: messages.end ?? messages.start, end: messages.start },
    state: await getRoomState(s, r, roomId),
    visibility: room?.isPublic ? "public" : "private",
    account_data: accountData.filter((a) => a.roomId === roomId).map((a) => ({ type: a.type, content: a.content })),
    ...(await roomEphemeral(s, r, roomId, access.membership === "join")),
  };
}

/** The presence of a room's joined members and its receipts (m.receipt with room_id), for its members only. */
async function roomEphemeral(s: Services, r: Requester, roomId: string, joined: boolean): Promise<{ presence: JsonObject[]; receipts: JsonObject[] }> {
  if (!joined) return { presence: [], receipts: [] };
  const members = (await s.rooms.store.membersOf(roomId)).filter((m) => m.membership === "join").map((m) => m.userId);
  const now = s.clock.now();
  const presence = s.config.use_presence ? (await s.presence.ofUsers(members, undefined, Number.MAX_SAFE_INTEGER)).map((p) => legacyPresence(presenceEvent(p, now))) : [];
  const rows = await s.receipts.inRooms([roomId], undefined, Number.MAX_SAFE_INTEGER, r.userId);
  return { presence, receipts: rows.length > 0 ? [{ type: "m.receipt", room_id: roomId, content: receiptContent(rows) }] : [] };
}

/** Presence as the legacy endpoints send it: the user id in the content too (as Synapse), `sender` kept (the spec's m.presence). */
function legacyPresence(e: JsonObject): JsonObject {
  const content = (e.content ?? {}) as JsonObject;
  return { type: "m.presence", sender: e.sender, content: { ...content, user_id: e.sender } };
}

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
