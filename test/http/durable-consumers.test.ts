// Durable consumers of the events stream (src/domain/consumers/durable.ts) on a real server: each handles
// every committed event once, in stream order, with its effects and its position in one transaction. A
// consumer that throws midway is offered the same events again; one that falls behind its in-memory
// backlog catches up from storage; after a restart a consumer that was behind receives exactly the events
// it had not handled, and a new consumer starting "now" only what comes after. Both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { DurableConsumer } from "../../src/domain/consumers/durable.ts";
import type { StoredEvent } from "../../src/domain/store/events.ts";
import type { SqlExecutor } from "../../src/storage/sql.ts";
import { eventually } from "../helpers/federation-peer.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const bodyOf = (e: StoredEvent) => (e.pdu.content as { body?: unknown }).body;

/** A consumer whose effect is a log of what it handled, kept when (and only when) its transaction commits. */
class Recorder implements DurableConsumer {
  log: { id: string; pos: number }[] = [];
  failures = 0;
  /** Throws when a batch holds an event this says yes to (after looking at the events before it). */
  failWhen: (e: StoredEvent) => boolean = () => false;
  private waiters: { done: () => boolean; resolve: () => void }[] = [];
  constructor(
    readonly name: string,
    readonly startAt: "now" | "beginning" = "beginning",
    readonly batchSize?: number,
    readonly backlog?: number,
  ) {}

  async handle(tx: SqlExecutor, events: readonly StoredEvent[]): Promise<void> {
    const handled: { id: string; pos: number }[] = [];
    for (const e of events) {
      if (this.failWhen(e)) {
        this.failures++;
        this.check();
        throw new Error(`${this.name} fails on ${e.eventId}`);
      }
      handled.push({ id: e.eventId, pos: e.streamOrdering });
    }
    tx.onSettled!((committed) => {
      if (!committed) return;
      this.log.push(...handled);
      this.check();
    });
  }

  /** Resolves once `done()` holds (checked after each committed batch and each failure). */
  until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  has(id: string): boolean {
    return this.log.some((x) => x.id === id);
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => (w.done() ? (w.resolve(), false) : true));
  }
}

/**
 * A replayable consumer (durable.ts `replayable`): writes a marker row for events whose body starts with
 * "w" and nothing for the others; its log keeps what committed.
 */
class Marker implements DurableConsumer {
  readonly replayable = true;
  readonly startAt = "beginning" as const;
  log: string[] = [];
  handledTimes = new Map<string, number>();
  constructor(readonly name: string) {}
  async handle(tx: SqlExecutor, events: readonly StoredEvent[]): Promise<void> {
    const marked: string[] = [];
    for (const e of events) {
      this.handledTimes.set(e.eventId, (this.handledTimes.get(e.eventId) ?? 0) + 1);
      if (!String(bodyOf(e)).startsWith("w")) continue;
      marked.push(e.eventId);
      await tx.run(`INSERT INTO stream_consumer_positions (consumer, stream, position) VALUES (?, ?, ?)`, [`${this.name}-mark`, e.eventId, e.streamOrdering]);
    }
    if (marked.length > 0) tx.onSettled!((committed) => committed && this.log.push(...marked));
  }
}

