// PUT /rooms/{roomId}/typing/{userId} (spec: Client-Server API "Typing Notifications"): a joined member
// says they are typing for `timeout` ms (Synapse: 30 s when absent, capped at 120 s) or stopped. Only for
// oneself. The change moves the typing stream (typing-state.ts), which wakes the room's syncs.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { runOnWriter, writerElsewhere } from "../cluster/stream-ops.ts";

export const DEFAULT_TYPING_TIMEOUT_MS = 30_000;
export const MAX_TYPING_TIMEOUT_MS = 120_000;

export interface TypingRequest {
  typing: boolean;
  timeoutMs?: number;
}

/** Validates a typing body ({typing, timeout?}): M_BAD_JSON when malformed. */
export function parseTypingBody(body: Record<string, unknown>): TypingRequest {
  if (typeof body.typing !== "boolean") throw new MatrixError("M_BAD_JSON", "typing must be a boolean", 400);
  const t = body.timeout;
  if (t !== undefined && (typeof t !== "number" || !Number.isInteger(t) || t < 0)) throw new MatrixError("M_BAD_JSON", "timeout must be a non-negative integer", 400);
  return { typing: body.typing, timeoutMs: t as number | undefined };
}

/** Refuses anyone but a joined member of the room (M_FORBIDDEN). */
export async function requireJoined(s: Services, userId: string, roomId: string): Promise<void> {
  const m = await s.rooms.store.membership(roomId, userId);
  if (m?.membership !== "join") throw new MatrixError("M_FORBIDDEN", "You are not joined to this room", 403);
}

export async function setTyping(s: Services, r: Requester, roomId: string, userId: string, req: TypingRequest): Promise<void> {
  // Typing is held by its writer (cluster/stream-ops.ts).
  const writer = writerElsewhere(s, "setTyping");
  if (writer) return runOnWriter(s, writer, "setTyping", r, [roomId, userId, req]);
  if (r.userId !== userId) throw new MatrixError("M_FORBIDDEN", "Cannot set another user's typing state", 403);
  await requireJoined(s, userId, roomId);
  if (req.typing) s.typing.start(roomId, userId, Math.min(req.timeoutMs ?? DEFAULT_TYPING_TIMEOUT_MS, MAX_TYPING_TIMEOUT_MS));
  else s.typing.stop(roomId, userId);
}
