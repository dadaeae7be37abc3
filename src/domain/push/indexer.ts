// Push rule evaluation on the event pipeline (an in-transaction indexer): every stored event of a batch —
// local or, later, from federation; outliers and rejected events skipped — is evaluated for each local
// member of the room except the sender (and for a local user it invites), with rulesets and the room's
// members, display names, member count and power levels from memory. The outcomes are written as
// notification records: one push_events row with the outcome most members got, push_exceptions rows for
// the others (store/push-notifications.ts), and local users' membership spans. With msc4306_enabled, the
// subscribers of the batch's threads (MSC4306's thread_subscription condition) are read in one query —
// only when an event of the batch is in a thread and some member's enabled rules ask. When the commit settles
// the cached unread counts move and the pushers of notified users are woken (never waited for).
// Spec: Client-Server API "Push Notifications" ("Server behaviour"), "Threading".
import type { Services } from "../services.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import type { EventIndexer } from "../rooms/pipeline/commit.ts";
import type { StoredEvent } from "../store/events.ts";
import type { RoomSnapshot } from "../rooms/room-cache.ts";
import type { PushEventRow, PushExceptionRow } from "../store/push-notifications.ts";
import { relationOf } from "../relations/parse.ts";
import { PushEvent, type CompiledRule } from "./evaluator.ts";
import { roomStateBefore, type RoomPushState } from "./room-state.ts";
import { addOutcome } from "./counts.ts";
import type { UserRules } from "./rule-cache.ts";

