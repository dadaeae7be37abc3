// Simplified sliding sync (MSC4186, POST /unstable/org.matrix.simplified_msc3575/sync, as Synapse serves
// it; what Element X speaks): one answer of a connection. It parses the request (sliding/request.ts),
// takes the connection's version named by `pos` (sliding/connections.ts: unknown → M_UNKNOWN_POS), builds
// the room list and its windows (sliding/room-list.ts), the rooms to send — those new to the connection,
// with activity or a membership change since it last had them, or whose config grew — and their data
// (sliding/room-data.ts), the extensions from the /sync providers (sliding/extensions.ts) and MSC4308's
// thread subscriptions, then records the connection's new version. With `pos` and `timeout`, an answer
// with nothing new waits on the notifier for the user's streams (and the thread-subscriptions feed), and
// is built again when one moves. `set_presence` as /sync's. Lists are answered with one SYNC operation
// per range (the room ids of the window) and the list's count.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { Canceller, Waiter, type Cancel } from "./wait.ts";
import { formatChanges, type ThreadSubscriptionUpdates } from "../threads/subscription-feed.ts";
import { newContext, MAX_SYNC_TIMEOUT_MS } from "./sync.ts";
import { DEFAULT_SYNC_FILTER } from "../filters/sync-filter.ts";
import type { SyncToken } from "./token.ts";
import type { JsonObject } from "./types.ts";
import { parseSlidingRequest, THREAD_SUBSCRIPTIONS_EXTENSION, addedState, type SlidingRequest } from "./sliding/request.ts";
import { computeRoomList, type RoomList } from "./sliding/room-list.ts";
import { roomOutcomes, type RoomPlan } from "./sliding/room-data.ts";
import { extensionsOutcome } from "./sliding/extensions.ts";
import { formatSlidingPos, parseSlidingPos } from "./sliding/pos.ts";
import type { ConnectionVersion, RoomSent } from "./sliding/connections.ts";

export { THREAD_SUBSCRIPTIONS_EXTENSION };

export interface SlidingSyncRequest {
  pos?: string;
  timeoutMs?: number;
  setPresence?: string;
  body: Record<string, unknown>;
  cancel?: Cancel;
}

export interface SlidingSyncResponse {
  pos: string;
  lists?: Record<string, unknown>;
  rooms: Record<string, JsonObject>;
  extensions: Record<string, unknown>;
}

export interface Built {
  response: SlidingSyncResponse;
  changed: boolean;
  sent: Map<string, RoomSent>;
  list: RoomList;
  to: SyncToken;
  threadTo: number;
}

/** Rooms of the list that have something for the connection (see the module comment). */
function roomsToSend(list: RoomList, prev: ConnectionVersion): RoomPlan[] {
  const plans: RoomPlan[] = [];
  for (const [roomId, config] of list.relevant) {
    const m = list.memberships.get(roomId)!;
    const had = prev.rooms.get(roomId);
    const activity = list.activity.get(roomId) ?? m.streamOrdering;
    const send =
      !had ||
      activity > had.upTo ||
      m.streamOrdering > had.upTo ||
      config.timelineLimit > had.config.timelineLimit ||
      addedState(had.config.requiredState, config.requiredState).length > 0;
    if (send) plans.push({ m, config, prev: had, isDm: list.dms.has(roomId) });
  }
  return plans;
}

