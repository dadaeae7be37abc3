// Events this server did not build (federation /send, the state of a room being joined, backfill ...)
// enter the room here, in its lane: the remote planner checks and places them, the one commit() stores
// them with their outcome. A room this server does not know yet starts from its create event, which must
// be among them: accepted, or stored as an outlier with the state it founds given with another event (a
// room joined through a resident server: its state and auth chain as outliers, the join with the state
// before it). Spec: Server-Server API "Checks performed on receipt of a PDU".
import type { Services } from "../services.ts";
import { MatrixError } from "../errors.ts";
import { eventIdOf, roomIdOf } from "../events/hashes.ts";
import { isPlainObject, type Pdu } from "../events/types.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import { getRoomVersion } from "./room-versions.ts";
import { loadRoom, newRoomSnapshot, type RoomSnapshot } from "./room-cache.ts";
import { RemotePlanner, type RemoteEventInput, type RemoteOutcome, type RemotePlannerOptions } from "./pipeline/plan-remote.ts";
import { commit } from "./pipeline/commit.ts";
import type { CommitPlan } from "./pipeline/plan.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { isPartialState } from "../federation/partial-state/flag.ts";
import { reportRefusal } from "../federation/refusals.ts";

export type { RemoteEventInput, RemoteOutcome, RemotePlannerOptions };

/** A room first known from its create event: the empty room it founds, and its rooms row. */
function roomFromCreate(s: Services, roomId: string, inputs: readonly RemoteEventInput[]): { room: RoomSnapshot; index: number; alsoWrite: (tx: SqlExecutor) => Promise<void> } {
  const index = inputs.findIndex((i) => isPlainObject(i.pdu) && i.pdu["type"] === "m.room.create" && i.pdu["state_key"] === "");
  if (index < 0) throw new MatrixError("M_NOT_FOUND", `Unknown room ${roomId} and no create event to start it from`, 404);
  const create = inputs[index]!.pdu as Pdu;
  const versionId = isPlainObject(create.content) && typeof create.content["room_version"] === "string" ? create.content["room_version"] : "1";
  const version = getRoomVersion(versionId);
  if (!version) throw new MatrixError("M_UNSUPPORTED_ROOM_VERSION", `Room version ${versionId} is not supported`, 400);
  let createEventId: string;
  try {
    createEventId = eventIdOf(create, version);
    if (roomIdOf(create, version) !== roomId) throw new Error("the create event founds another room");
  } catch (err) {
    throw new MatrixError("M_BAD_JSON", `Bad create event: ${(err as Error).message}`, 400);
  }
  const room = newRoomSnapshot(roomId, version, create, createEventId);
  const row = { roomId, roomVersion: version.id, creator: String(create.sender), isPublic: false };
  // The row may exist already, holding only an out-of-band membership (an invite received over federation).
  return { room, index, alsoWrite: (tx) => s.rooms.store.upsertRoom(tx, row, s.clock.now()) };
}

export interface ReceiveOptions {
  /**
   * Inputs (by index) that must be accepted (or be already stored) for anything to be stored: otherwise
   * nothing is committed and the outcomes say why (a send_join whose join would be rejected, or a remote
   * join whose state does not allow the join).
   */
  mustAccept?: readonly number[];
  /** More writes of the same commit, made only when something is committed (the plan says what). */
  alsoWrite?: (tx: SqlExecutor, plan: CommitPlan) => Promise<void>;
}

/** One log line and count per event refused, soft-failed or accepted only redacted (refusals.ts). */
function reportOutcomes(s: Services, roomId: string, inputs: readonly RemoteEventInput[], outcomes: readonly RemoteOutcome[], origin: string | undefined): void {
  outcomes.forEach((o, i) => {
    if (o.status === "outlier" || o.status === "duplicate" || (o.status === "accepted" && o.redacted !== true)) return;
    const pdu = inputs[i]?.pdu;
    const sender = isPlainObject(pdu) && typeof pdu["sender"] === "string" ? pdu["sender"] : "";
    const from = origin ?? (sender.includes(":") ? sender.slice(sender.indexOf(":") + 1) : "unknown");
    if (o.status === "accepted") return reportRefusal(s, { origin: from, roomId, eventId: o.eventId, rule: "content_hash", outcome: "redacted", detail: "content hash mismatch: kept redacted" });
    reportRefusal(s, { origin: from, roomId, eventId: o.eventId, rule: o.rule, outcome: o.status, detail: "reason" in o ? o.reason : undefined });
  });
}

const STORED_OK: readonly RemoteOutcome["status"][] = ["accepted", "duplicate"];

/**
 * Checks, places and stores remote events of one room, all in one commit. Returns each input's outcome:
 * accepted, soft_failed, outlier and rejected events are stored; dropped and duplicate ones are not.
 * With `backfill`, the events are older history (see RemotePlannerOptions).
 */
export function receiveRemoteEvents(s: Services, roomId: string, inputs: readonly RemoteEventInput[], opts: RemotePlannerOptions & ReceiveOptions = {}): Promise<RemoteOutcome[]> {
  return s.rooms.lanes.run(roomId, async () => {
    const known = await loadRoom(s, roomId);
    const fresh = known ? undefined : roomFromCreate(s, roomId, inputs);
    // A room joined with partial state is checked as such (plan-remote.ts `partialState`).
    const partialState = opts.partialState ?? (known !== undefined && (await isPartialState(s, roomId)));
    const planner = new RemotePlanner(s, known ?? fresh!.room, { ...opts, partialState });
    const outcomes = await planner.addAll(inputs);
    reportOutcomes(s, roomId, inputs, outcomes, opts.origin);
    // A new room exists only once its create event is accepted, or stored and part of the room's state.
    if (fresh) {
      const status = outcomes[fresh.index]?.status;
      const founded = status === "accepted" || (status === "outlier" && planner.currentState.get(stateKeyOf("m.room.create", "")) === fresh.room.createEventId);
      if (!founded) return outcomes;
    }
    if (opts.mustAccept?.some((i) => !STORED_OK.includes(outcomes[i]!.status))) return outcomes;
    const extra = opts.alsoWrite;
    const plan: CommitPlan | undefined = planner.plan(
      extra
        ? async (tx) => {
            await fresh?.alsoWrite(tx);
            await extra(tx, plan!);
          }
        : fresh?.alsoWrite,
    );
    if (plan) await commit(s, plan);
    return outcomes;
  });
}
