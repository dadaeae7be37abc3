// The local planner: builds the events this server creates, in order, on top of the room as it evolves —
// current state and the current forward extremities — and authorizes each against its auth events. It
// reads no rows for a plain message: the room snapshot holds everything (ARCHITECTURE "Events: one way
// in", steps 1–4). In a room using a Policy Server, each event is signed by it once authorized
// (policy-check.ts): the one place every local event passes before it is committed.
// Spec: Client-Server API "Room events"; Server-Server API "Auth events selection", "Policy Servers".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { isStateEvent, prevEventIds } from "../../events/types.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import { buildEvent, type BuiltEvent, type EventDraft } from "../build-event.ts";
import { movedRoom, type RoomSnapshot } from "../room-cache.ts";
import { authorizeEvent } from "./checks.ts";
import { mayUsePolicyServer } from "../policy-server.ts";
import { signLocalEvent } from "../policy-check.ts";
import { redactionTarget, type CommitPlan, type GroupBasis, type PlannedEvent, type PlannedTxn } from "./plan.ts";

const ACCEPTED = { outlier: false, rejectedReason: null, softFailed: false } as const;
const NO_PREVS: readonly string[] = [];

/** A plan being built: the room as it evolves, and the events built so far (not yet stored). */
export class LocalPlanner {
  readonly events: PlannedEvent[] = [];
  private readonly pending = new Map<string, Pdu>();
  private readonly changes = new Map<string, string | null>();
  /** The group holding `cur.state`, if one does. */
  private group: GroupBasis | undefined;
  private cur: RoomSnapshot;
  readonly lookup = async (id: string): Promise<Pdu | undefined> => this.pending.get(id) ?? (await this.s.rooms.events.get(id))?.pdu;

  /** `signLater`: the events built here are stored unsigned, signed when they leave the server (own-signature.ts). */
  constructor(
    private readonly s: Services,
    private readonly room: RoomSnapshot,
    private readonly opts: { signLater?: boolean } = {},
  ) {
    this.cur = room;
    this.group = room.stateGroup !== undefined ? { group: room.stateGroup, state: room.state } : undefined;
  }

  /** Builds (unless built) and authorizes one event on top of the plan; throws without changing it. */
  async add(draft: EventDraft | BuiltEvent, txn?: PlannedTxn): Promise<void> {
    const cur = this.cur;
    const unsigned =
      "pdu" in draft
        ? draft
        : await buildEvent(this.s, { roomId: cur.roomId, version: cur.version, state: cur.state, extremities: cur.extremities, maxDepth: cur.maxDepth, lookup: this.lookup, signLater: this.opts.signLater }, draft);
    await authorizeEvent(this.s, cur, unsigned.pdu, this.lookup);
    // A room using a Policy Server: its signature is added (or the event refused) before anything is stored.
    const built = mayUsePolicyServer(cur.state) ? await signLocalEvent(this.s, cur, unsigned) : unsigned;
    const key = isStateEvent(built.pdu) ? stateKeyOf(built.pdu.type, built.pdu.state_key!) : undefined;
    const stateAfter = key ? new Map(cur.state).set(key, built.eventId) : cur.state;
    const prevIds = prevEventIds(built.pdu);
    // Written out rather than spread (`...built`): see room-cache.ts movedRoom.
    this.events.push({
      eventId: built.eventId,
      pdu: built.pdu,
      json: built.json,
      stateBefore: cur.state,
      stateAfter,
      basis: this.group,
      replacesState: key ? (cur.state.get(key) ?? null) : null,
      // Built on the room's forward extremities (or on events of this plan): all in the DAG already.
      prevsOutsideDag: NO_PREVS,
      outlier: false,
      rejectedReason: null,
      softFailed: false,
      redacts: redactionTarget(built.pdu, cur, ACCEPTED),
      txn,
    });
    this.pending.set(built.eventId, built.pdu);
    if (key) {
      this.changes.set(key, built.eventId);
      this.group = { event: built.eventId };
    }
    this.cur = movedRoom(cur, {
      state: stateAfter,
      extremities: [...cur.extremities.filter((id) => !prevIds.includes(id)), built.eventId],
      maxDepth: Math.max(cur.maxDepth, built.pdu.depth),
    });
  }

  /**
   * The plan of every event added so far. A local event is built on the extremities (up to 20 of them),
   * so the last one is usually the only extremity left, and its group holds current state.
   */
  plan(alsoWrite?: CommitPlan["alsoWrite"]): CommitPlan {
    const last = this.events[this.events.length - 1]!;
    const { state, extremities, maxDepth } = this.cur;
    const group = extremities.length === 1 ? { event: last.eventId } : undefined;
    return { room: this.room, events: this.events, after: { state, group, changes: this.changes, extremities, maxDepth }, alsoWrite };
  }
}
