// Who is in a room, as membership over federation needs it: whether this server is in it (one of its users
// joined: it may then serve make_join / send_join and join its users locally), and which servers are (the
// domains of the joined members: where a leave or a join can be sent). Read from the membership rows,
// which follow current state. Spec: Server-Server API "Joining Rooms" (resident server).
import type { Services } from "../../services.ts";
import { domainOf } from "../../events/types.ts";
import { withPartialStateServers } from "../room-servers.ts";

/**
 * The servers whose users are joined to the room (this one included when it is). In a room joined with
 * partial state, the servers its join's answer named too (their members are not known here yet).
 */
export async function joinedServers(s: Services, roomId: string): Promise<Set<string>> {
  const out: string[] = [];
  for (const m of await s.rooms.store.membersOf(roomId)) {
    if (m.membership !== "join") continue;
    const d = domainOf(m.userId);
    if (d) out.push(d);
  }
  return new Set(await withPartialStateServers(s, roomId, out));
}

/** Is one of this server's users joined to the room? */
export async function hostInRoom(s: Services, roomId: string): Promise<boolean> {
  return (await joinedServers(s, roomId)).has(s.config.server_name);
}

/** This server's users joined to the room. */
export async function localJoinedMembers(s: Services, roomId: string): Promise<string[]> {
  return (await s.rooms.store.membersOf(roomId)).filter((m) => m.membership === "join" && domainOf(m.userId) === s.config.server_name).map((m) => m.userId);
}
