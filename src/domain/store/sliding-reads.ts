// Batch reads of simplified sliding sync (src/domain/sync/sliding): for many rooms at once, the position
// of each room's newest timeline event (the list's activity order), of its newest event of a few types
// (bump_stamp), and the content of a few current state entries (what the list filters read: the create
// event's type, encryption, the name; a space's children). One query per 400 rooms, each room's part
// one step down an index (room_id, stream_ordering) or a lookup in current_state_events by its key.
import type { Param, Sql } from "../../storage/sql.ts";
import { IN_TIMELINE_SQL } from "./events.ts";
import { chunks, marks } from "./in-lists.ts";


export class SlidingReads {
  constructor(private readonly sql: Sql) {}

  /** Per room, the position of its newest timeline event at or below `upTo` (of `types` only, when given). */
  async lastPositions(roomIds: readonly string[], upTo: number, types?: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const typed = types && types.length > 0 ? ` AND e.type IN (${marks(types.length)})` : "";
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; pos: number | string | null }>(
        `SELECT r.room_id, (SELECT e.stream_ordering FROM events e WHERE e.room_id = r.room_id AND ${IN_TIMELINE_SQL}${typed}
                            AND e.stream_ordering <= ? ORDER BY e.stream_ordering DESC LIMIT 1) AS pos
         FROM rooms r WHERE r.room_id IN (${marks(chunk.length)})`,
        [...(types && types.length > 0 ? types : []), upTo, ...chunk] as Param[],
      );
      for (const r of rows) if (r.pos !== null) out.set(r.room_id, Number(r.pos));
    }
    return out;
  }

  /** Per room, the content of its current state events of `types` with an empty state key: room → type → content. */
  async currentContents(roomIds: readonly string[], types: readonly string[]): Promise<Map<string, Map<string, Record<string, unknown>>>> {
    const out = new Map<string, Map<string, Record<string, unknown>>>();
    for (const chunk of chunks(roomIds)) {
      const rows = await this.sql.all<{ room_id: string; type: string; json: string }>(
        `SELECT c.room_id, c.type, e.json FROM current_state_events c JOIN events e ON e.event_id = c.event_id
         WHERE c.room_id IN (${marks(chunk.length)}) AND c.type IN (${marks(types.length)}) AND c.state_key = ?`,
        [...chunk, ...types, ""] as Param[],
      );
      for (const r of rows) {
        let m = out.get(r.room_id);
        if (!m) out.set(r.room_id, (m = new Map()));
        const content = (JSON.parse(r.json) as { content?: unknown }).content;
        m.set(r.type, content && typeof content === "object" ? (content as Record<string, unknown>) : {});
      }
    }
    return out;
  }

  /** The rooms named as children of these spaces: current `m.space.child` entries with a non-empty `via`. */
  async spaceChildren(spaceIds: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const chunk of chunks(spaceIds)) {
      const rows = await this.sql.all<{ state_key: string; json: string }>(
        `SELECT c.state_key, e.json FROM current_state_events c JOIN events e ON e.event_id = c.event_id WHERE c.room_id IN (${marks(chunk.length)}) AND c.type = ?`,
        [...chunk, "m.space.child"] as Param[],
      );
      for (const r of rows) {
        const via = (JSON.parse(r.json) as { content?: { via?: unknown } }).content?.via;
        if (Array.isArray(via) && via.length > 0) out.add(r.state_key);
      }
    }
    return out;
  }
}
