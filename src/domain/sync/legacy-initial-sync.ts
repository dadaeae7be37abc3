// GET /initialSync and GET /rooms/{roomId}/initialSync (spec: Client-Server API "Legacy endpoints"): each
// room's visibility, messages, state and latest account data, presence and receipts, from the /sync
// providers, in the legacy format (legacy-format.ts). Like /sync, a call marks the user online.
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseSyncFilter } from "../filters/sync-filter.ts";
import { getMessages, getRoomState, streamToken } from "../rooms/read.ts";
import { readAccess } from "../rooms/read-access.ts";
import { SyncReads } from "../store/sync-reads.ts";
import { collectOnce } from "./sync.ts";
import { formatSyncToken } from "./token.ts";
import type { JsonObject } from "./types.ts";
import { receiptContent } from "./providers/receipts.ts";
import { legacyEvent, legacyPresence, presenceOfUsers } from "./legacy-format.ts";

type Json = Record<string, unknown>;

/** The current state from the state at the timeline's start plus the timeline's state events. */
function currentStateOf(state: JsonObject[], timeline: JsonObject[]): JsonObject[] {
  const byKey = new Map<string, JsonObject>();
  for (const e of [...state, ...timeline]) if (typeof e.state_key === "string") byKey.set(`${String(e.type)}\u0000${e.state_key}`, e);
  return [...byKey.values()];
}

/** Account data events, the latest of each type only (they come oldest first). */
function latestOfEachType(events: readonly JsonObject[]): JsonObject[] {
  const byType = new Map<unknown, JsonObject>();
  for (const e of events) {
    byType.delete(e.type);
    byType.set(e.type, e);
  }
  return [...byType.values()];
}

/** Marks the caller online, as /sync does when it is called (a guest's presence is never set). */
async function syncing(s: Services, r: Requester): Promise<void> {
  for (const set of s.extensions.presenceSetters) await set(s, r, "online");
}

export async function legacyInitialSync(s: Services, r: Requester, opts: { limit?: number; archived?: boolean }): Promise<Json> {
  await syncing(s, r);
  const filter = parseSyncFilter({ room: { include_leave: opts.archived ?? false, timeline: { limit: opts.limit ?? 10 } } });
  const { ctx } = await collectOnce(s, r, { timeoutMs: 0, fullState: true, filter }, undefined);
  const reads = new SyncReads(s.storage.sql);
  const memberships = new Map((await reads.membershipsOf(r.userId)).map((m) => [m.roomId, m.membership]));
  const res = ctx.result;
  const listed = [...Object.keys(res.rooms.join), ...Object.keys(res.rooms.leave), ...Object.keys(res.rooms.invite)];
  const published = await reads.publicRoomIds(listed);
  const visibility = (roomId: string) => (published.has(roomId) ? "public" : "private");
  const rooms: Json[] = [];
  for (const [roomId, room] of [...Object.entries(res.rooms.join), ...Object.entries(res.rooms.leave)]) {
    const timeline = room.timeline.events.map((e) => legacyEvent(e, roomId));
    rooms.push({
      room_id: roomId,
      membership: memberships.get(roomId) ?? "join",
      visibility: visibility(roomId),
      messages: { chunk: timeline, start: room.timeline.prev_batch, end: `s${ctx.to.events}` },
      state: currentStateOf(room.state.events.map((e) => legacyEvent(e, roomId)), timeline),
      account_data: latestOfEachType(room.account_data.events),
    });
  }
  for (const [roomId, room] of Object.entries(res.rooms.invite)) {
    const found = room.invite_state.events.find((e) => typeof e.event_id === "string");
    const invite = found ? legacyEvent(found, roomId) : undefined;
    rooms.push({
      room_id: roomId,
      membership: "invite",
      visibility: visibility(roomId),
      ...(invite ? { invite, inviter: invite.sender } : {}),
      messages: { chunk: [], end: `s${ctx.to.events}` },
      state: [],
    });
  }
  // Synapse's extra field: every joined room's receipts as m.receipt events with their room_id.
  const receipts = Object.entries(res.rooms.join).flatMap(([roomId, room]) => room.ephemeral.events.filter((e) => e.type === "m.receipt").map((e) => ({ ...e, room_id: roomId })));
  // The user's own presence is always there (offline when never set, e.g. a guest's).
  const presence = res.presence.events.map(legacyPresence);
  if (!presence.some((p) => p.sender === r.userId)) presence.push(...(await presenceOfUsers(s, [r.userId])));
  // m.push_rules is no account data here (as Synapse's: legacy clients read /pushrules/).
  const accountData = latestOfEachType(res.account_data.events.filter((e) => e.type !== "m.push_rules"));
  return { end: formatSyncToken(ctx.to), rooms, presence, receipts, account_data: accountData };
}

export async function roomInitialSync(s: Services, r: Requester, roomId: string, opts: { limit?: number } = {}): Promise<Json> {
  const access = await readAccess(s, r, roomId);
  await syncing(s, r);
  // Read up to the token `end` gives, so that /events from it misses nothing and repeats nothing.
  const now = await s.sync.currentToken(s);
  const current = access.upTo === undefined;
  const messages = await getMessages(s, r, roomId, { dir: "b", limit: opts.limit ?? 10, filter: {}, ...(current ? { from: streamToken(now.events) } : {}) });
  const chunk = [...messages.chunk].reverse().map((e) => legacyEvent(e as unknown as JsonObject));
  const room = await s.rooms.store.getRoom(roomId);
  const accountData = await s.accountData.changed(r.userId, undefined, Number.MAX_SAFE_INTEGER, s.config.experimental_features.msc3391_enabled);
  // Members and peekers (as Synapse, a world_readable room's) see its members' presence and receipts.
  const departed = access.membership === "leave" || access.membership === "ban";
  return {
    room_id: roomId,
    ...(access.membership ? { membership: access.membership } : {}),
    messages: { chunk, start: messages.end ?? messages.start, end: current ? formatSyncToken(now) : messages.start },
    state: (await getRoomState(s, r, roomId)).map((e) => legacyEvent(e as unknown as JsonObject)),
    visibility: room?.isPublic ? "public" : "private",
    account_data: latestOfEachType(accountData.filter((a) => a.roomId === roomId).map((a) => ({ type: a.type, content: a.content }))),
    ...(await roomEphemeral(s, r, roomId, !departed)),
  };
}

/** The presence of a room's joined members (offline when never set) and its receipts (m.receipt with room_id), when `shown`. */
async function roomEphemeral(s: Services, r: Requester, roomId: string, shown: boolean): Promise<{ presence: JsonObject[]; receipts: JsonObject[] }> {
  if (!shown) return { presence: [], receipts: [] };
  const members = (await s.rooms.store.membersOf(roomId)).filter((m) => m.membership === "join").map((m) => m.userId);
  const presence = await presenceOfUsers(s, members);
  const rows = await s.receipts.inRooms([roomId], undefined, Number.MAX_SAFE_INTEGER, r.userId);
  return { presence, receipts: rows.length > 0 ? [{ type: "m.receipt", room_id: roomId, content: receiptContent(rows) }] : [] };
}
