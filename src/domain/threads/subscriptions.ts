// Thread subscriptions (MSC4306, with experimental_features.msc4306_enabled, as Synapse 1.163 serves
// them): a user subscribes to a thread by its root — manually, or automatically because of an event of
// the thread (their client decided); a manual subscription wins over an automatic one, and an automatic
// one whose cause event the user had already seen when unsubscribing is refused (409
// IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION). The root, and the cause event, must be events the
// user may see (else 404). Each change moves the thread-subscriptions stream (MSC4308's readers:
// ./subscription-feed.ts) and wakes the user's waiting sliding syncs. Deactivation forgets them all.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { visibleRoomEvent } from "../rooms/read.ts";
import { relationOf } from "../relations/parse.ts";
import { tryParseRoomId } from "../ids.ts";
import type { EventOrdering } from "../store/thread-subscriptions.ts";

/** The room and root ids of the path, checked as Synapse checks them (400 M_INVALID_PARAM). */
export function checkThreadIds(roomId: string, rootId: string): void {
  if (!tryParseRoomId(roomId)) throw new MatrixError("M_INVALID_PARAM", "Invalid room ID", 400);
  if (!rootId.startsWith("$")) throw new MatrixError("M_INVALID_PARAM", "Invalid event ID", 400);
}

async function threadRoot(s: Services, r: Requester, roomId: string, rootId: string) {
  checkThreadIds(roomId, rootId);
  return visibleRoomEvent(s, r, roomId, rootId).catch(() => {
    throw new MatrixError("M_NOT_FOUND", "No such thread root", 404);
  });
}

/** The requester's subscription to a thread they may see (404 for a root they may not), undefined when not subscribed. */
export async function findThreadSubscription(s: Services, r: Requester, roomId: string, rootId: string): Promise<{ automatic: boolean } | undefined> {
  await threadRoot(s, r, roomId, rootId);
  const row = await s.threadSubscriptions.store.get(r.userId, roomId, rootId);
  return row?.subscribed ? { automatic: row.automatic } : undefined;
}

/** GET …/thread/{root}/subscription: `{automatic}`, or 404 when not subscribed. */
export async function getThreadSubscription(s: Services, r: Requester, roomId: string, rootId: string): Promise<{ automatic: boolean }> {
  const sub = await findThreadSubscription(s, r, roomId, rootId);
  if (!sub) throw new MatrixError("M_NOT_FOUND", "Not subscribed.", 404);
  return sub;
}

/**
 * A subscription as either face sends it: REST's PUT body `{}` (manual) or `{automatic: causeEventId}`,
 * GraphQL's subscribeToThread arguments; `automatic` is still to check (causeOf).
 */
export interface ThreadSubscriptionInput {
  automatic?: unknown;
}

/** The cause event of an automatic subscription; as Synapse's model, null means manual. */
function causeOf(body: ThreadSubscriptionInput): string | undefined {
  const cause = body.automatic;
  if (cause === undefined || cause === null) return undefined;
  if (typeof cause !== "string" || !cause.startsWith("$")) throw new MatrixError("M_BAD_JSON", "automatic must be an event ID (starting with '$')", 400);
  return cause;
}

/** PUT …/thread/{root}/subscription `{automatic?: causeEventId}`. */
export async function subscribeToThread(s: Services, r: Requester, roomId: string, rootId: string, body: ThreadSubscriptionInput): Promise<void> {
  checkThreadIds(roomId, rootId);
  const causeId = causeOf(body);
  await threadRoot(s, r, roomId, rootId);
  let cause: EventOrdering | undefined;
  if (causeId !== undefined) {
    const e = await visibleRoomEvent(s, r, roomId, causeId).catch(() => {
      throw new MatrixError("M_NOT_FOUND", "Automatic subscription event not found", 404);
    });
    const rel = relationOf(e.pdu);
    if (rel?.relType !== "m.thread" || rel.eventId !== rootId)
      throw new MatrixError("IO.ELEMENT.MSC4306.M_NOT_IN_THREAD", "Automatic subscription must use an event in the thread", 400);
    cause = { stream: e.streamOrdering, depth: Number(e.pdu.depth) };
  }
  const outcome = await s.threadSubscriptions.store.subscribe(r.userId, roomId, rootId, cause);
  if (outcome === "conflict") throw new MatrixError("IO.ELEMENT.MSC4306.M_CONFLICTING_UNSUBSCRIPTION", "Automatic subscription obsoleted by an unsubscription request.", 409);
  if (typeof outcome === "number") s.threadSubscriptions.feed.changed(r.userId, outcome);
}

/** DELETE …/thread/{root}/subscription: unsubscribes (also when not subscribed: nothing changes). */
export async function unsubscribeFromThread(s: Services, r: Requester, roomId: string, rootId: string): Promise<void> {
  await threadRoot(s, r, roomId, rootId);
  const position = await s.threadSubscriptions.store.unsubscribe(r.userId, roomId, rootId);
  if (position !== undefined) s.threadSubscriptions.feed.changed(r.userId, position);
}

/** The deactivation hook (src/main.ts): a deactivated user's subscriptions are forgotten, as Synapse. */
export async function dropThreadSubscriptionsOf(s: Services, userId: string): Promise<void> {
  await s.threadSubscriptions.store.deleteUser(userId);
}
