// The remote planner: takes PDUs this server did not build and runs the spec's checks on receipt, in
// order — format (dropped), signatures (dropped), content hash (redacted), authorization against the
// event's own auth events (rejected), against the state before it (rejected), against current state
// (soft-failed) — placing each in the DAG: the state before it comes from its prev_events' states
// (resolved when they differ; the state after a prev_event this server lacks may be given, fetched from
// another server), and an event whose prev_events' states are unknown is an outlier. An event stored as an
// outlier before and received again with a known state is checked again and joins the DAG
// (de-outliering). Accepted events move the forward extremities (unless a stored event already follows
// them: history arriving late); current state is the resolved state at them. Backfilled history (older
// than the room's state) is not soft-failed and takes positions below the stream (commit.ts). A redaction
// naming an event of another room is soft-failed (ignored: it never takes effect, and clients never see it),
// and one whose prev_events are another room's events is dropped (it would take that room's state),
// and so is an event the room's Policy Server does not recommend (policy-check.ts; backfilled too, as Synapse).
// Spec: Server-Server API "Checks performed on receipt of a PDU", "Rejection", "Soft failure",
// "Backfilling and retrieving missing events", "Policy Servers"; Room Versions "Authorization rules".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { authEventIds, isStateEvent, prevEventIds } from "../../events/types.ts";
import { eventIdOf, roomIdOf } from "../../events/hashes.ts";
import { validatePduFormat } from "../../events/validate.ts";
import { MatrixError } from "../../errors.ts";
import type { StoredEvent } from "../../store/events.ts";
import { stateKeyOf, type StateMap } from "../../store/state-groups.ts";
import { resolveState, trivialResolution } from "../../state/resolve.ts";
import type { RoomSnapshot } from "../room-cache.ts";
import { authorizeWithAuthEvents, authorizeWithState, checkHashOrRedact, checkSignatures } from "./checks.ts";
import { redactionTarget, stateChanges, type CommitPlan, type GroupBasis, type PlannedEvent } from "./plan.ts";
import { redactsOf } from "../../events/redaction.ts";
import { overlongField } from "../../events/size.ts";
import { mayUsePolicyServer } from "../policy-server.ts";
import { checkReceivedEvent } from "../policy-check.ts";
import type { RefusalRule } from "../../federation/refusals.ts";

export interface RemoteEventInput {
  /** The PDU as received (untrusted JSON). */
  pdu: unknown;
  /** The state before the event, when known from elsewhere (e.g. /state_ids); else from its prev_events. */
  stateBefore?: StateMap;
  /**
   * The state after some of its prev_events that this server lacks, by prev event id (fetched from another
   * server with /state_ids): resolved with the states after the prev_events it has.
   */
  prevStates?: ReadonlyMap<string, StateMap>;
  /** Store it as an outlier whatever its prev_events (an auth chain or state fetched alongside). */
  outlier?: boolean;
  /**
   * Skip the soft-fail check against current state: for this server's own membership event coming back
   * from a remote handshake (send_join, send_leave), whose state before it is the resident server's and
   * whose current state here may be stale or empty (Synapse does not soft-fail them either).
   */
  noSoftFail?: boolean;
}

export interface RemotePlannerOptions {
  /** Older history fetched with /backfill: not soft-failed, stored below the stream (CommitPlan.backfilled). */
  backfill?: boolean;
  /**
   * The room was joined with partial state (members omitted): a state this server holds may lack a member
   * an event needs, so its checks against the state before it and current state take the missing keys
   * from the event's own auth events (as Synapse does until the full state is known).
   */
  partialState?: boolean;
  /** The server the events came from (named in the log line of each refused one; default: the sender's). */
  origin?: string;
  /**
   * Completes a partial state: entries of the full state at the join for keys current state lacks (the
   * state groups are completed by the caller, in the same commit).
   */
  fillState?: StateMap;
}

