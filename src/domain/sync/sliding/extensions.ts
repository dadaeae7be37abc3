// The extensions of simplified sliding sync, each served by the /sync stream provider that owns its data
// (src/domain/sync/providers): to_device (MSC3885: the device's messages after the `since` it names, which
// acknowledges those before; `next_batch` to name next time), e2ee (MSC3884: one-time key counts and
// unused fallback key types always, device-list changes since the connection's position), account_data
// (MSC3959: global — the push rules' m.push_rules among it, as Synapse — and per room for the rooms in scope), receipts (MSC3960) and typing (MSC3961) for the
// rooms in scope — the rooms of the lists named (by key, "*" for all) and of the subscriptions named
// ("*" for all). A room the connection gets for the first time (initial) gets its receipts on its
// timeline's events and the user's own, whatever the position. The thread-subscriptions extension
// (MSC4308) is its own feed's (src/domain/threads/subscription-feed.ts); the sticky-events one (MSC4354) reads
// the sticky-events store with its own `since` (sticky-extension.ts).
import type { Services } from "../../services.ts";
import type { Requester } from "../../accounts/requester.ts";
import { DEFAULT_SYNC_FILTER } from "../../filters/sync-filter.ts";
import { newContext } from "../sync.ts";
import type { SyncToken } from "../token.ts";
import type { JsonObject, SyncContext } from "../types.ts";
import type { StreamName } from "../../rooms/notifier.ts";
import { WILDCARD, type ExtensionScope, type SlidingExtensions } from "./request.ts";
import type { RoomList } from "./room-list.ts";
import { stickyEventsExtension } from "./sticky-extension.ts";
import { STICKY_EVENTS_EXTENSION } from "./request.ts";

export interface ExtensionsOutcome {
  json: JsonObject;
  /** Something new for the client (what ends a long poll): not the key counts sent every time. */
  changed: boolean;
  /** The to-device position delivered up to (next_batch). */
  toDevice?: number;
}

/** The rooms a per-room extension covers. */
function scoped(scope: ExtensionScope, list: RoomList): Set<string> {
  const out = new Set<string>();
  for (const [key, ids] of list.windows) if (scope.lists.includes(WILDCARD) || scope.lists.includes(key)) for (const id of ids) out.add(id);
  for (const id of list.subscribed) if (scope.rooms.includes(WILDCARD) || scope.rooms.includes(id)) out.add(id);
  return out;
}

async function run(s: Services, r: Requester, stream: StreamName, rooms: Iterable<string>, since: SyncToken | undefined, to: SyncToken, from: number | undefined): Promise<SyncContext> {
  const ctx = newContext(s, r, { timeoutMs: 0, fullState: false, filter: DEFAULT_SYNC_FILTER }, since, { ...to });
  for (const id of rooms) ctx.joinedRooms.add(id);
  const provider = s.sync.providers().find((p) => p.stream === stream);
  if (provider) await provider.collect(ctx, from, to[stream]);
  return ctx;
}

/** Per-room ephemeral events of one type from a provider's result: room id → the event. */
function ephemeral(ctx: SyncContext, type: string): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [roomId, room] of Object.entries(ctx.result.rooms.join)) {
    const e = room.ephemeral.events.find((x) => x.type === type);
    if (e) out[roomId] = e;
  }
  return out;
}

