// Applies other processes' room events to this process's in-memory indexes (room and event caches, the
// sync stream cache, the notifier: CommitFeed.receive), in stream order and exactly once, and only then
// lets this process's events position move (store/ids.ts `observe`): a /sync here never reads up to a
// position whose events its caches have not seen. The writers' commit notices are kept until their
// events are reached; the events themselves are read from PostgreSQL by position range — so an event
// whose notice Redis dropped (an outage) is applied all the same, from the table. Events this process
// committed itself were published here already and are skipped.
import type { Services } from "../services.ts";
import type { CommitNotice } from "../consumers/commit-feed.ts";

interface RangeRow {
  event_id: string;
  room_id: string;
  stream_ordering: number | string | bigint;
  type: string;
  state_key: string | null;
  outlier: boolean | number;
}

/** How many events one read of the range takes. */
const PAGE = 500;

export class EventApplier {
  /** Every event at or below this position was applied here (or is this process's own). */
  applied: number;
  /** Notices heard and not yet applied, by event id. */
  private readonly notices = new Map<string, CommitNotice>();
  /** Notices that name no event (a restatement without new events) waiting for their position. */
  private readonly bare: CommitNotice[] = [];
  /** Positions above `applied` this process committed itself (already published here). */
  private readonly own = new Set<number>();

  constructor(private readonly s: Services, start: number) {
    this.applied = start;
  }

  /** A local commit (published here by the pipeline): its positions are not applied again. */
  committedHere(positions: readonly number[]): void {
    for (const p of positions) if (p > this.applied) this.own.add(p);
  }

  /**
   * A notice from another process: kept until its events are reached (extras only, if they were already).
   * True when it may be applied now (its position is reached: no position message will follow it).
   */
  heard(notice: CommitNotice): boolean {
    // Readers must not answer from a room snapshot the commit made stale, even before it is applied.
    this.s.rooms.cache.delete(notice.roomId);
    if (notice.eventIds.length === 0 || notice.position <= this.applied) {
      if (notice.position <= this.applied && !notice.restated?.length && !notice.outOfBandMembers?.length) return false;
      this.bare.push({ ...notice, eventIds: notice.position <= this.applied ? [] : notice.eventIds });
      return notice.position <= this.applied;
    }
    for (const id of notice.eventIds) this.notices.set(id, notice);
    return false;
  }

  /** Applies every event in (applied, upTo] not committed here, then notices waiting at or below it. */
  async applyUpTo(upTo: number, writer: string): Promise<void> {
    while (this.applied < upTo) {
      const rows = await this.s.storage.sql.all<RangeRow>(
        `SELECT event_id, room_id, stream_ordering, type, state_key, outlier FROM events WHERE stream_ordering > ? AND stream_ordering <= ? ORDER BY stream_ordering LIMIT ${PAGE}`,
        [this.applied, upTo],
      );
      const last = rows.length === PAGE ? Number(rows[rows.length - 1]!.stream_ordering) : upTo;
      const fresh = rows.filter((r) => !this.own.has(Number(r.stream_ordering)));
      await this.s.rooms.events.getMany(fresh.map((r) => r.event_id)); // one read; each room's receive then hits the cache
      for (const run of roomRuns(fresh)) await this.s.commits.receive(this.noticeOf(run, writer));
      this.applied = last;
      for (const p of this.own) if (p <= last) this.own.delete(p);
    }
    // Notices reached whose events were not in the range (backfilled history below every position): their
    // extras still apply; nothing of them is kept.
    const leftover = new Map<CommitNotice, string[]>();
    for (const [id, n] of this.notices) {
      if (n.position > upTo) continue;
      this.notices.delete(id);
      let ids = leftover.get(n);
      if (!ids) leftover.set(n, (ids = []));
      ids.push(id);
    }
    for (const [n, ids] of leftover) this.bare.push({ ...n, eventIds: ids });
    for (let i = 0; i < this.bare.length; ) {
      const n = this.bare[i]!;
      if (n.position > upTo) {
        i++;
        continue;
      }
      this.bare.splice(i, 1);
      await this.s.commits.receive(n);
    }
  }

  /** The notice of one room's consecutive events: the writer's (with its extras) when heard, else rebuilt. */
  private noticeOf(run: RangeRow[], writer: string): CommitNotice {
    const heard = new Set<CommitNotice>();
    for (const r of run) {
      const n = this.notices.get(r.event_id);
      if (n) heard.add(n);
      this.notices.delete(r.event_id);
    }
    const outOfBand = new Set<string>();
    const restated = new Set<string>();
    for (const n of heard) {
      for (const u of n.outOfBandMembers ?? []) outOfBand.add(u);
      for (const id of n.restated ?? []) restated.add(id);
    }
    if (heard.size === 0) {
      // Not heard (Redis dropped it): an outlier membership of a local user is an out-of-band one.
      const suffix = `:${this.s.config.server_name}`;
      for (const r of run) if (r.type === "m.room.member" && Boolean(r.outlier) && r.state_key?.endsWith(suffix)) outOfBand.add(r.state_key);
    }
    return {
      stream: "events",
      writer: [...heard][0]?.writer ?? writer,
      position: Number(run[run.length - 1]!.stream_ordering),
      roomId: run[0]!.room_id,
      eventIds: run.map((r) => r.event_id),
      ...(outOfBand.size > 0 ? { outOfBandMembers: [...outOfBand] } : {}),
      ...(restated.size > 0 ? { restated: [...restated] } : {}),
    };
  }
}

/** Consecutive rows of one room, in stream order. */
function roomRuns(rows: readonly RangeRow[]): RangeRow[][] {
  const runs: RangeRow[][] = [];
  for (const r of rows) {
    const cur = runs[runs.length - 1];
    if (cur && cur[0]!.room_id === r.room_id) cur.push(r);
    else runs.push([r]);
  }
  return runs;
}