/** One answer of the connection from `prev` (nothing recorded): also the GraphQL room list's (sliding/live.ts). */
export async function buildSlidingAnswer(s: Services, r: Requester, req: SlidingRequest, since: { token: SyncToken; threadSubscriptions: number } | undefined, prev: ConnectionVersion): Promise<Built> {
  const to = await s.sync.currentToken(s, since?.token);
  const threadStore = s.threadSubscriptions.store;
  const threadTo = await threadStore.currentPosition();
  const list = await computeRoomList(s, r, req, to.events, since?.token.events);
  // Activity is taken up to `to`: a room whose newest event is later waits for the next answer.
  const plans = roomsToSend(list, prev);
  const outcomes = await roomOutcomes(s, r, plans, to.events, since?.token.events);
  const rooms: Record<string, JsonObject> = {};
  const sent = new Map(prev.rooms);
  // Rooms of the windows and subscriptions with nothing new are up to date at `to` too.
  const planned = new Set(plans.map((p) => p.m.roomId));
  for (const [roomId, config] of list.relevant) {
    const had = sent.get(roomId);
    if (had && !planned.has(roomId)) sent.set(roomId, { ...had, upTo: to.events, config: had.config.timelineLimit >= config.timelineLimit ? had.config : config });
  }
  const initialRooms = new Map<string, Set<string>>();
  const timelines = new Map<string, Set<string>>();
  for (const [roomId, o] of outcomes) {
    sent.set(roomId, o.sent);
    if (!o.result && since !== undefined) continue;
    rooms[roomId] = o.result ?? { initial: true };
    const ids = new Set(((o.result?.timeline as JsonObject[] | undefined) ?? []).map((e) => e.event_id as string));
    timelines.set(roomId, ids);
    if (o.result?.initial) initialRooms.set(roomId, ids);
  }
  // Unread notification counts of the joined rooms sent, from the /sync decorators (push counts).
  const joinedSent = Object.keys(rooms).filter((id) => list.memberships.get(id)?.membership === "join");
  if (joinedSent.length > 0) {
    const ctx = newContext(s, r, { timeoutMs: 0, fullState: false, filter: DEFAULT_SYNC_FILTER }, undefined, to);
    for (const id of joinedSent) ctx.joinedRoom(id);
    for (const d of s.sync.decorators) await d(ctx);
    for (const id of joinedSent) {
      const counts = ctx.result.rooms.join[id]?.unread_notifications;
      if (counts) Object.assign(rooms[id]!, counts);
    }
  }
  const ext = await extensionsOutcome(s, r, req.extensions, list, since?.token, to, initialRooms, timelines);
  let changed = Object.keys(rooms).length > 0 || ext.changed;
  const extensions: Record<string, unknown> = ext.json;
  if (ext.toDevice !== undefined) to.to_device = Math.max(to.to_device, ext.toDevice);
  const threads = req.extensions.threadSubscriptions;
  if (threads && threads.limit > 0) {
    const changes = await threadStore.changes(r.userId, since?.threadSubscriptions ?? 0, threadTo, threads.limit);
    if (changes.length > 0) {
      const out: ThreadSubscriptionUpdates & { prev_batch?: string } = formatChanges(changes);
      if (changes.length === threads.limit) out.prev_batch = `ts${changes[0]!.streamId - 1}`;
      extensions[THREAD_SUBSCRIPTIONS_EXTENSION] = out;
      changed = true;
    }
  }
  const response: SlidingSyncResponse = { pos: "", rooms, extensions };
  if (list.lists.size > 0) response.lists = Object.fromEntries(list.lists);
  return { response, changed, sent, list, to, threadTo };
}

export async function slidingSync(s: Services, r: Requester, req: SlidingSyncRequest): Promise<SlidingSyncResponse> {
  const since = req.pos !== undefined ? parseSlidingPos(req.pos) : undefined;
  const body = parseSlidingRequest(req.body);
  const setPresence = req.setPresence ?? "online";
  if (!["online", "offline", "unavailable"].includes(setPresence)) throw new MatrixError("M_INVALID_PARAM", "set_presence must be online, offline or unavailable", 400);
  const now = await s.sync.currentToken(s, since?.token);
  if (since && (since.token.events > now.events || since.threadSubscriptions > (await s.threadSubscriptions.store.currentPosition()))) throw new MatrixError("M_INVALID_PARAM", "pos is ahead of the server", 400);
  const prev = s.sync.sliding.start(r.userId, r.deviceId, body.connId, since?.connection);
  for (const set of s.extensions.presenceSetters) await set(s, r, setPresence as "online" | "offline" | "unavailable");
  const deadline = Date.now() + Math.min(req.timeoutMs ?? 0, MAX_SYNC_TIMEOUT_MS);
  const cancels = [s.sync.shuttingDown, ...(req.cancel ? [req.cancel] : [])];
  // Listening starts before the first read: a change committed while building still wakes the wait.
  const waiter = new Waiter(s.rooms.notifier, r.userId);
  const threadWatch = s.threadSubscriptions.feed.watch(r.userId);
  try {
    for (;;) {
      const built = await buildSlidingAnswer(s, r, body, since, prev);
      const remaining = deadline - Date.now();
      if (built.changed || since === undefined || remaining <= 0 || cancels.some((c) => c.aborted)) {
        const connection = s.sync.sliding.record(r.userId, r.deviceId, body.connId, prev, built.sent);
        built.response.pos = formatSlidingPos({ connection, token: built.to, threadSubscriptions: built.threadTo });
        return built.response;
      }
      // Wake for any of the user's rooms (a new event reorders the list) and the rooms served.
      waiter.rooms = new Set([...(await s.sync.streamCache.joinedRoomIds(s, r.userId)), ...built.list.relevant.keys()]);
      waiter.consumed(built.to);
      // Whichever wait ends first ends the other.
      const either = new Canceller();
      await Promise.race([
        waiter.until(built.to, remaining, [...cancels, either]),
        body.extensions.threadSubscriptions ? threadWatch.until(built.threadTo, remaining, [...cancels, either]) : new Promise<void>(() => {}),
      ]);
      either.abort();
    }
  } finally {
    waiter.dispose();
    threadWatch.dispose();
  }
}
