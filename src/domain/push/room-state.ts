// What push evaluation needs to know of a room, kept in memory per room: its local joined members with
// their display names, the joined member count (room_member_count) and the power levels (for
// sender_notification_permission). Loaded once per room from the memberships table (inside the commit,
// corrected to the state before the batch being committed), then moved along by the events the indexer
// sees; a batch that fails drops the room's entry so it is read again.
import type { Services } from "../services.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import type { StoredEvent } from "../store/events.ts";
import type { Pdu } from "../events/types.ts";
import type { RoomSnapshot } from "../rooms/room-cache.ts";
import { AuthContext, stateMapKey, userPowerLevel } from "../auth/index.ts";
import { parsePowerLevel } from "../auth/power-levels.ts";
import { isPlainObject } from "../events/types.ts";
import { stateKeyOf } from "../store/state-groups.ts";

export class RoomPushState {
  constructor(
    /** Local joined members → display name in the room. */
    readonly local: Map<string, string | undefined>,
    /** Remote joined members (only to keep the joined member count right as they come and go). */
    readonly remoteJoined: Set<string>,
    public powerLevels: Pdu | undefined,
    private readonly room: Pick<RoomSnapshot, "version" | "createEvent">,
  ) {}

  private levels: { user(u: string): number; notification(key: string): number } | undefined;

  /** Joined members, local and remote (room_member_count). */
  get joinedCount(): number {
    return this.local.size + this.remoteJoined.size;
  }

  clone(): RoomPushState {
    return new RoomPushState(new Map(this.local), new Set(this.remoteJoined), this.powerLevels, this.room);
  }

  /** Power: the user's level and the level a `notifications` key requires (default 50). */
  power(): { user(u: string): number; notification(key: string): number } {
    if (this.levels) return this.levels;
    const state = new Map<string, Pdu>([[stateMapKey("m.room.create", ""), this.room.createEvent]]);
    if (this.powerLevels) state.set(stateMapKey("m.room.power_levels", ""), this.powerLevels);
    const ctx = new AuthContext(this.room.createEvent, state, this.room.version, { createEvent: this.room.createEvent });
    const notifications = this.powerLevels?.content.notifications;
    const version = this.room.version;
    const users = new Map<string, number>();
    return (this.levels = {
      user: (u) => {
        let n = users.get(u);
        if (n === undefined) users.set(u, (n = userPowerLevel(ctx, u)));
        return n;
      },
      notification: (key) => (isPlainObject(notifications) && Object.hasOwn(notifications, key) ? (parsePowerLevel(notifications[key], version) ?? 50) : 50),
    });
  }

  /** Moves the state past one event of the room (member and power level events change it). */
  apply(e: Pdu, isLocal: (userId: string) => boolean): { joined?: string; left?: string } {
    if (e.state_key === undefined) return {};
    if (e.type === "m.room.power_levels" && e.state_key === "") {
      this.powerLevels = e;
      this.levels = undefined;
      return {};
    }
    if (e.type !== "m.room.member") return {};
    const user = e.state_key;
    const c = e.content as { membership?: unknown; displayname?: unknown };
    const wasJoined = this.local.has(user) || this.remoteJoined.has(user);
    const nowJoined = c.membership === "join";
    if (isLocal(user)) {
      if (nowJoined) this.local.set(user, typeof c.displayname === "string" ? c.displayname : undefined);
      else this.local.delete(user);
    } else if (nowJoined) this.remoteJoined.add(user);
    else this.remoteJoined.delete(user);
    if (isLocal(user) && nowJoined && !wasJoined) return { joined: user };
    if (isLocal(user) && wasJoined && !nowJoined) return { left: user };
    return {};
  }
}

interface MemberRow {
  user_id: string;
  membership: string;
  displayname: string | null;
}

/**
 * The room's state before `batch` (events being committed in `tx`): from memory, else from the
 * memberships table read in the transaction, with the rows the batch already changed taken back to the
 * member event each first replaced.
 */
export async function roomStateBefore(s: Services, tx: SqlExecutor, room: RoomSnapshot, batch: StoredEvent[]): Promise<RoomPushState> {
  const cached = s.push.rooms.get(room.roomId);
  if (cached) return cached;
  const rows = await tx.all<MemberRow>(`SELECT user_id, membership, displayname FROM room_memberships WHERE room_id = ? AND membership = 'join'`, [room.roomId]);
  const joined = new Map<string, string | undefined>(rows.map((r) => [r.user_id, r.displayname ?? undefined]));
  const firstChange = new Map<string, StoredEvent>();
  for (const e of batch) if (e.pdu.type === "m.room.member" && e.pdu.state_key !== undefined && !firstChange.has(e.pdu.state_key)) firstChange.set(e.pdu.state_key, e);
  const previous = await s.rooms.events.getMany([...firstChange.values()].map((e) => e.replacesState).filter((x): x is string => !!x));
  for (const [user, e] of firstChange) {
    joined.delete(user);
    const prev = e.replacesState ? previous.get(e.replacesState)?.pdu : undefined;
    const c = prev?.content as { membership?: unknown; displayname?: unknown } | undefined;
    if (c?.membership === "join") joined.set(user, typeof c.displayname === "string" ? c.displayname : undefined);
  }
  const plId = room.state.get(stateKeyOf("m.room.power_levels", ""));
  const pl = plId ? (await s.rooms.events.get(plId))?.pdu : undefined;
  const suffix = `:${s.config.server_name}`;
  const local = new Map<string, string | undefined>();
  const remote = new Set<string>();
  for (const [u, name] of joined) {
    if (u.endsWith(suffix)) local.set(u, name);
    else remote.add(u);
  }
  return new RoomPushState(local, remote, pl, room);
}
