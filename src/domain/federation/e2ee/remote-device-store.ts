// Repository of what this server keeps of other servers' users for E2EE: the copy of a remote user's
// device list (its keys live in e2e_device_keys / e2e_cross_signing_keys beside our own users'; the
// last stream_id their server sent is in remote_device_lists), and the m.direct_to_device messages
// already delivered (federation_to_device_seen, by sender and message_id). Raw SQL over both databases.
import type { SqlExecutor } from "../../../storage/sql.ts";

const marks = (k: number) => Array.from({ length: k }, () => "?").join(", ");

/** The last stream_id stored for each of `userIds` whose device list is kept here. */
export async function cachedDeviceLists(ex: SqlExecutor, userIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < userIds.length; i += 500) {
    const chunk = userIds.slice(i, i + 500);
    const rows = await ex.all<{ user_id: string; stream_id: number | bigint }>(`SELECT user_id, stream_id FROM remote_device_lists WHERE user_id IN (${marks(chunk.length)})`, chunk);
    for (const r of rows) out.set(r.user_id, Number(r.stream_id));
  }
  return out;
}

/** When each of `userIds` whose device list is kept here last had it written (ms). */
export async function cachedDeviceListTimes(ex: SqlExecutor, userIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < userIds.length; i += 500) {
    const chunk = userIds.slice(i, i + 500);
    const rows = await ex.all<{ user_id: string; ts: number | bigint }>(`SELECT user_id, ts FROM remote_device_lists WHERE user_id IN (${marks(chunk.length)})`, chunk);
    for (const r of rows) out.set(r.user_id, Number(r.ts));
  }
  return out;
}

export async function setCachedStreamId(tx: SqlExecutor, userId: string, streamId: number, now: number): Promise<void> {
  const changed = await tx.run(`UPDATE remote_device_lists SET stream_id = ?, ts = ? WHERE user_id = ?`, [streamId, now, userId]);
  if (changed === 0) await tx.run(`INSERT INTO remote_device_lists (user_id, stream_id, ts) VALUES (?, ?, ?)`, [userId, streamId, now]);
}

/** Forgets the copy of a remote user's device list (keys included): it is no longer kept up to date. */
export async function dropCachedDeviceList(tx: SqlExecutor, userId: string): Promise<void> {
  await tx.run(`DELETE FROM remote_device_lists WHERE user_id = ?`, [userId]);
  await tx.run(`DELETE FROM e2e_device_keys WHERE user_id = ?`, [userId]);
  await tx.run(`DELETE FROM e2e_cross_signing_keys WHERE user_id = ?`, [userId]);
}

/**
 * Users joined to `roomId` whose device list is kept here but who share no joined room with any local user
 * (one of ours has just left): their copies no longer follow their server's updates.
 */
export async function unsharedCopiesIn(ex: SqlExecutor, roomId: string): Promise<string[]> {
  const rows = await ex.all<{ user_id: string }>(
    `SELECT d.user_id AS user_id FROM remote_device_lists d JOIN room_memberships m ON m.user_id = d.user_id
     WHERE m.room_id = ? AND m.membership = 'join' AND NOT EXISTS (
       SELECT 1 FROM room_memberships a JOIN room_memberships b ON b.room_id = a.room_id JOIN users u ON u.user_id = b.user_id
       WHERE a.user_id = d.user_id AND a.membership = 'join' AND b.membership = 'join')`,
    [roomId],
  );
  return rows.map((r) => r.user_id);
}

/** Replaces all device keys of a remote user with `devices` (device id → canonical JSON). */
export async function replaceRemoteDeviceKeys(tx: SqlExecutor, userId: string, devices: ReadonlyMap<string, string>, now: number): Promise<void> {
  await tx.run(`DELETE FROM e2e_device_keys WHERE user_id = ?`, [userId]);
  for (const [deviceId, json] of devices) await tx.run(`INSERT INTO e2e_device_keys (user_id, device_id, json, ts) VALUES (?, ?, ?, ?)`, [userId, deviceId, json, now]);
}

export async function deleteRemoteDeviceKeys(tx: SqlExecutor, userId: string, deviceId: string): Promise<void> {
  await tx.run(`DELETE FROM e2e_device_keys WHERE user_id = ? AND device_id = ?`, [userId, deviceId]);
}

/** Records that a to-device message was received; false when it was already (a resent EDU). */
export async function claimToDeviceMessage(tx: SqlExecutor, sender: string, messageId: string, now: number): Promise<boolean> {
  if (await tx.get(`SELECT 1 AS x FROM federation_to_device_seen WHERE sender = ? AND message_id = ?`, [sender, messageId])) return false;
  await tx.run(`INSERT INTO federation_to_device_seen (sender, message_id, ts) VALUES (?, ?, ?)`, [sender, messageId, now]);
  return true;
}

/** The latest device-list stream position of each local user that everyone may hear of (0 when none). */
export async function lastDeviceListPositions(ex: SqlExecutor, userIds: readonly string[], below?: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < userIds.length; i += 500) {
    const chunk = userIds.slice(i, i + 500);
    const rows = await ex.all<{ user_id: string; m: number | bigint | null }>(
      `SELECT user_id, MAX(stream_id) AS m FROM device_list_stream WHERE only_for IS NULL AND user_id IN (${marks(chunk.length)})${below === undefined ? "" : " AND stream_id <= ?"} GROUP BY user_id`,
      below === undefined ? chunk : [...chunk, below],
    );
    for (const r of rows) out.set(r.user_id, Number(r.m ?? 0));
  }
  return out;
}

/** Rows of the device-list stream in (from, to] that everyone may hear of, oldest first. */
export async function publicDeviceListRows(ex: SqlExecutor, from: number, to: number): Promise<{ streamId: number; userId: string; deviceId: string }[]> {
  const rows = await ex.all<{ stream_id: number | bigint; user_id: string; device_id: string }>(
    `SELECT stream_id, user_id, device_id FROM device_list_stream WHERE stream_id > ? AND stream_id <= ? AND only_for IS NULL ORDER BY stream_id`,
    [from, to],
  );
  return rows.map((r) => ({ streamId: Number(r.stream_id), userId: r.user_id, deviceId: r.device_id }));
}
