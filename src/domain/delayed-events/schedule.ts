// Scheduling a delayed event (MSC4140: PUT /rooms/{roomId}/send/{type}/{txnId} and /state/{type}/{key}
// with `org.matrix.msc4140.delay`): checked for form now (its room known, type and size within limits),
// stored, and sent when due by the timer (send-delayed.ts) with the permission checks of that moment.
// As Synapse: rc_message, max_event_delay_duration, msc4140_max_delayed_events_per_user.
import { hash } from "node:crypto";
import { MatrixError, limitExceeded } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { canonicalJson } from "../canonical-json.ts";
import { randomString } from "../ids.ts";
import { requireRoom } from "../rooms/room-cache.ts";
import { checkEventType, deviceKeyOf, rateLimit, scopeOf } from "../rooms/send.ts";
import { checkPowerLevelsContent } from "../rooms/power-levels.ts";
import { checkPduSize } from "../events/size.ts";
import { delayedEventsEnabled } from "../../config/experimental.ts";

export interface DelayedEventRequest {
  roomId: string;
  type: string;
  /** Set for a state event. */
  stateKey?: string;
  /** The send endpoint's transaction id: a retry answers the first delay id. */
  txnId?: string;
  /** The event content; undefined when the request had no body (only a retry may omit it, as in Synapse). */
  content: Record<string, unknown> | undefined;
  /** Milliseconds from now. */
  delay: number;
  /** MSC4354: the event is sent as a sticky event of this duration (a message only, as Synapse). */
  stickyDurationMs?: number;
}

export async function scheduleDelayedEvent(s: Services, r: Requester, req: DelayedEventRequest): Promise<{ delay_id: string }> {
  const deviceKey = deviceKeyOf(r);
  const txnId = req.txnId === undefined ? undefined : `${scopeOf(s, ["send", req.roomId, req.type])}:${req.txnId}`;
  const sticky = req.stateKey === undefined ? req.stickyDurationMs : undefined;
  const requestHash = req.content === undefined ? undefined : hash("sha256", canonicalJson(sticky === undefined ? [req.content, req.delay] : [req.content, req.delay, sticky]), "base64");
  if (txnId !== undefined) {
    const seen = await s.delayedEvents.store.findTxn(r.userId, deviceKey, txnId);
    if (seen && (requestHash === undefined || requestHash === seen.requestHash)) return { delay_id: seen.delayId };
    if (seen) throw new MatrixError("M_INVALID_PARAM", "This transaction id was already used for a different request", 400);
  }
  if (req.content === undefined) throw new MatrixError("M_NOT_JSON", "Content not JSON.", 400);
  rateLimit(s, r);
  if (!delayedEventsEnabled(s.config)) throw new MatrixError("M_FORBIDDEN", "Sending delayed events has been disallowed", 403);
  if (req.delay > s.config.max_event_delay_duration)
    throw new MatrixError("ORG.MATRIX.MSC4140_DELAY_TOO_LARGE", `The requested delay (${req.delay}ms) exceeds the allowed maximum (${s.config.max_event_delay_duration}ms)`, 400);
  checkEventType(req.type);
  await requireRoom(s, req.roomId);
  if (req.type === "m.room.power_levels" && req.stateKey !== undefined) checkPowerLevelsContent(req.content);
  if (req.type === "m.room.member" && req.stateKey !== undefined && typeof req.content.membership !== "string")
    throw new MatrixError("M_BAD_JSON", "m.room.member needs content.membership", 400);
  checkPduSize({ type: req.type, room_id: req.roomId, sender: r.userId, content: req.content, ...(req.stateKey !== undefined ? { state_key: req.stateKey } : {}) });

  const now = s.clock.now();
  const delayId = randomString(24);
  const sendTs = now + req.delay;
  let full: { full: number } | undefined;
  try {
    full = await s.delayedEvents.store.add(
      { delayId, userId: r.userId, deviceId: r.deviceId, roomId: req.roomId, type: req.type, stateKey: req.stateKey ?? null, content: req.content, delay: req.delay, sendTs, stickyDurationMs: sticky ?? null },
      s.config.experimental_features.msc4140_max_delayed_events_per_user,
      txnId !== undefined ? { deviceKey, txnId, requestHash: requestHash!, now } : undefined,
    );
  } catch (err) {
    // Two concurrent requests with one txnId: the loser finds the winner's row.
    const again = txnId === undefined ? undefined : await s.delayedEvents.store.findTxn(r.userId, deviceKey, txnId);
    if (again?.requestHash === requestHash) return { delay_id: again!.delayId };
    throw err;
  }
  if (full) {
    const err = limitExceeded(full.full - now);
    throw new MatrixError("M_LIMIT_EXCEEDED", "The maximum number of delayed events has been reached.", 429, err.extra);
  }
  s.delayedEvents.wake(sendTs);
  return { delay_id: delayId };
}