describe.each(backends())("durable consumers on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let roomId: string;
  let txn = 0;
  const throwsOnce = new Recorder("throws-once", "beginning", 3);
  const smallBacklog = new Recorder("small-backlog", "beginning", 2, 2);
  const restarts = new Recorder("restarts");
  const marker = new Marker("marker");
  // Wakes a minute after a commit (never within this suite) unless someone waits for it (`reach`).
  const delayed = Object.assign(new Recorder("delayed"), { delayMs: 60_000, batches: 0 });
  const handleDelayed = delayed.handle.bind(delayed);
  delayed.handle = async (tx, events) => {
    delayed.batches++;
    await handleDelayed(tx, events);
  };
  // A consumer with a short delay whose batches are timed; `during` runs (once) inside its next batch.
  const PACE_MS = 300;
  const paced = {
    name: "paced",
    startAt: "now" as const,
    replayable: true,
    delayMs: PACE_MS,
    batches: [] as { start: number; end: number; ids: string[] }[],
    during: undefined as (() => Promise<unknown>) | undefined,
    async handle(_tx: SqlExecutor, events: readonly StoredEvent[]): Promise<void> {
      const start = performance.now();
      const during = paced.during;
      paced.during = undefined;
      await during?.();
      paced.batches.push({ start, end: performance.now(), ids: events.map((e) => e.eventId) });
    },
  };
  const consumers: DurableConsumer[] = [throwsOnce, smallBacklog, restarts, marker, delayed, paced];

  beforeAll(async () => {
    t = await startTestServer({ backend, consumers, config: { log_level: "error" } }); // its consumers fail on purpose (warnings)
    alice = await registerUser(t, "alice");
    roomId = await createRoom(t, alice, { preset: "public_chat" });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function send(body: string): Promise<string> {
    const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/d${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.event_id as string;
  }
  /** Every committed event, in stream order. */
  async function stream(): Promise<{ id: string; pos: number }[]> {
    const rows = await t.hs.services.storage.sql.all<{ event_id: string; stream_ordering: number }>(`SELECT event_id, stream_ordering FROM events ORDER BY stream_ordering`);
    return rows.map((r) => ({ id: r.event_id, pos: Number(r.stream_ordering) }));
  }

  it("a consumer that throws midway a batch is offered the same events again: each handled once, in order", async () => {
    let thrown = false;
    throwsOnce.failWhen = (e) => !thrown && bodyOf(e) === "boom" && (thrown = true);
    const ids: string[] = [];
    for (const body of ["m1", "m2", "m3", "boom", "m5", "m6"]) ids.push(await send(body));
    await throwsOnce.until(() => throwsOnce.has(ids[5]!));
    expect(throwsOnce.failures).toBe(1);
    expect(throwsOnce.log).toEqual(await stream());
    const last = (await stream()).at(-1)!.pos;
    expect(await t.hs.services.consumerPositions.get("throws-once", "events")).toBe(last);
  });

  it("a delayed consumer takes the events of several commits in one batch, at once when someone waits for it", async () => {
    const s = t.hs.services;
    await s.consumers.reach("delayed", await s.rooms.events.streamIds.current());
    const batchesBefore = delayed.batches;
    const ids: string[] = [];
    for (const body of ["d1", "d2", "d3"]) ids.push(await send(body));
    // Each commit only scheduled a wake-up a minute away: nothing handled yet.
    expect(ids.some((id) => delayed.has(id))).toBe(false);
    await s.consumers.reach("delayed", await s.rooms.events.streamIds.current());
    expect(ids.every((id) => delayed.has(id))).toBe(true);
    expect(delayed.batches).toBe(batchesBefore + 1);
    expect(delayed.log).toEqual(await stream());
  });

  it("a delayed consumer waits its delay again for the commits that land while it handles a batch", async () => {
    const s = t.hs.services;
    await s.consumers.reach("paced", await s.rooms.events.streamIds.current());
    let landed: string | undefined;
    // A message committed while the consumer handles the batch of the first one.
    paced.during = async () => (landed = await send("landed meanwhile"));
    const first = await send("first");
    await eventually(() => landed !== undefined && paced.batches.some((b) => b.ids.includes(landed!)), "the consumer to handle the message that landed meanwhile");
    const a = paced.batches.find((b) => b.ids.includes(first))!;
    const b = paced.batches.find((b) => b.ids.includes(landed!))!;
    expect(b).not.toBe(a);
    // Not at once after the first batch (the events landed then were one commit): after the delay.
    expect(b.start - a.end).toBeGreaterThanOrEqual(PACE_MS - 25);
  });

  it("a consumer further behind than its in-memory backlog catches up from storage", async () => {
    let stuck = true;
    smallBacklog.failWhen = (e) => stuck && bodyOf(e) === "x0";
    const s = t.hs.services;
    const read = s.rooms.events.streamAfter.bind(s.rooms.events);
    let storageReads = 0;
    s.rooms.events.streamAfter = (...args) => (storageReads++, read(...args));
    try {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push(await send(`x${i}`));
      await smallBacklog.until(() => smallBacklog.failures > 0);
      expect(smallBacklog.has(ids[0]!)).toBe(false);
      stuck = false;
      await smallBacklog.until(() => smallBacklog.has(ids[7]!));
      expect(storageReads).toBeGreaterThan(0);
      expect(smallBacklog.log).toEqual(await stream());
    } finally {
      s.rooms.events.streamAfter = read;
    }
  });

  it("a replayable consumer writes its effects with its position; effect-free events move the stored position later, at the latest at stop", async () => {
    const s = t.hs.services;
    const marks = async () =>
      (await s.storage.sql.all<{ stream: string }>(`SELECT stream FROM stream_consumer_positions WHERE consumer = ? ORDER BY position`, ["marker-mark"])).map((r) => r.stream);
    const quiet = [await send("q1"), await send("q2")];
    const loud = await send("w1");
    const last = await send("q3");
    const lastPos = (await stream()).at(-1)!.pos;
    await eventually(() => s.consumers.positionOf("marker") === lastPos, "the marker handled every event");
    expect(marker.log).toEqual([loud]);
    expect(await marks()).toEqual([loud]);
    for (const id of [...quiet, loud, last]) expect(marker.handledTimes.get(id)).toBe(1);
    // The effect-free tail reaches storage without any further event (IDLE_PERSIST_MS).
    await eventually(async () => (await s.consumerPositions.get("marker", "events")) === lastPos, "the stored position caught up");
    const tail = await send("q4");
    const tailPos = (await stream()).at(-1)!.pos;
    await eventually(() => s.consumers.positionOf("marker") === tailPos, "q4 handled");
    // Stopped before the idle delay passed: the position is stored at stop, so q4 is not offered again.
    await t.stop();
    await t.restart();
    expect(await t.hs.services.consumerPositions.get("marker", "events")).toBe(tailPos);
    const next = await send("q5");
    const nextPos = (await stream()).at(-1)!.pos;
    await eventually(() => t.hs.services.consumers.positionOf("marker") === nextPos, "q5 handled");
    expect(marker.handledTimes.get(tail)).toBe(1);
    expect(marker.handledTimes.get(next)).toBe(1);
  });

  it("after a restart, a consumer that was behind receives exactly what it had not handled; a new one starts at now", async () => {
    let stuck = true;
    restarts.failWhen = (e) => stuck && bodyOf(e) === "held";
    const before = [await send("a1"), await send("a2")];
    const after = [await send("held"), await send("b1"), await send("b2")];
    await restarts.until(() => restarts.has(before[1]!) && restarts.failures > 0);
    const handledBefore = [...restarts.log];
    expect(handledBefore.map((x) => x.id)).not.toContain(after[0]);
    const all = await stream();
    expect(handledBefore).toEqual(all.slice(0, handledBefore.length));

    await t.stop();
    stuck = false;
    restarts.log = [];
    const late = new Recorder("late", "now");
    consumers.push(late);
    await t.restart();
    const c1 = await send("c1");
    await restarts.until(() => restarts.has(c1));
    await late.until(() => late.has(c1));
    const now = await stream();
    expect(restarts.log).toEqual(now.slice(handledBefore.length));
    expect([...handledBefore, ...restarts.log]).toEqual(now);
    expect(restarts.log.slice(0, 3).map((x) => x.id)).toEqual(after);
    expect(late.log).toEqual(now.filter((x) => x.pos > all.at(-1)!.pos));
    expect(late.log.map((x) => x.id)).toEqual([c1]);
  });
});
