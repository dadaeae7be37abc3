// What a room joined with partial state refuses to other servers until its full state is known (as
// Synapse does): the membership handshakes this server would answer as the resident one (make_join,
// send_join, make_knock, send_knock, send_leave: 404 M_NOT_FOUND, as for a room it is not in), and the
// reads that need the full state or the full member list (/state, /state_ids, /event, /event_auth: 403
// ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE). /backfill and /get_missing_events are served, with
// other servers' events redacted (server-visibility.ts). Spec: Server-Server API "Joining Rooms"; MSC3895.
import type { Services } from "../../services.ts";
import { MatrixError } from "../../errors.ts";
import { isPartialState } from "./flag.ts";

/** make_join / send_join / make_knock / send_knock / send_leave in a partial-state room: 404 M_NOT_FOUND. */
export async function refuseHandshakeWhilePartial(s: Services, roomId: string, endpoint: string): Promise<void> {
  if (await isPartialState(s, roomId))
    throw new MatrixError("M_NOT_FOUND", `Unable to handle /${endpoint} right now; this server is not fully joined.`, 404);
}

/** The error of a read a partial-state room cannot answer (MSC3895's errcode, 403). */
export function unableDueToPartialState(): MatrixError {
  return new MatrixError("ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE", "Unable to authorise you right now; room is partial-stated here.", 403);
}
