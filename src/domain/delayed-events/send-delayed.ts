// Sending delayed events (MSC4140) when due or when asked: each goes through the same send operation as
// any other event of its user (rooms/send.ts: rc_message, the membership rules for m.room.member, the auth
// rules), its checks made now, at send time; one that fails them is dropped, as Synapse drops it.
import type { Services } from "../services.ts";
import type { BackgroundTask } from "../extensions.ts";
import type { Requester } from "../accounts/requester.ts";
import type { DelayedEventRow } from "../store/delayed-events.ts";
import { sendMessage, sendStateEvent } from "../rooms/send.ts";

/** Sends one taken event as its user (and device), then forgets it, sent or not. */
export async function sendDelayedEvent(s: Services, e: DelayedEventRow): Promise<void> {
  try {
    const user = await s.users.get(e.userId);
    if (!user || user.deactivated) return;
    const r: Requester = { userId: e.userId, deviceId: e.deviceId, isGuest: user.isGuest, isAdmin: user.isAdmin, accessTokenId: null };
    if (e.stateKey !== null) await sendStateEvent(s, r, e.roomId, e.type, e.stateKey, e.content);
    else await sendMessage(s, r, e.roomId, e.type, undefined, e.content, e.stickyDurationMs === null ? {} : { stickyDurationMs: e.stickyDurationMs });
  } finally {
    await s.delayedEvents.store.remove(e.delayId);
  }
}

/**
 * One pass of the timer: takes the events due now (after a restart, those taken before it too) and sends
 * them in order. Of several due for one piece of state, the first is sent and the others dropped (Synapse).
 */
export async function sendDueDelayedEvents(s: Services, restart: boolean): Promise<void> {
  const due = await s.delayedEvents.store.takeDue(s.clock.now(), restart);
  const sentState = new Set<string>();
  for (const e of due) {
    const key = e.stateKey === null ? undefined : JSON.stringify([e.roomId, e.type, e.stateKey]);
    if (key !== undefined && sentState.has(key)) {
      await s.delayedEvents.store.remove(e.delayId);
      continue;
    }
    try {
      await sendDelayedEvent(s, e);
      if (key !== undefined) sentState.add(key);
    } catch (err) {
      s.log.info({ err, delayId: e.delayId, roomId: e.roomId, userId: e.userId }, "delayed events: a due event could not be sent; dropped");
    }
  }
}

/**
 * The background task of delayed events (declared in src/main.ts): sends what fell due while the server
 * was down, then keeps the timer of the next one; stopping waits for a pass under way.
 */
export const delayedEventSender: BackgroundTask = (s) => {
  void s.delayedEvents.start(s, sendDueDelayedEvents);
  return () => s.delayedEvents.stop();
};
