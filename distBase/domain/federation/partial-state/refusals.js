import { MatrixError } from "../../errors.js";
import { isPartialState } from "./flag.js";
/** make_join / send_join / make_knock / send_knock / send_leave in a partial-state room: 404 M_NOT_FOUND. */
export async function refuseHandshakeWhilePartial(s, roomId, endpoint) {
    if (await isPartialState(s, roomId))
        throw new MatrixError("M_NOT_FOUND", `Unable to handle /${endpoint} right now; this server is not fully joined.`, 404);
}
/** The error of a read a partial-state room cannot answer (MSC3895's errcode, 403). */
export function unableDueToPartialState() {
    return new MatrixError("ORG.MATRIX.MSC3895_UNABLE_DUE_TO_PARTIAL_STATE", "Unable to authorise you right now; room is partial-stated here.", 403);
}
