// State groups (spec concept: "the state of the room at an event"): each event points at the group of
// the state after it. A group is a full snapshot, or a delta over a previous group; chains are capped so
// a read touches few groups, and resolved groups are cached.
import type { Sql, SqlExecutor } from "../../storage/sql.ts";
import { LruCache } from "../cache/lru.ts";
import { idAllocator, type IdAllocator } from "./ids.ts";

/** A state map: "type\u0000state_key" → event id (the key format of src/domain/auth's stateMapKey). */
export type StateMap = ReadonlyMap<string, string>;

const MAX_CHAIN = 50;

export function stateKeyOf(type: string, stateKey: string): string {
  return `${type}\u0000${stateKey}`;
}

export class StateGroupStore {
  readonly ids: IdAllocator;
  constructor(
    private readonly sql: Sql,
    private readonly cache: LruCache<number, StateMap>,
    /** Chain length per group (read from storage when not here). */
    private readonly chainLength: LruCache<number, number> = new LruCache("state_group_chain_lengths", 50_000),
  ) {
    this.ids = idAllocator(sql, "state_groups", "id", "state_group_id_seq");
  }

  /**
   * Stores the state `full` for `eventId` as a delta over `prev` (whose state is `prevState`) when the
   * chain is short enough, else as a snapshot. Returns the new group's id.
   */
  async create(
    tx: SqlExecutor,
    roomId: string,
    eventId: string,
    full: StateMap,
    prev?: { id: number; state: StateMap },
  ): Promise<number> {
    const id = await this.ids.next(tx);
    let entries: [string, string][];
    let prevGroup: number | null = null;
    let chain = 0;
    const prevChain = prev ? await this.chainOf(tx, prev.id) : undefined;
    if (prev && prevChain !== undefined && prevChain < MAX_CHAIN) {
      prevGroup = prev.id;
      chain = prevChain + 1;
      entries = [...full].filter(([k, v]) => prev.state.get(k) !== v);
    } else {
      entries = [...full];
    }
    await tx.run(`INSERT INTO state_groups (id, room_id, event_id, prev_group, chain_length) VALUES (?, ?, ?, ?, ?)`, [id, roomId, eventId, prevGroup, chain]);
    for (let i = 0; i < entries.length; i += 100) {
      const chunk = entries.slice(i, i + 100);
      const params: (string | number)[] = [];
      for (const [k, v] of chunk) {
        const sep = k.indexOf("\u0000");
        params.push(id, k.slice(0, sep), k.slice(sep + 1), v);
      }
      await tx.run(`INSERT INTO state_group_entries (state_group, type, state_key, event_id) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`, params);
    }
    this.chainLength.set(id, chain);
    this.cache.set(id, full);
    return id;
  }

  private async chainOf(tx: SqlExecutor, id: number): Promise<number | undefined> {
    const known = this.chainLength.get(id);
    if (known !== undefined) return known;
    const r = await tx.get<{ chain_length: number }>(`SELECT chain_length FROM state_groups WHERE id = ?`, [id]);
    if (r) this.chainLength.set(id, Number(r.chain_length));
    return r ? Number(r.chain_length) : undefined;
  }

  /** The full state of a group, resolving deltas down to the snapshot. */
  async get(id: number): Promise<StateMap> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const chain: number[] = [];
    let base: StateMap | undefined;
    let cur: number | null = id;
    while (cur !== null) {
      const cached = this.cache.get(cur);
      if (cached) {
        base = cached;
        break;
      }
      chain.push(cur);
      const g: { prev_group: number | null } | undefined = await this.sql.get<{ prev_group: number | null }>(
        `SELECT prev_group FROM state_groups WHERE id = ?`,
        [cur],
      );
      if (!g) throw new Error(`unknown state group ${cur}`);
      cur = g.prev_group === null ? null : Number(g.prev_group);
    }
    const state = new Map(base ?? []);
    const rows = await this.sql.all<{ state_group: number; type: string; state_key: string; event_id: string }>(
      `SELECT state_group, type, state_key, event_id FROM state_group_entries WHERE state_group IN (${chain.map(() => "?").join(",")})`,
      chain,
    );
    const byGroup = new Map<number, typeof rows>();
    for (const r of rows) byGroup.set(Number(r.state_group), [...(byGroup.get(Number(r.state_group)) ?? []), r]);
    for (const g of [...chain].reverse()) for (const r of byGroup.get(g) ?? []) state.set(stateKeyOf(r.type, r.state_key), r.event_id);
    this.cache.set(id, state);
    return state;
  }
}