/** The thread each event belongs to: the root of its m.thread relation, else its parent's thread, else "main". */
async function threadsOf(s: Services, tx: SqlExecutor, events: StoredEvent[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const parents = new Map<string, string>();
  for (const e of events) {
    const rel = relationOf(e.pdu);
    if (rel?.relType === "m.thread") out.set(e.eventId, rel.eventId);
    else if (rel) parents.set(e.eventId, rel.eventId);
    else out.set(e.eventId, "main");
  }
  if (parents.size === 0) return out;
  const outside = [...parents.values()].filter((id) => !out.has(id) && !parents.has(id));
  const rows = outside.length > 0 ? await s.relations.ofEvents(tx, outside) : new Map();
  for (const e of events) {
    const parent = parents.get(e.eventId);
    if (parent === undefined) continue;
    const inBatch = out.get(parent);
    const row = rows.get(parent);
    out.set(e.eventId, inBatch ?? (row ? (row.relType === "m.thread" ? row.relatesToId : (row.threadId ?? "main")) : "main"));
  }
  return out;
}

/**
 * MSC4306: the local subscribers of each thread the batch's events are in (one query), or undefined when
 * thread subscriptions are off, no event is in a thread, or no member's enabled rules ask about them.
 */
async function threadSubscribersOf(
  s: Services,
  tx: SqlExecutor,
  roomId: string,
  threads: ReadonlyMap<string, string>,
  members: Iterable<string>,
  rules: ReadonlyMap<string, UserRules>,
): Promise<Map<string, Set<string>> | undefined> {
  if (!s.config.experimental_features.msc4306_enabled) return undefined;
  const roots = [...new Set([...threads.values()].filter((t) => t !== "main"))];
  if (roots.length === 0) return undefined;
  let asked = false;
  for (const u of members) if (rules.get(u)?.compiled.usesThreadSubscriptions) {
    asked = true;
    break;
  }
  return asked ? s.threadSubscriptions.store.subscribersOf(tx, roomId, roots) : undefined;
}

interface Outcome {
  notify: boolean;
  highlight: boolean;
  actions: string;
}

const NONE: Outcome = { notify: false, highlight: false, actions: "[]" };
const outcomes = new WeakMap<CompiledRule, Outcome>();
/** The outcome of a deciding rule (one object per compiled rule: members sharing it share the object). */
function outcomeOfRule(r: CompiledRule | undefined): Outcome {
  if (!r) return NONE;
  let o = outcomes.get(r);
  if (!o) outcomes.set(r, (o = { notify: r.notify, highlight: r.highlight, actions: r.key }));
  return o;
}

/** What one event did, for the settle step (counts in memory, pushers). */
interface Evaluated {
  sender: string;
  threadId: string;
  base: Outcome;
  exceptions: Map<string, Outcome>;
}

/** The push indexer of the event pipeline (declared in src/main.ts): the batch's timeline events. */
// Backfilled history is never notified (as in Synapse).
export const indexPushActions: EventIndexer = async (tx, s, batch) => (batch.backfilled || batch.events.length === 0 ? undefined : evaluateEvents(tx, s, batch.room, [...batch.events]));

async function evaluateEvents(tx: SqlExecutor, s: Services, room: RoomSnapshot, events: StoredEvent[]): Promise<void> {
  const suffix = `:${s.config.server_name}`;
  const isLocal = (u: string) => u.endsWith(suffix);
  const before = await roomStateBefore(s, tx, room, events);
  let state: RoomPushState = before;
  const touchesMembers = events.some((e) => e.pdu.state_key !== undefined && (e.pdu.type === "m.room.member" || e.pdu.type === "m.room.power_levels"));
  if (touchesMembers) state = before.clone();
  const candidates = new Set(before.local.keys());
  for (const e of events) if (e.pdu.type === "m.room.member" && e.pdu.state_key && isLocal(e.pdu.state_key)) candidates.add(e.pdu.state_key);
  const rules = await s.push.rules.ofMany([...candidates]);
  const threads = await threadsOf(s, tx, events);
  const subscribers = await threadSubscribersOf(s, tx, room.roomId, threads, state.local.keys(), rules);
  const rows: PushEventRow[] = [];
  const exceptionRows: PushExceptionRow[] = [];
  const evaluated: Evaluated[] = [];
  const spans: (() => Promise<void>)[] = [];
  const now = s.clock.now();

  for (const e of events) {
    if (e.outlier || e.rejectedReason !== null) continue;
    const pdu = e.pdu;
    const power = state.power();
    const pe = new PushEvent(pdu, state.joinedCount, power.user(pdu.sender), power.notification);
    if (subscribers) {
      const threadId = threads.get(e.eventId) ?? "main";
      if (threadId !== "main") pe.threadSubscribers = subscribers.get(threadId);
    }
    // Group the members by outcome: the largest group is the event's common outcome.
    const groups = new Map<string, { outcome: Outcome; users: string[] }>();
    for (const [userId, displayName] of state.local) {
      if (userId === pdu.sender) continue;
      const outcome = outcomeOfRule(rules.get(userId)!.compiled.evaluate(pe, { userId, displayName }));
      const g = groups.get(outcome.actions);
      if (g) g.users.push(userId);
      else groups.set(outcome.actions, { outcome, users: [userId] });
    }
    let base = NONE;
    let baseSize = -1;
    for (const g of groups.values()) if (g.users.length > baseSize) [base, baseSize] = [g.outcome, g.users.length];
    const exceptions = new Map<string, Outcome>();
    for (const g of groups.values()) if (g.outcome !== base) for (const u of g.users) exceptions.set(u, g.outcome);
    // A local user invited here is not a member yet: evaluated on their own (.m.rule.invite_for_me).
    const target = pdu.type === "m.room.member" ? pdu.state_key : undefined;
    if (target && isLocal(target) && target !== pdu.sender && !state.local.has(target) && (pdu.content as { membership?: unknown }).membership === "invite") {
      const outcome = outcomeOfRule(rules.get(target)?.compiled.evaluate(pe, { userId: target, displayName: undefined }));
      if (outcome.notify || outcome.highlight) exceptions.set(target, outcome);
    }
    const anyone = base.notify || base.highlight || [...exceptions.values()].some((o) => o.notify || o.highlight);
    if (anyone) {
      const threadId = threads.get(e.eventId) ?? "main";
      rows.push({ streamOrdering: e.streamOrdering, eventId: e.eventId, roomId: room.roomId, threadId, sender: pdu.sender, notif: base.notify, highlight: base.highlight, actions: base.actions, ts: now });
      for (const [userId, o] of exceptions)
        exceptionRows.push({ userId, streamOrdering: e.streamOrdering, roomId: room.roomId, notif: o.notify, highlight: o.highlight, actions: o.actions });
      evaluated.push({ sender: pdu.sender, threadId, base, exceptions });
    }
    if (touchesMembers) {
      const change = state.apply(pdu, isLocal);
      if (change.joined) spans.push(() => s.push.notifications.openSpan(tx, change.joined!, room.roomId, e.streamOrdering));
      if (change.left) spans.push(() => s.push.notifications.closeSpan(tx, change.left!, room.roomId, e.streamOrdering));
    }
  }
  await s.push.notifications.insert(tx, rows, exceptionRows);
  for (const write of spans) await write();

  s.push.counts.begin(room.roomId);
  const settle = (committed: boolean) => {
    if (!committed) {
      s.push.rooms.delete(room.roomId);
      s.push.counts.end(room.roomId, false, () => {});
      return;
    }
    if (touchesMembers || !s.push.rooms.get(room.roomId)) s.push.rooms.set(room.roomId, state);
    if (touchesMembers) {
      // Memberships moved inside the batch: recount the room from storage rather than track who was in.
      s.push.counts.end(room.roomId, true, () => {});
      s.push.counts.dropRoom(room.roomId);
    } else
      s.push.counts.end(room.roomId, true, (entries) => {
        for (const ev of evaluated)
          for (const [userId, counts] of entries) {
            if (userId === ev.sender) continue;
            const o = ev.exceptions.get(userId) ?? (state.local.has(userId) ? ev.base : NONE);
            addOutcome(counts, ev.threadId, o.notify, o.highlight);
          }
      });
    if (evaluated.length > 0) s.push.pushers.wake((userId) => evaluated.some((ev) => ev.sender !== userId && ((ev.exceptions.get(userId) ?? (state.local.has(userId) || before.local.has(userId) ? ev.base : NONE)).notify)));
  };
  if (tx.onSettled) tx.onSettled(settle);
}
