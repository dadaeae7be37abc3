// PUT /rooms/{roomId}/typing/{userId} (spec: Client-Server API "Typing Notifications"): a joined member
// says they are typing for `timeout` ms (Synapse: 30 s when absent, capped at 120 s) or stopped. Only for
// oneself. The change moves the typing stream (typing-state.ts), which wakes the room's syncs.
import { MatrixError } from "../errors.js";
export const DEFAULT_TYPING_TIMEOUT_MS = 30_000;
export const MAX_TYPING_TIMEOUT_MS = 120_000;
/** Validates a typing body ({typing, timeout?}): M_BAD_JSON when malformed. */
export function parseTypingBody(body) {
    if (typeof body.typing !== "boolean")
        throw new MatrixError("M_BAD_JSON", "typing must be a boolean", 400);
    const t = body.timeout;
    if (t !== undefined && (typeof t !== "number" || !Number.isInteger(t) || t < 0))
        throw new MatrixError("M_BAD_JSON", "timeout must be a non-negative integer", 400);
    return { typing: body.typing, timeoutMs: t };
}
/** Refuses anyone but a joined member of the room (M_FORBIDDEN). */
export async function requireJoined(s, userId, roomId) {
    const m = await s.rooms.store.membership(roomId, userId);
    if (m?.membership !== "join")
        throw new MatrixError("M_FORBIDDEN", "You are not joined to this room", 403);
}
export async function setTyping(s, r, roomId, userId, req) {
    if (r.userId !== userId)
        throw new MatrixError("M_FORBIDDEN", "Cannot set another user's typing state", 403);
    await requireJoined(s, userId, roomId);
    if (req.typing)
        s.typing.start(roomId, userId, Math.min(req.timeoutMs ?? DEFAULT_TYPING_TIMEOUT_MS, MAX_TYPING_TIMEOUT_MS));
    else
        s.typing.stop(roomId, userId);
}
