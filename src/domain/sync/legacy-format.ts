// The events of the legacy reads (/initialSync, /rooms/{roomId}/initialSync, /events; spec: Client-Server
// API "Legacy endpoints") in Synapse's client format v1: `user_id` (the sender), `age` and the like beside
// `unsigned`; presence with the user id in its content, `offline` for a user never seen.
import type { Services } from "../services.ts";
import { presenceEvent } from "../presence/presence.ts";
import type { JsonObject } from "./types.ts";

const COPIED_FROM_UNSIGNED = ["age", "redacted_because", "replaces_state", "prev_content"] as const;

/** A client-format event as the legacy endpoints send it, with `room_id` when given. */
export function legacyEvent(e: JsonObject, roomId?: string): JsonObject {
  const out: JsonObject = { ...e };
  if (roomId !== undefined) out.room_id = roomId;
  if (typeof e.sender === "string") out.user_id = e.sender;
  const unsigned = e.unsigned as JsonObject | undefined;
  if (unsigned) for (const key of COPIED_FROM_UNSIGNED) if (unsigned[key] !== undefined) out[key] = unsigned[key];
  return out;
}

/** Presence as the legacy endpoints send it: the user id in the content too (as Synapse), `sender` kept (the spec's m.presence). */
export function legacyPresence(e: JsonObject): JsonObject {
  const content = (e.content ?? {}) as JsonObject;
  return { type: "m.presence", sender: e.sender, content: { ...content, user_id: e.sender } };
}

/**
 * The current presence of these users as legacy events, one each: a user with no presence yet reads
 * `offline` (as Synapse's). Nothing with `use_presence: false`.
 */
export async function presenceOfUsers(s: Services, userIds: readonly string[]): Promise<JsonObject[]> {
  if (!s.config.use_presence || userIds.length === 0) return [];
  const now = s.clock.now();
  const rows = new Map((await s.presence.ofUsers(userIds, undefined, Number.MAX_SAFE_INTEGER)).map((p) => [p.userId, p]));
  return userIds.map((userId) => {
    const row = rows.get(userId);
    return legacyPresence(row ? presenceEvent(row, now) : { type: "m.presence", sender: userId, content: { presence: "offline" } });
  });
}
