// State resolution: the one entry point the event pipeline calls when the states before an event (one
// per prev_event, or one per forward extremity) disagree. The room version's `stateResolution` flag picks
// the algorithm. Spec: Server-Server API "Room State Resolution"; Room Versions v1 / v2 state resolution.
import type { Pdu } from "../events/types.ts";
import type { RoomVersion } from "../rooms/room-versions.ts";
import type { StateMap } from "../store/state-groups.ts";
import { MatrixError } from "../errors.ts";

export interface StateResolutionInput {
  version: RoomVersion;
  /** The state sets to resolve ("type\u0000state_key" → event id, the key of stateKeyOf). */
  stateSets: readonly StateMap[];
  /**
   * Loads events by id (from storage or from the batch being planned). Ids that cannot be found are left
   * out of the answer; the algorithm treats them as unknown (and never as authorising anything).
   */
  loadEvents(ids: readonly string[]): Promise<ReadonlyMap<string, Pdu>>;
  /** Event ids known to be rejected: never part of a resolved state. */
  isRejected?(eventId: string): boolean;
}

/** The unconflicted case, shared by every algorithm: every set agrees (or there is one). */
export function trivialResolution(stateSets: readonly StateMap[]): StateMap | undefined {
  if (stateSets.length === 0) return new Map();
  const [first, ...rest] = stateSets;
  for (const other of rest) {
    if (other === first) continue;
    if (other.size !== first!.size) return undefined;
    for (const [k, v] of other) if (first!.get(k) !== v) return undefined;
  }
  return first;
}

/** Resolves `input.stateSets` by the room version's algorithm. */
export async function resolveState(input: StateResolutionInput): Promise<StateMap> {
  const same = trivialResolution(input.stateSets);
  if (same) return same;
  // The real algorithms (v1, v2, v2.1) plug in here: src/domain/state/resolution-v1.ts / resolution-v2.ts.
  throw new MatrixError("M_UNKNOWN", `State resolution (${input.version.stateResolution}) of diverging states is not available yet`, 500);
}
