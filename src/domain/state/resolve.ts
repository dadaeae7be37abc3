// State resolution: the one entry point the event pipeline calls when the states before an event (one
// per prev_event, or one per forward extremity) disagree. The room version's `stateResolution` flag picks
// the algorithm. Spec: Server-Server API "Room State Resolution"; Room Versions v1 / v2 state resolution.
import { verifyThirdPartyInviteSigned, type AuthOptions } from "../auth/index.ts";
import type { Pdu } from "../events/types.ts";
import type { RoomVersion } from "../rooms/room-versions.ts";
import type { StateMap } from "../store/state-groups.ts";
import { EventGraph } from "./event-graph.ts";
import { resolveV1 } from "./resolution-v1.ts";
import { resolveV2 } from "./resolution-v2.ts";

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
  /**
   * Optional bulk loader: the events `ids` and every event in their auth chains that storage has, in one
   * call (e.g. one recursive query). Without it the auth chains are loaded with one `loadEvents` call per
   * frontier of the auth graph. Either way every event is loaded at most once per resolution.
   */
  loadAuthChains?(ids: readonly string[]): Promise<ReadonlyMap<string, Pdu>>;
  /**
   * Signature checks the auth rules need. Defaults: events taking part in state resolution were checked
   * on receipt, so server signatures (join_authorised_via_users_server) count as valid; third-party invite
   * signatures are verified against the invite's public keys.
   */
  authOptions?: Pick<AuthOptions, "verifyServerSignature" | "verifyThirdPartyInviteSignature">;
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
  if (same) return withoutRejected(same, input.isRejected);
  const graph = new EventGraph(input.version, input);
  const options: AuthOptions = {
    verifyServerSignature: () => true,
    verifyThirdPartyInviteSignature: verifyThirdPartyInviteSigned,
    ...input.authOptions,
  };
  const resolved =
    input.version.stateResolution === "v1"
      ? await resolveV1(graph, input.stateSets, options)
      : await resolveV2(graph, input.stateSets, options);
  return withoutRejected(resolved, input.isRejected);
}

function withoutRejected(state: StateMap, isRejected: ((id: string) => boolean) | undefined): StateMap {
  if (!isRejected) return state;
  let out: Map<string, string> | undefined;
  for (const [key, id] of state) {
    if (!isRejected(id)) continue;
    out ??= new Map(state);
    out.delete(key);
  }
  return out ?? state;
}
