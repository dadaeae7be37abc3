// Managing delayed events (MSC4140, Synapse's `/unstable/org.matrix.msc4140/delayed_events`): a user's
// list of scheduled events and one of them; and the actions on one by its delay id — cancel, restart
// (its delay counted again from now), send (now) — which need no access token (the delay id is the
// secret, as the MSC and Synapse have it). rc_delayed_event_mgmt applies, per user or per address.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { DelayedEventRow } from "../store/delayed-events.ts";
import { sendDelayedEvent } from "./send-delayed.ts";

export type DelayedEventAction = "cancel" | "restart" | "send";
export const DELAYED_EVENT_ACTIONS: readonly DelayedEventAction[] = ["cancel", "restart", "send"];

/** Who manages: the authenticated user, else the client's address (the actions need no token). */
export type Manager = { requester: Requester } | { ip: string };

function rateLimit(s: Services, who: Manager): void {
  s.ratelimiter.check(`delayed_event_mgmt:${"requester" in who ? who.requester.userId : `ip:${who.ip}`}`, s.config.rc_delayed_event_mgmt);
}

/** A scheduled event as the API shows it (Synapse's names, the earlier revision's `delay` / `running_since` too). */
function shape(e: DelayedEventRow, legacy: boolean): Record<string, unknown> {
  const since = e.sendTs - e.delay;
  return {
    delay_id: e.delayId,
    room_id: e.roomId,
    type: e.type,
    ...(e.stateKey !== null ? { state_key: e.stateKey } : {}),
    delay_ms: e.delay,
    delayed_since_ts: since,
    content: e.content,
    ...(legacy ? { delay: e.delay, running_since: since } : {}),
  };
}

/**
 * GET /delayed_events: the user's scheduled events, soonest first. `status` (the MSC's filter):
 * "scheduled" is these; "finalised" is none, as this server (like Synapse) keeps no sent or cancelled
 * ones. `delayIds` keeps only those.
 */
export async function listDelayedEvents(s: Services, r: Requester, filter: { status?: string; delayIds?: string[] } = {}): Promise<{ delayed_events: Record<string, unknown>[] }> {
  if (filter.status !== undefined && filter.status !== "scheduled" && filter.status !== "finalised")
    throw new MatrixError("M_INVALID_PARAM", "status must be scheduled or finalised", 400);
  rateLimit(s, { requester: r });
  if (filter.status === "finalised") return { delayed_events: [] };
  const wanted = filter.delayIds && filter.delayIds.length > 0 ? new Set(filter.delayIds) : undefined;
  const rows = await s.delayedEvents.store.scheduledOf(r.userId);
  return { delayed_events: rows.filter((e) => !wanted || wanted.has(e.delayId)).map((e) => shape(e, true)) };
}

/** GET /delayed_events/{delayId}: one of the user's scheduled events. */
export async function getDelayedEvent(s: Services, r: Requester, delayId: string): Promise<Record<string, unknown>> {
  rateLimit(s, { requester: r });
  const e = (await s.delayedEvents.store.scheduledOf(r.userId)).find((x) => x.delayId === delayId);
  if (!e) throw new MatrixError("M_NOT_FOUND", "Delayed event not found", 404);
  return shape(e, false);
}

/** POST /delayed_events/{delayId}[/{action}]: cancel, restart or send a scheduled event. */
export async function updateDelayedEvent(s: Services, who: Manager, delayId: string, action: string): Promise<void> {
  if (!(DELAYED_EVENT_ACTIONS as readonly string[]).includes(action))
    throw new MatrixError("M_INVALID_PARAM", `'action' is not one of ${DELAYED_EVENT_ACTIONS.map((a) => `'${a}'`).join(", ")}`, 400);
  rateLimit(s, who);
  const store = s.delayedEvents.store;
  const notFound = () => new MatrixError("M_NOT_FOUND", "Delayed event not found", 404);
  if (action === "cancel") {
    if (!(await store.cancel(delayId))) throw notFound();
  } else if (action === "restart") {
    const sendTs = await store.restart(delayId, s.clock.now());
    if (sendTs === undefined) throw notFound();
    s.delayedEvents.wake(sendTs);
  } else {
    const e = await store.take(delayId);
    if (!e) throw notFound();
    await sendDelayedEvent(s, e);
  }
}

/** Deactivation: the user's scheduled events go (Synapse). */
export async function cancelDelayedEventsOf(s: Services, userId: string): Promise<void> {
  await s.delayedEvents.store.cancelAllOf(userId);
}
