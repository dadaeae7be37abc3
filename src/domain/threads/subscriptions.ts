// Thread subscriptions (MSC4306, with experimental_features.msc4306_enabled as Synapse): a user
// subscribes to a thread by its root — manually, or automatically because of an event of the thread (its
// client decided); a manual subscription wins over an automatic one, and an automatic one caused by an
// event the user had already seen when unsubscribing (at or before the room's position then) is refused
// (409). The root, and the cause event, must be events the user may see (else 404).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { visibleRoomEvent } from "../rooms/read.ts";
import { relationOf } from "../relations/parse.ts";
import { tryParseRoomId } from "../ids.ts";

function checkIds(roomId: string, rootId: string): void {
  if (!tryParseRoomId(roomId)) throw new MatrixError("M_INVALID_PARAM", "Invalid room ID", 400);
  if (!rootId.startsWith("$")) throw new MatrixError("M_INVALID_PARAM", "Invalid event ID", 400);
}

async function threadRoot(s: Services, r: Requester, roomId: string, rootId: string) {
  checkIds(roomId, rootId);
  return visibleRoomEvent(s, r, roomId, rootId).catch(() => {
    throw new MatrixError("M_NOT_FOUND", "No such thread root", 404);
  });
}

/** GET …/thread/{root}/subscription: `{automatic}`, or 404 when not subscribed. */
export async function getThreadSubscription(s: Services, r: Requester, roomId: string, rootId: string): Promise<{ automatic: boolean }> {
  await threadRoot(s, r, roomId, rootId);
  const row = await s.threadSubscriptions.get(r.userId, roomId, rootId);
  if (!row?.subscribed) throw new MatrixError("M_NOT_FOUND", "Not subscribed.", 404);
  return { automatic: row.automatic };
}

/** PUT …/thread/{root}/subscription `{automatic?: causeEventId}`. */
export async function subscribeToThread(s: Services, r: Requester, roomId: string, rootId: string, body: Record<string, unknown>): Promise<void> {
  const cause = body.automatic;
  if (cause !== undefined && cause !== null && (typeof cause !== "string" || !cause.startsWith("$")))
    throw new MatrixError("M_BAD_JSON", "automatic must be an event ID", 400);
  await threadRoot(s, r, roomId, rootId);
  let causeAt: number | undefined;
  if (typeof cause === "string") {
    const e = await visibleRoomEvent(s, r, roomId, cause).catch(() => {
      throw new MatrixError("M_NOT_FOUND", "Automatic subscription event not found", 404);
    });
    const rel = relationOf(e.pdu);
    if (rel?.relType !== "m.thread" || rel.eventId !== rootId)
      throw new MatrixError("IO.ELEMENT.MSC4306.M_NOT_IN_THREAD", "Automatic subscription must use an event in the thread", 400);
    causeAt = e.streamOrdering;
  }
  const row = await s.threadSubscriptions.get(r.userId, roomId, rootId);
  // Subscribed already, manually, or automatically and asked again automatically: nothing to change.
  if (row?.subscribed && (!row.automatic || causeAt !== undefined)) return;
  if (row && !row.subscribed && causeAt !== undefined && row.unsubscribedAtStream !== null && causeAt <= row.unsubscribedAtStream)
    throw new MatrixError("IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION", "Automatic subscription obsoleted by an unsubscription request.", 409);
  await s.threadSubscriptions.subscribe(r.userId, roomId, rootId, causeAt !== undefined);
}

/** DELETE …/thread/{root}/subscription: unsubscribes (also when not subscribed). */
export async function unsubscribeFromThread(s: Services, r: Requester, roomId: string, rootId: string): Promise<void> {
  await threadRoot(s, r, roomId, rootId);
  await s.threadSubscriptions.unsubscribe(r.userId, roomId, rootId);
}
