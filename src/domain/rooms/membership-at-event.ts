// unsigned.membership (spec v1.11, MSC4115): the reader's membership at each event served in a timeline —
// in the state after it (its state group), their own member event's membership for that event itself,
// `leave` when they had no member event yet. Events without a known state (outliers) get none: the spec
// lets a server omit it. Batched: the events' state groups at once (mostly cached), one events read.
import type { Services } from "../services.ts";
import type { StoredEvent } from "../store/events.ts";
import { stateKeyOf } from "../store/state-groups.ts";

const MEMBER = "m.room.member";

const membershipOf = (e: StoredEvent | undefined): string => {
  const m = e?.pdu.content.membership;
  return typeof m === "string" ? m : "leave";
};

/**
 * What the caller already knows of some events (e.g. /sync: `join` for events after a join the reader
 * still holds, as its visibility check takes them), sparing their state lookups; undefined: look it up.
 */
export type MembershipHint = (e: StoredEvent) => string | undefined;

/** Event id → the membership of `userId` at it, for the events whose state is known. */
export async function membershipAtEvents(s: Services, userId: string, events: readonly StoredEvent[], hint?: MembershipHint): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const key = stateKeyOf(MEMBER, userId);
  const own = (e: StoredEvent) => e.pdu.type === MEMBER && e.pdu.state_key === userId;
  const lookUp: StoredEvent[] = [];
  for (const e of events) {
    const known = own(e) ? membershipOf(e) : hint?.(e);
    if (known !== undefined) out.set(e.eventId, known);
    else lookUp.push(e);
  }
  const groups = new Set<number>();
  for (const e of lookUp) if (e.stateGroup !== null) groups.add(e.stateGroup);
  const states = groups.size > 0 ? await s.rooms.stateGroups.getMany(groups) : new Map<number, ReadonlyMap<string, string>>();
  const memberIds = new Set<string>();
  for (const state of states.values()) {
    const id = state.get(key);
    if (id) memberIds.add(id);
  }
  const members = memberIds.size > 0 ? await s.rooms.events.getMany(memberIds) : new Map<string, StoredEvent>();
  for (const e of lookUp) {
    if (e.stateGroup === null) continue;
    const id = states.get(e.stateGroup)?.get(key);
    out.set(e.eventId, id ? membershipOf(members.get(id)) : "leave");
  }
  return out;
}
