// Rooms of a space that live on other servers, for a local /hierarchy walk: asked of the servers an
// m.space.child names in `via` (GET /_matrix/federation/v1/hierarchy/{roomId}), the answer checked entry by
// entry — a remote server is untrusted, so only well-typed summaries pass, and a `room` for another room
// than the one asked is none. The children it summarises are remembered for the walk (not asked again),
// and each answer for five minutes, at most 1,000 of them (as Synapse's get_room_hierarchy_cache).
// Whether our user may see a remote room is Synapse's rule for remote rooms: public, knockable or
// world_readable, joined or invited, or restricted through a room the user is joined to.
// Spec: Server-Server API "Spaces" (GET /hierarchy/{roomId}); Client-Server API "Spaces" (GET /hierarchy).
import type { Services } from "../services.ts";
import { isPlainObject } from "../events/types.ts";
import { isValidRoomId, isValidUserId } from "../ids.ts";
import { fedPath } from "../../federation/client.ts";
import { candidateServers } from "../federation/membership/handshake.ts";
import { str, type HierarchyRoom } from "./hierarchy.ts";
import { shownSummaryField } from "../rooms/summary-fields.ts";

/** String fields taken from a summary, each only when it has its format (shownSummaryField). */
const STRING_FIELDS = ["name", "topic", "canonical_alias", "avatar_url", "room_type", "encryption"] as const;
/** Most children of one answer taken, and most children_state entries of one room. */
const MAX_CHILDREN = 50;
const MAX_CHILDREN_STATE = 100;
/** Servers tried for one room. */
const MAX_SERVERS = 3;

/** A summary from another server, or undefined when it is not one. */
export function summaryOf(v: unknown): HierarchyRoom | undefined {
  if (!isPlainObject(v) || typeof v.room_id !== "string" || !isValidRoomId(v.room_id)) return undefined;
  if (!Number.isSafeInteger(v.num_joined_members) || (v.num_joined_members as number) < 0) return undefined;
  const children = Array.isArray(v.children_state) ? v.children_state.slice(0, MAX_CHILDREN_STATE) : [];
  const out: HierarchyRoom = {
    room_id: v.room_id,
    num_joined_members: v.num_joined_members as number,
    world_readable: v.world_readable === true,
    guest_can_join: v.guest_can_join === true,
    join_rule: str(v.join_rule) ?? "public",
    room_version: str(v.room_version) ?? "",
    children_state: children
      .filter((e): e is Record<string, unknown> => isPlainObject(e) && e.type === "m.space.child" && typeof e.state_key === "string" && isPlainObject(e.content) && typeof e.sender === "string" && isValidUserId(e.sender) && Number.isSafeInteger(e.origin_server_ts))
      .map((e) => ({ type: "m.space.child", state_key: e.state_key as string, content: e.content as Record<string, unknown>, sender: e.sender as string, origin_server_ts: e.origin_server_ts as number })),
  };
  if (out.room_version === "") delete (out as Partial<HierarchyRoom>).room_version;
  for (const f of STRING_FIELDS) {
    const value = shownSummaryField(f, v[f]);
    if (value !== undefined) out[f] = value;
  }
  if (Array.isArray(v.allowed_room_ids)) out.allowed_room_ids = v.allowed_room_ids.filter((x): x is string => typeof x === "string" && isValidRoomId(x)).slice(0, MAX_CHILDREN);
  return out;
}

export interface RemoteSummary {
  room: HierarchyRoom;
  children: HierarchyRoom[];
}

/** How long a remote room's answer is reused, and how many are kept (Synapse's get_room_hierarchy_cache). */
const CACHE_MS = 5 * 60_000;
const CACHE_SIZE = 1000;

function answersOf(s: Services) {
  return s.caches.get<string, { at: number; summary: RemoteSummary }>("remote_room_hierarchy", CACHE_SIZE);
}

/**
 * The summary of `roomId` (and of its children) from the first of `via` that answers one; undefined when
 * none does. An answer is reused for a while (paging a local /hierarchy does not ask again for each page);
 * failures are not remembered.
 */
export async function fetchRemoteSummary(s: Services, roomId: string, via: readonly string[], suggestedOnly: boolean): Promise<RemoteSummary | undefined> {
  const cache = answersOf(s);
  const key = `${suggestedOnly ? "s" : "a"}${roomId}`;
  const hit = cache.get(key);
  if (hit && s.clock.now() - hit.at < CACHE_MS) return hit.summary;
  const summary = await askRemoteSummary(s, roomId, via, suggestedOnly);
  if (summary) cache.set(key, { at: s.clock.now(), summary });
  return summary;
}

async function askRemoteSummary(s: Services, roomId: string, via: readonly string[], suggestedOnly: boolean): Promise<RemoteSummary | undefined> {
  for (const server of candidateServers(s, via).slice(0, MAX_SERVERS)) {
    let answer: unknown;
    try {
      answer = await s.federation.getJson(server, fedPath`/_matrix/federation/v1/hierarchy/${roomId}`, { suggested_only: String(suggestedOnly) }, { maxBytes: 1024 * 1024 });
    } catch (err) {
      s.log.info({ server, roomId, err: (err as Error).message }, "could not read a room's hierarchy from this server");
      continue;
    }
    if (!isPlainObject(answer)) continue;
    const room = summaryOf(answer.room);
    if (!room || room.room_id !== roomId) continue;
    const children = (Array.isArray(answer.children) ? answer.children.slice(0, MAX_CHILDREN) : []).map(summaryOf).filter((c): c is HierarchyRoom => c !== undefined && c.room_id !== roomId);
    return { room, children };
  }
  return undefined;
}

/** May the user (with `membership` of the room, and `joinedTo` telling their joined rooms) see this remote room? */
export function remoteRoomVisible(room: HierarchyRoom, membership: string | undefined, joinedTo: (roomId: string) => boolean): boolean {
  if (room.join_rule === "public" || room.join_rule === "knock" || room.join_rule === "knock_restricted" || room.world_readable) return true;
  if (membership === "join" || membership === "invite") return true;
  if (room.join_rule === "restricted") return (room.allowed_room_ids ?? []).some(joinedTo);
  return false;
}
