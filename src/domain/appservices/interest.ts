// Which application services want what (spec: Application Service API "Registration"; Synapse's rules):
// a room interests a service when its id is in the service's rooms namespace (a non-exclusive `.*` sees
// every room, from every server), one of its local aliases is in the aliases namespace, or one of its
// joined local members is the service's sender or in its users namespace. An event interests it when its
// room does, its sender does, or (membership) its target does. User namespaces count local users only.
import type { Services } from "../services.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";
import type { StoredEvent } from "../store/events.ts";
import { isAppServiceUser, isInNamespace } from "../accounts/appservices.ts";

/** The services that receive traffic (a service whose url is null receives none). */
export function reachableServices(s: Services): AppServiceRegistration[] {
  return s.config.app_services.filter((as) => as.url !== null);
}

/** Interest in a set of rooms, read in two queries (aliases, joined members) for the whole set. */
export class RoomInterest {
  private constructor(
    private readonly s: Services,
    private readonly aliases: Map<string, string[]>,
    private readonly members: Map<string, string[]>,
  ) {}

  static async load(s: Services, roomIds: Iterable<string>): Promise<RoomInterest> {
    const ids = [...new Set(roomIds)];
    if (ids.length === 0) return new RoomInterest(s, new Map(), new Map());
    const [aliases, members] = await Promise.all([s.directory.aliasesOfRooms(ids), s.rooms.store.joinedMembersOf(ids)]);
    return new RoomInterest(s, aliases, members);
  }

  /** Whether `as` is interested in the room (its id, an alias, a joined local member). */
  interested(as: AppServiceRegistration, roomId: string): boolean {
    if (isInNamespace(as, "rooms", roomId)) return true;
    if ((this.aliases.get(roomId) ?? []).some((a) => isInNamespace(as, "aliases", a))) return true;
    return (this.members.get(roomId) ?? []).some((u) => isAppServiceUser(this.s.config, as, u));
  }
}

/** Whether `as` wants an event of a room `rooms` knows. */
export function wantsEvent(s: Services, as: AppServiceRegistration, e: StoredEvent, rooms: RoomInterest): boolean {
  if (isAppServiceUser(s.config, as, e.pdu.sender)) return true;
  if (e.pdu.type === "m.room.member" && typeof e.pdu.state_key === "string" && isAppServiceUser(s.config, as, e.pdu.state_key)) return true;
  return rooms.interested(as, e.roomId);
}

/**
 * Whether `as` may see a user's presence: the user is one of its own, or shares a room it is interested
 * in (`rooms` covers the user's joined rooms, `roomsOfUser` lists them).
 */
export function wantsPresence(s: Services, as: AppServiceRegistration, userId: string, roomsOfUser: readonly string[], rooms: RoomInterest): boolean {
  return isAppServiceUser(s.config, as, userId) || roomsOfUser.some((roomId) => rooms.interested(as, roomId));
}
