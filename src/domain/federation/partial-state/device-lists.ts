// Device lists in a room joined with partial state, as Synapse (handlers/device.py
// `handle_room_un_partial_stated`): while some room is partial, remote users' m.device_list_update EDUs
// are noted (device_lists_remote_pending), since who is in such a room is not known yet. Once a room's
// state is complete, in the transaction that clears its flag: the noted updates of its joined members
// received since the join move our device-list stream (local /sync and /keys/changes show them), and the
// local members' device changes since the join go to the servers that missed them — those joined now or
// whose members' membership changed since the join (a kick the full state rejects, a join and leave
// meanwhile), less the servers of the join's answer, which were sent every change.
// Spec: Server-Server API "Device Management"; MSC3902 (faster joins).
import type { Services } from "../../services.ts";
import type { SqlExecutor } from "../../../storage/sql.ts";
import { announceDeviceListChange, recordDeviceListChange } from "../../e2ee/device-lists.ts";
import { serverOfUser } from "../room-servers.ts";
import { queueMissedDeviceListUpdates } from "../edus/device-lists.ts";
import { partialStateRooms } from "./flag.ts";
import type { PartialStateCompleted } from "./resync.ts";

const MEMBER_PREFIX = "m.room.member\u0000";

/** Notes a remote user's device-list update while some room is partial (nothing otherwise). */
export async function notePendingRemoteUpdate(s: Services, userId: string, deviceId: string): Promise<void> {
  if ((await partialStateRooms(s)).length === 0) return;
  const pos = await s.e2ee.currentDeviceListPosition();
  await s.storage.sql.run(
    `INSERT INTO device_lists_remote_pending (user_id, device_id, stream_id) VALUES (?, ?, ?)
     ON CONFLICT (user_id, device_id) DO UPDATE SET stream_id = excluded.stream_id`,
    [userId, deviceId, pos],
  );
}

/** Declared in src/main.ts (`partialStateCompleted`): run in the transaction that completes a room. */
export async function deviceListsOnFullState(s: Services, tx: SqlExecutor, done: PartialStateCompleted): Promise<void> {
  const { room: ps, beforeJoin } = done;
  const members = await tx.all<{ user_id: string; membership: string; event_id: string }>(`SELECT user_id, membership, event_id FROM room_memberships WHERE room_id = ?`, [ps.roomId]);
  const local = (u: string) => serverOfUser(u) === s.config.server_name;
  const from = ps.deviceListsStream;
  // Rows from before the position was kept: the updates noted or made since the join are not known.
  if (from !== undefined) {
    // Remote members' updates noted while partial: their devices changed, as far as local users know.
    const joined = new Set(members.filter((m) => m.membership === "join" && !local(m.user_id)).map((m) => m.user_id));
    const pending = await tx.all<{ user_id: string; device_id: string }>(`SELECT user_id, device_id FROM device_lists_remote_pending WHERE stream_id >= ?`, [from]);
    const byUser = new Map<string, string[]>();
    for (const p of pending) if (joined.has(p.user_id)) byUser.set(p.user_id, [...(byUser.get(p.user_id) ?? []), p.device_id]);
    for (const [userId, deviceIds] of byUser) {
      const pos = await recordDeviceListChange(s, tx, userId, deviceIds);
      tx.onSettled?.((committed) => {
        if (committed) void announceDeviceListChange(s, userId, pos).catch((err: unknown) => s.log.warn({ err, userId }, "could not announce a device-list change"));
      });
    }
  }
  if ((await partialStateRooms(s)).every((p) => p.roomId === ps.roomId)) await tx.run(`DELETE FROM device_lists_remote_pending`);
  if (from === undefined || !s.config.send_federation) return;

  // Servers that may have missed local changes: those whose members' membership changed since the join,
  // and those joined now; not the join's answer's (sent every change meanwhile), nor ours.
  const before = new Map<string, string>();
  for (const [key, id] of beforeJoin) if (key.startsWith(MEMBER_PREFIX)) before.set(key.slice(MEMBER_PREFIX.length), id);
  const now = new Map(members.map((m) => [m.user_id, m.event_id]));
  const hosts = new Set<string>();
  for (const userId of new Set([...before.keys(), ...now.keys()])) if (before.get(userId) !== now.get(userId)) hosts.add(serverOfUser(userId) ?? "");
  for (const m of members) if (m.membership === "join") hosts.add(serverOfUser(m.user_id) ?? "");
  for (const d of [...ps.servers, s.config.server_name, ""]) hosts.delete(d);
  const users = new Set(members.filter((m) => m.membership === "join" && local(m.user_id)).map((m) => m.user_id));
  if (hosts.size === 0 || users.size === 0) return;
  const wake = await queueMissedDeviceListUpdates(s, tx, from, await s.e2ee.currentDeviceListPosition(), users, hosts);
  s.log.info({ roomId: ps.roomId, servers: [...hosts] }, "partial-state room complete: local device-list changes sent to the servers that missed them");
  tx.onSettled?.((committed) => {
    if (committed) s.federationSender.wake(wake);
  });
}