export async function extensionsOutcome(
  s: Services,
  r: Requester,
  ext: SlidingExtensions,
  list: RoomList,
  since: SyncToken | undefined,
  to: SyncToken,
  initialRooms: ReadonlyMap<string, ReadonlySet<string>>,
  /** The timeline event ids of every room this answer sends. */
  timelines: ReadonlyMap<string, ReadonlySet<string>> = initialRooms,
): Promise<ExtensionsOutcome> {
  const json: JsonObject = {};
  let changed = false;
  let toDevice: number | undefined;
  const joinedOnly = (ids: Set<string>) => [...ids].filter((id) => list.memberships.get(id)?.membership === "join");

  if (ext.toDevice) {
    // The position is the extension's own `since`, kept by the client across connections.
    const from = ext.toDevice.since;
    const ctx = await run(s, r, "to_device", [], { ...to, to_device: from ?? 0 }, to, from);
    const events = ctx.result.to_device?.events ?? [];
    toDevice = ctx.to.to_device;
    json.to_device = { next_batch: String(toDevice), events };
    if (events.length > 0) changed = true;
  }
  if (ext.e2ee) {
    const ctx = await run(s, r, "device_lists", [], since, to, since?.device_lists);
    const e2ee: JsonObject = {
      device_one_time_keys_count: ctx.result.device_one_time_keys_count ?? {},
      device_unused_fallback_key_types: ctx.result.device_unused_fallback_key_types ?? [],
    };
    if (since !== undefined) {
      const lists = ctx.result.device_lists ?? { changed: [], left: [] };
      e2ee.device_lists = lists;
      if (lists.changed.length > 0 || lists.left.length > 0) changed = true;
    }
    json.e2ee = e2ee;
  }
  if (ext.accountData) {
    const rooms = joinedOnly(scoped(ext.accountData, list));
    const ctx = await run(s, r, "account_data", rooms, since, to, since?.account_data);
    // The push rules are global account data too (m.push_rules): on a first answer, and when they changed.
    const rules = await run(s, r, "push_rules", [], since, to, since?.push_rules);
    const global = [...ctx.result.account_data.events, ...rules.result.account_data.events];
    const perRoom: Record<string, JsonObject[]> = {};
    for (const [roomId, room] of Object.entries(ctx.result.rooms.join)) if (room.account_data.events.length > 0) perRoom[roomId] = room.account_data.events;
    json.account_data = { global, rooms: perRoom };
    if (global.length > 0 || Object.keys(perRoom).length > 0) changed = true;
  }
  if (ext.receipts) {
    const rooms = joinedOnly(scoped(ext.receipts, list));
    const live = rooms.filter((id) => !initialRooms.has(id));
    const ctx = await run(s, r, "receipts", live, since, to, since?.receipts);
    const out = ephemeral(ctx, "m.receipt");
    // Rooms new to the connection: the receipts on the events of their timeline, and the user's own.
    const fresh = rooms.filter((id) => initialRooms.has(id));
    if (fresh.length > 0) {
      const all = await run(s, r, "receipts", fresh, undefined, to, undefined);
      for (const [roomId, e] of Object.entries(ephemeral(all, "m.receipt"))) {
        const shown = initialRooms.get(roomId)!;
        const content: Record<string, Record<string, Record<string, unknown>>> = {};
        for (const [eventId, byType] of Object.entries(e.content as Record<string, Record<string, Record<string, unknown>>>)) {
          for (const [type, byUser] of Object.entries(byType)) {
            for (const [userId, receipt] of Object.entries(byUser)) {
              if (!shown.has(eventId) && userId !== r.userId) continue;
              ((content[eventId] ??= {})[type] ??= {})[userId] = receipt;
            }
          }
        }
        if (Object.keys(content).length > 0) out[roomId] = { type: "m.receipt", content };
      }
    }
    json.receipts = { rooms: out };
    if (Object.keys(out).length > 0) changed = true;
  }
  if (ext.typing) {
    const rooms = joinedOnly(scoped(ext.typing, list));
    const ctx = await run(s, r, "typing", rooms, since, to, since?.typing);
    const out = ephemeral(ctx, "m.typing");
    json.typing = { rooms: out };
    if (Object.keys(out).length > 0) changed = true;
  }
  if (ext.stickyEvents && s.config.experimental_features.msc4354_enabled) {
    const out = await stickyEventsExtension(s, r, ext.stickyEvents, new Set(joinedOnly(new Set(list.relevant.keys()))), timelines, to.sticky_events);
    if (out) {
      json[STICKY_EVENTS_EXTENSION] = out;
      changed = true;
    }
  }
  return { json, changed, ...(toDevice !== undefined ? { toDevice } : {}) };
}
