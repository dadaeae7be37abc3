// History visibility (spec: Client-Server API "History visibility"): which of a room's events a user may
// see, from the user's membership and the room's m.room.history_visibility at each event. world_readable:
// everyone; shared: members who are joined now, or were at the event; invited: invited or joined at the
// event; joined: joined at the event. A change of visibility (the m.room.history_visibility event itself)
// is visible to whoever the visibility before or after it lets see it (spec: "the user should be allowed
// to see the event if the history_visibility before or after the event would allow them to see it";
// Synapse takes the laxer of the two): each change takes effect from its own event on, both ways.
// Events outside the room's timeline (outliers, rejected and soft-failed events) are never served, nor
// the events of users the reader ignores (account-data/ignored-users.ts).
import type { Services } from "../services.ts";
import { inTimeline, type StoredEvent } from "../store/events.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { withoutIgnored } from "../account-data/ignored-users.ts";

const STRICTNESS = ["world_readable", "shared", "invited", "joined"];

function laxer(a: string, b: string): string {
  return STRICTNESS.indexOf(a) <= STRICTNESS.indexOf(b) ? a : b;
}

/**
 * The events `userId` may be served. Events of users they ignore are dropped too (state aside), unless
 * `keepIgnored` (acting on an event — a receipt, a report — is not being served it).
 */
export async function filterVisible(s: Services, userId: string, all: StoredEvent[], currentMembership: string | undefined, opts: { keepIgnored?: boolean } = {}): Promise<StoredEvent[]> {
  const inTl = all.every(inTimeline) ? all : all.filter(inTimeline);
  const events = opts.keepIgnored ? inTl : await withoutIgnored(s, userId, inTl);
  if (events.length === 0) return events;
  const groups = await s.rooms.stateGroups.getMany(events.map((e) => e.stateGroup!));
  const wanted = new Set<string>();
  const hvKey = stateKeyOf("m.room.history_visibility", "");
  const memberKey = stateKeyOf("m.room.member", userId);
  for (const g of groups.values()) {
    const hv = g.get(hvKey);
    const m = g.get(memberKey);
    if (hv) wanted.add(hv);
    if (m) wanted.add(m);
  }
  for (const e of events) if (e.pdu.type === "m.room.history_visibility" && e.replacesState) wanted.add(e.replacesState);
  const stateEvents = await s.rooms.events.getMany(wanted);
  const contentOf = (id: string | undefined, field: string) => {
    const v = id ? stateEvents.get(id)?.pdu.content[field] : undefined;
    return typeof v === "string" ? v : undefined;
  };
  return events.filter((e) => {
    const g = groups.get(e.stateGroup!)!;
    let visibility = contentOf(g.get(hvKey), "history_visibility") ?? "shared";
    if (e.pdu.type === "m.room.history_visibility") visibility = laxer(visibility, contentOf(e.replacesState ?? undefined, "history_visibility") ?? "shared");
    if (visibility === "world_readable") return true;
    const membership = contentOf(g.get(memberKey), "membership");
    if (membership === "join") return true;
    // A user always sees the event that changed their own membership.
    if (e.pdu.type === "m.room.member" && e.pdu.state_key === userId) return true;
    if (visibility === "shared") return currentMembership === "join";
    if (visibility === "invited") return membership === "invite";
    return false;
  });
}