export type RemoteOutcome =
  /** `redacted`: accepted in its redacted form (its content hash did not match). */
  | { status: "accepted"; eventId: string; redacted?: true }
  | { status: "outlier"; eventId: string }
  /** Soft-failed against current state's auth rules. */
  | { status: "soft_failed"; eventId: string; rule: RefusalRule }
  /** Soft-failed for a stated reason other than current state's auth rules (the room's policy server). */
  | { status: "soft_failed"; eventId: string; reason: string; rule: RefusalRule }
  | { status: "rejected"; eventId: string; reason: string; rule: RefusalRule }
  /** Not stored: a bad format or signature, another room, or a state that cannot be resolved yet. */
  | { status: "dropped"; eventId?: string; reason: string; rule: RefusalRule }
  /** Already stored (or twice in the input): nothing done. */
  | { status: "duplicate"; eventId: string };

interface Parsed {
  index: number;
  input: RemoteEventInput;
  pdu: Pdu;
  eventId: string;
  /** Stored before as an outlier (not rejected): checked again, then promoted into the DAG. */
  promote?: boolean;
}

/** Events checked between two turns given to the event loop. */
const YIELD_EVERY = 32;
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Orders parsed events so that each comes after the batch's events it references (stable otherwise). */
function topological(items: Parsed[]): Parsed[] {
  const byId = new Map(items.map((p) => [p.eventId, p]));
  const out: Parsed[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (p: Parsed) => {
    if (state.get(p.eventId)) return; // done, or a cycle (the auth checks refuse what it leads to)
    state.set(p.eventId, "visiting");
    for (const id of [...authEventIds(p.pdu), ...prevEventIds(p.pdu)]) {
      const dep = byId.get(id);
      if (dep) visit(dep);
    }
    state.set(p.eventId, "done");
    out.push(p);
  };
  for (const p of items) visit(p);
  return out;
}

export class RemotePlanner {
  readonly events: PlannedEvent[] = [];
  private readonly pending = new Map<string, PlannedEvent>();
  private readonly rejected = new Set<string>();
  /** Events some stored event already names as a prev_event: never forward extremities. */
  private followed = new Set<string>();
  /** Events of `fillState` stored before this batch. */
  private readonly stored = new Set<string>();
  /** Events this batch references that were stored in the DAG (not outliers) before it. */
  private readonly inDag = new Set<string>();
  private cur: { state: StateMap; group: GroupBasis | undefined; extremities: string[]; maxDepth: number };

  constructor(private readonly s: Services, private readonly room: RoomSnapshot, private readonly opts: RemotePlannerOptions = {}) {
    this.cur = {
      state: room.state,
      group: room.stateGroup !== undefined ? { group: room.stateGroup, state: room.state } : undefined,
      extremities: room.extremities,
      maxDepth: room.maxDepth,
    };
  }

  /** Current state as the inputs placed so far leave it. */
  get currentState(): StateMap {
    return this.cur.state;
  }

  /** Checks and places every input; returns each one's outcome, in input order. */
  async addAll(inputs: readonly RemoteEventInput[]): Promise<RemoteOutcome[]> {
    const outcomes: RemoteOutcome[] = new Array(inputs.length);
    const parsed: Parsed[] = [];
    const seen = new Set<string>();
    for (const [index, input] of inputs.entries()) {
      if (index % YIELD_EVERY === YIELD_EVERY - 1) await yieldTurn();
      const p = this.parse(input);
      if ("status" in p) outcomes[index] = p;
      else if (seen.has(p.eventId)) outcomes[index] = { status: "duplicate", eventId: p.eventId };
      else {
        seen.add(p.eventId);
        parsed.push({ pdu: p.pdu, eventId: p.eventId, index, input });
      }
    }
    // Everything the batch references, in one read (the later lookups hit the event cache).
    const known = await this.s.rooms.events.getMany(parsed.flatMap((p) => [p.eventId, ...authEventIds(p.pdu), ...prevEventIds(p.pdu)]));
    for (const e of known.values()) {
      if (e.rejectedReason !== null) this.rejected.add(e.eventId);
      if (!e.outlier) this.inDag.add(e.eventId);
    }
    if (this.opts.fillState) for (const e of await this.s.rooms.events.getMany([...this.opts.fillState.values()]).then((m) => m.values())) this.stored.add(e.eventId);
    const fresh: Parsed[] = [];
    for (const p of parsed) {
      // prev_events of another room: the event would take that room's state as its own (a state reset
      // into another room, found by the hostile-server catalogue, issue 40). Dropped, as Synapse drops
      // pulled events of another room.
      const foreign = prevEventIds(p.pdu).find((id) => { const e = known.get(id); return e !== undefined && e.roomId !== this.room.roomId; });
      if (foreign !== undefined) {
        outcomes[p.index] = { status: "dropped", eventId: p.eventId, reason: `The prev_event ${foreign} belongs to another room`, rule: "wrong_room" };
        continue;
      }
      const stored = known.get(p.eventId);
      // An outlier received again, not as an outlier: its state may be known now.
      if (stored && stored.outlier && stored.rejectedReason === null && p.input.outlier !== true) p.promote = true;
      if (!stored || p.promote) fresh.push(p);
      else outcomes[p.index] = { status: "duplicate", eventId: p.eventId };
    }
    const placed = fresh.filter((p) => p.input.outlier !== true);
    if (placed.length > 0) this.followed = await this.s.rooms.events.withChildren(placed.map((p) => p.eventId));
    // A long batch (an auth chain of thousands) gives the event loop a turn now and then: checking it is
    // synchronous work, and other rooms' requests must not wait for all of it (hostile auth chains, issue 40).
    let n = 0;
    for (const p of topological(fresh)) {
      if (++n % YIELD_EVERY === 0) await yieldTurn();
      outcomes[p.index] = await this.add(p);
    }
    return outcomes;
  }

  /** Step 1: the room version's event format, the room, the event id. */
  private parse(input: RemoteEventInput): { pdu: Pdu; eventId: string } | RemoteOutcome {
    const v = this.room.version;
    let pdu: Pdu;
    let eventId: string;
    try {
      pdu = validatePduFormat(input.pdu, v);
      eventId = eventIdOf(pdu, v);
    } catch (err) {
      return { status: "dropped", reason: reasonOf(err), rule: "format" };
    }
    if (roomIdOf(pdu, v) !== this.room.roomId) return { status: "dropped", eventId, reason: "The event belongs to another room", rule: "wrong_room" };
    return { pdu, eventId };
  }

  private async add(p: Parsed): Promise<RemoteOutcome> {
    const { room, s } = this;
    const v = room.version;
    const { eventId } = p;
    // Step 2: signatures (dropped), step 3: content hash (continues redacted).
    let signers: Set<string>;
    try {
      signers = await checkSignatures(s, p.pdu, v);
    } catch (err) {
      return { status: "dropped", eventId, reason: reasonOf(err), rule: "signature" };
    }
    const hashed = checkHashOrRedact(p.pdu, v);
    const { unsigned: _unsigned, ...received } = hashed.pdu;
    let pdu = received as Pdu;
    const signedBy = (server: string) => signers.has(server);
    const prevIds = prevEventIds(pdu);

    // Step 4: its own auth events. (Before v11, a field within 255 code points but over 255 bytes passed
    // the format check: such an event is kept rejected, as Synapse keeps it, so the room does not break.)
    const overlong = v.strictEventByteLimits ? undefined : overlongField(pdu);
    let rejectedReason = overlong ? `'${overlong}' is longer than 255 bytes` : await this.checkAuthEvents(pdu, signedBy);
    let rejectedRule: RefusalRule = overlong ? "format" : "auth_events";

    // The state before it: from its prev_events (an outlier when one of them has no known state).
    let outlier = p.input.outlier === true;
    let before: { state: StateMap; basis: GroupBasis | undefined } | undefined;
    if (!outlier) {
      try {
        before = p.input.stateBefore ? { state: await this.usableState(p.input.stateBefore), basis: undefined } : await this.stateFromPrevs(prevIds, p.input.prevStates);
      } catch (err) {
        return { status: "dropped", eventId, reason: `The state before the event cannot be resolved: ${reasonOf(err)}`, rule: "unresolvable_state" };
      }
      outlier = before === undefined;
    }
    // Still no state for an event stored as an outlier: it stays as it is.
    if (outlier && p.promote) return { status: "duplicate", eventId };

    // Step 5: the state before it (rejected); step 6: current state (soft-failed).
    let softFailed = false;
    if (before && rejectedReason === null) {
      try {
        await authorizeWithState(room, pdu, await this.forAuth(before.state, pdu), signedBy, (ids) => this.pdus(ids));
      } catch (err) {
        rejectedReason = reasonOf(err);
        rejectedRule = "state_before";
      }
      const atTips = prevIds.length === this.cur.extremities.length && prevIds.every((id) => this.cur.extremities.includes(id));
      // Nothing to soft-fail against in a room with no tips yet (one being joined) or in backfilled history.
      if (rejectedReason === null && !atTips && !this.opts.backfill && this.cur.extremities.length > 0 && p.input.noSoftFail !== true) {
        try {
          await authorizeWithState(room, pdu, await this.forAuth(this.cur.state, pdu), signedBy, (ids) => this.pdus(ids));
        } catch {
          softFailed = true;
        }
      }
    }

    // The room's Policy Server (Synapse checks it with the signatures and hash, and skips a redacted copy):
    // an event it does not recommend is soft-failed, not rejected nor redacted. Asked only when its answer
    // matters — not for an event rejected or soft-failed already, nor for this server's own membership
    // back from a handshake. A signature it gives now is stored with the event.
    let policyRefused = false;
    if (before && rejectedReason === null && !softFailed && !hashed.redacted && p.input.noSoftFail !== true && mayUsePolicyServer(this.cur.state)) {
      const checked = await checkReceivedEvent(s, { roomId: room.roomId, version: v, state: this.cur.state }, pdu);
      pdu = checked.pdu;
      policyRefused = softFailed = !checked.recommended;
    }

    // A redaction naming an event of another room can never take effect: it is ignored — soft-failed, so
    // stored but never served to clients (Synapse withholds it from them).
    let redactsElsewhere = false;
    if (before && rejectedReason === null && !softFailed && (await this.redactsElsewhere(pdu))) redactsElsewhere = softFailed = true;

    const key = isStateEvent(pdu) ? stateKeyOf(pdu.type, pdu.state_key!) : undefined;
    const stateBefore = before?.state;
    const stateAfter = stateBefore && key && rejectedReason === null ? new Map(stateBefore).set(key, eventId) : stateBefore;
    const marks = { outlier, rejectedReason, softFailed };
    const planned: PlannedEvent = {
      eventId,
      pdu,
      json: JSON.stringify(pdu),
      stateBefore,
      stateAfter,
      basis: before?.basis,
      replacesState: stateBefore && key && rejectedReason === null ? (stateBefore.get(key) ?? null) : null,
      prevsOutsideDag: prevIds.filter((id) => !this.inDag.has(id)),
      ...marks,
      redacts: redactionTarget(pdu, room, marks),
      ...(p.promote ? { promote: true } : {}),
    };
    if (outlier || rejectedReason !== null || softFailed) {
      this.keep(planned);
      if (rejectedReason !== null) return { status: "rejected", eventId, reason: rejectedReason, rule: rejectedRule };
      if (policyRefused) return { status: "soft_failed", eventId, reason: "Not recommended by the room's policy server", rule: "policy_server" };
      if (outlier) return { status: "outlier", eventId };
      return { status: "soft_failed", eventId, rule: redactsElsewhere ? "redaction_elsewhere" : "current_state" };
    }
    // Accepted: a forward extremity in place of its prev_events (unless a stored event already follows it:
    // history arriving late); current state resolved at the tips.
    // Backfilled history is all before events the room has: it never moves the tips.
    const accepted: RemoteOutcome = hashed.redacted ? { status: "accepted", eventId, redacted: true } : { status: "accepted", eventId };
    const extremities = this.opts.backfill ? this.cur.extremities : this.cur.extremities.filter((id) => !prevIds.includes(id));
    if (!this.opts.backfill && !this.followed.has(eventId)) extremities.push(eventId);
    this.keep(planned);
    if (extremities.length === this.cur.extremities.length && extremities.every((id, i) => id === this.cur.extremities[i])) {
      this.cur = { state: this.cur.state, group: this.cur.group, extremities: this.cur.extremities, maxDepth: Math.max(this.cur.maxDepth, pdu.depth) };
      return accepted;
    }
    let current: { state: StateMap; group: GroupBasis | undefined };
    try {
      if (extremities.length === 0) throw new Error("the room would have no forward extremity");
      current = extremities.length === 1 && extremities[0] === eventId ? { state: stateAfter!, group: { event: eventId } } : await this.stateAtTips(extremities);
    } catch (err) {
      this.events.pop();
      this.pending.delete(eventId);
      return { status: "dropped", eventId, reason: `Current state cannot be resolved: ${reasonOf(err)}`, rule: "unresolvable_state" };
    }
    this.cur = { state: current.state, group: current.group, extremities, maxDepth: Math.max(this.cur.maxDepth, pdu.depth) };
    return accepted;
  }

  /**
   * The state an event is authorized against: in a partial-state room, completed from its auth events, and
   * where an auth event and the state disagree, the two resolved by the room version's algorithm (Synapse
   * resolves the state it knows with the claimed auth events: a kick the partial state let through is
   * undone for the auth of an event that cites the member's join, and a ban still holds).
   */
  private async forAuth(state: StateMap, pdu: Pdu): Promise<StateMap> {
    if (this.opts.partialState !== true) return state;
    const ids = authEventIds(pdu);
    const found = await this.pdus(ids);
    let out: Map<string, string> | undefined;
    let claimed: Map<string, string> | undefined;
    for (const id of ids) {
      const e = found.get(id);
      if (!e || typeof e.state_key !== "string" || this.rejected.has(id)) continue;
      const key = stateKeyOf(e.type, e.state_key);
      const held = state.get(key);
      if (held === id) continue;
      if (held !== undefined) {
        claimed ??= new Map(state);
        claimed.set(key, id);
        continue;
      }
      out ??= new Map(state);
      out.set(key, id);
    }
    const filled = out ?? state;
    if (!claimed) return filled;
    for (const [k, id] of filled) if (!claimed.has(k)) claimed.set(k, id);
    try {
      return await this.resolve([filled, claimed]);
    } catch {
      return filled;
    }
  }

  private keep(planned: PlannedEvent): void {
    this.events.push(planned);
    this.pending.set(planned.eventId, planned);
    if (planned.rejectedReason !== null) this.rejected.add(planned.eventId);
  }

  /** Step 4: the auth events must all be known and allow the event. Returns why it is rejected, or null. */
  private async checkAuthEvents(pdu: Pdu, signedBy: (server: string) => boolean): Promise<string | null> {
    const ids = authEventIds(pdu);
    const found = await this.pdus(ids);
    const missing = ids.find((id) => !found.has(id));
    if (missing) return `Unknown auth event ${missing}`;
    const byPdu = new Map(ids.map((id) => [found.get(id)!, id]));
    try {
      authorizeWithAuthEvents(this.room, pdu, ids.map((id) => found.get(id)!), signedBy, (e) => this.rejected.has(byPdu.get(e) ?? ""));
      return null;
    } catch (err) {
      return reasonOf(err);
    }
  }

  /**
   * A state given from elsewhere (e.g. a send_join answer), without the entries this server does not
   * have or rejected: a rejected event is never part of any state.
   */
  private async usableState(given: StateMap): Promise<StateMap> {
    const found = await this.pdus([...given.values()]);
    const out = new Map<string, string>();
    for (const [k, id] of given) if (found.has(id) && !this.rejected.has(id)) out.set(k, id);
    return out.size === given.size ? given : out;
  }

  /** Whether `pdu` is a redaction of an event this server holds in another room. */
  private async redactsElsewhere(pdu: Pdu): Promise<boolean> {
    if (pdu.type !== "m.room.redaction" || isStateEvent(pdu)) return false;
    const target = redactsOf(pdu, this.room.version);
    if (target === undefined || this.pending.has(target)) return false;
    const stored = await this.s.rooms.events.get(target);
    return stored !== undefined && stored.roomId !== this.room.roomId;
  }

  /** Events by id from the batch or storage. */
  private async pdus(ids: readonly string[]): Promise<Map<string, Pdu>> {
    const out = new Map<string, Pdu>();
    const rest: string[] = [];
    for (const id of ids) {
      const p = this.pending.get(id);
      if (p) out.set(id, p.pdu);
      else rest.push(id);
    }
    if (rest.length > 0) for (const [id, e] of await this.s.rooms.events.getMany(rest)) {
      out.set(id, e.pdu);
      if (e.rejectedReason !== null) this.rejected.add(id);
    }
    return out;
  }

  /**
   * The state after each event (batch or storage, else `given`: fetched from another server); undefined
   * when one has none (unknown, or an outlier).
   */
  private async statesAfter(ids: readonly string[], given?: ReadonlyMap<string, StateMap>): Promise<{ state: StateMap; basis: GroupBasis | undefined }[] | undefined> {
    const stored = await this.s.rooms.events.getMany(ids.filter((id) => !this.pending.has(id)));
    const groups: number[] = [];
    const from = new Map<string, "batch" | "group" | "given">();
    for (const id of ids) {
      const p = this.pending.get(id);
      const g = p ? undefined : stored.get(id)?.stateGroup;
      if (p && !p.outlier) from.set(id, "batch");
      else if (g !== undefined && g !== null) {
        from.set(id, "group");
        groups.push(g);
      } else if (given?.has(id)) from.set(id, "given");
      else return undefined;
    }
    const states = await this.s.rooms.stateGroups.getMany(groups);
    return ids.map((id) => {
      if (from.get(id) === "batch") return { state: this.pending.get(id)!.stateAfter!, basis: { event: id } };
      if (from.get(id) === "given") return { state: given!.get(id)!, basis: undefined };
      const g = (stored.get(id) as StoredEvent).stateGroup!;
      return { state: states.get(g)!, basis: { group: g, state: states.get(g)! } };
    });
  }

  private resolve(sets: StateMap[]): Promise<StateMap> {
    return resolveState({
      version: this.room.version,
      stateSets: sets,
      loadEvents: (ids) => this.pdus(ids),
      isRejected: (id) => this.rejected.has(id),
    });
  }

  /** The state before an event from its prev_events' states; undefined when one of them is unknown. */
  private async stateFromPrevs(prevIds: string[], given?: ReadonlyMap<string, StateMap>): Promise<{ state: StateMap; basis: GroupBasis | undefined } | undefined> {
    if (prevIds.length === 0) return { state: new Map(), basis: undefined };
    const sets = await this.statesAfter(prevIds, given);
    if (!sets) return undefined;
    const same = trivialResolution(sets.map((x) => x.state));
    if (same) return sets.find((x) => x.state === same)!;
    return { state: await this.resolve(sets.map((x) => x.state)), basis: sets[0]!.basis };
  }

  /** Current state at several forward extremities: their states, resolved. */
  private async stateAtTips(extremities: string[]): Promise<{ state: StateMap; group: GroupBasis | undefined }> {
    const sets = await this.statesAfter(extremities);
    if (!sets) throw new MatrixError("M_UNKNOWN", "A forward extremity has no state", 500);
    const same = trivialResolution(sets.map((x) => x.state));
    if (same) return { state: same, group: sets.find((x) => x.state === same)!.basis };
    return { state: await this.resolve(sets.map((x) => x.state)), group: undefined };
  }

  /** The plan of every stored outcome (undefined when nothing is to be stored). */
  plan(alsoWrite?: CommitPlan["alsoWrite"]): CommitPlan | undefined {
    if (this.events.length === 0) return undefined;
    let { state, group } = this.cur;
    const { extremities, maxDepth } = this.cur;
    const fill = this.opts.fillState;
    if (fill && [...fill.keys()].some((k) => !state.has(k))) {
      const full = new Map(state);
      for (const [k, id] of fill) if (!full.has(k) && !this.rejected.has(id) && (this.pending.has(id) || this.stored.has(id))) full.set(k, id);
      state = full;
      group = undefined;
    }
    const after = { state, group, changes: stateChanges(this.room.state, state), extremities, maxDepth };
    return { room: this.room, events: this.events, after, alsoWrite, ...(this.opts.backfill ? { backfilled: true } : {}) };
  }
}
