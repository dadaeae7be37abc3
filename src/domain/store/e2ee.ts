// Repository of end-to-end encryption data over raw SQL: device keys, one-time and fallback keys,
// cross-signing keys and signatures, the device-list stream, the to-device inbox and its transaction ids,
// and server-side key backups (tables e2e_*, device_list_stream, to_device_*, stream_high_water).
// Methods taking a `SqlExecutor` run inside the caller's transaction (see `prismaExecutor` for running
// them inside a Prisma transaction, as device deletion does).
import type { Dialect, Param, Sql, SqlExecutor } from "../../storage/sql.ts";
import { settleHooksOf } from "../../storage/sql.ts";
import { toPgPlaceholders } from "../../storage/pg-placeholders.ts";
import type { Tx } from "../../storage/database.ts";
import { idAllocator, type IdAllocator } from "./ids.ts";
import { LruCache } from "../cache/lru.ts";
import { IN_TIMELINE_SQL } from "./events.ts";

const n = (v: unknown): number => Number(v ?? 0);
const marks = (k: number) => Array.from({ length: k }, () => "?").join(", ");

/** A SqlExecutor over a Prisma interactive transaction, so repository methods join its transaction. */
export function prismaExecutor(tx: Tx, dialect: Dialect): SqlExecutor {
  const text = (sql: string) => (dialect === "postgres" ? toPgPlaceholders(sql) : sql);
  const all = async <T>(sql: string, p: Param[] = []) => (await tx.$queryRawUnsafe(text(sql), ...p)) as T[];
  const hooks = settleHooksOf(tx);
  return {
    dialect,
    run: async (sql, p = []) => Number(await tx.$executeRawUnsafe(text(sql), ...p)),
    all,
    get: async <T>(sql: string, p: Param[] = []) => (await all<T>(sql, p))[0],
    // Set when the transaction runs through runWithSettleHooks (needed to allocate stream positions).
    ...(hooks ? { onSettled: (fn: (committed: boolean) => void) => hooks.add(fn) } : {}),
  };
}

export interface DeviceKeysRow {
  userId: string;
  deviceId: string;
  json: string;
}

export interface SignatureRow {
  signerUserId: string;
  signingKeyId: string;
  targetUserId: string;
  targetKeyId: string;
  signature: string;
}

export interface ToDeviceRow {
  streamId: number;
  sender: string;
  type: string;
  content: string;
}

export interface BackupVersionRow {
  userId: string;
  version: number;
  algorithm: string;
  authData: string;
  etag: number;
  deleted: boolean;
}

export interface RoomKeyRow {
  roomId: string;
  sessionId: string;
  firstMessageIndex: number;
  forwardedCount: number;
  isVerified: boolean;
  sessionData: string;
}

/** The to-device allocator: like idAllocator, but seeded past the high-water mark (rows get deleted). */
function toDeviceAllocator(sql: Sql): IdAllocator {
  const seed = `SELECT MAX(m) AS m FROM (SELECT MAX(stream_id) AS m FROM to_device_inbox UNION ALL SELECT position AS m FROM stream_high_water WHERE stream = 'to_device') x`;
  return idAllocator(sql, "to_device_inbox", "stream_id", "to_device_stream_seq", seed);
}

/** A device's one-time key counts and unused fallback key types, as /sync reports them. */
export interface KeySummary {
  otk?: Record<string, number>;
  fallback?: string[];
}

export class E2eStore {
  readonly deviceListIds: IdAllocator;
  readonly toDeviceIds: IdAllocator;
  constructor(
    readonly sql: Sql,
    keySummaries: LruCache<string, KeySummary> = new LruCache("e2e_key_summaries", 50_000),
  ) {
    this.keySummaries = keySummaries;
    this.deviceListIds = idAllocator(sql, "device_list_stream", "stream_id", "device_list_stream_seq");
    this.toDeviceIds = toDeviceAllocator(sql);
  }

  /**
   * Serializes the transactions `tx` joins with others taking the same `key`, until it ends. SQLite
   * transactions are serialized already; PostgreSQL takes a transaction-scoped advisory lock. Used for
   * read-then-write sequences (a device's key upload) and for the to-device and device-list streams,
   * whose positions must become visible in order: a reader that saw position n never sees n-1 later.
   * Lock order: per-device / per-user keys first, then "to_device" or "device_lists".
   */
  async lock(tx: SqlExecutor, key: string): Promise<void> {
    if (tx.dialect === "postgres") await tx.get(`SELECT 1 AS x FROM (SELECT pg_advisory_xact_lock(hashtext(?))) l`, [key]);
  }

  // Device keys

  async deviceKeysOf(userIds: readonly string[], ex: SqlExecutor = this.sql): Promise<DeviceKeysRow[]> {
    if (userIds.length === 0) return [];
    const rows = await ex.all<{ user_id: string; device_id: string; json: string }>(
      `SELECT user_id, device_id, json FROM e2e_device_keys WHERE user_id IN (${marks(userIds.length)})`,
      [...userIds],
    );
    return rows.map((r) => ({ userId: r.user_id, deviceId: r.device_id, json: r.json }));
  }

  async deviceKeys(userId: string, deviceId: string, ex: SqlExecutor = this.sql): Promise<string | undefined> {
    const r = await ex.get<{ json: string }>(`SELECT json FROM e2e_device_keys WHERE user_id = ? AND device_id = ?`, [userId, deviceId]);
    return r?.json;
  }

  async setDeviceKeys(tx: SqlExecutor, userId: string, deviceId: string, json: string, now: number): Promise<void> {
    const changed = await tx.run(`UPDATE e2e_device_keys SET json = ?, ts = ? WHERE user_id = ? AND device_id = ?`, [json, now, userId, deviceId]);
    if (changed === 0) await tx.run(`INSERT INTO e2e_device_keys (user_id, device_id, json, ts) VALUES (?, ?, ?, ?)`, [userId, deviceId, json, now]);
  }

  /** Display names of the users' devices (devices table), for `unsigned.device_display_name`. */
  async deviceNames(userIds: readonly string[]): Promise<Map<string, string | null>> {
    if (userIds.length === 0) return new Map();
    const rows = await this.sql.all<{ user_id: string; device_id: string; display_name: string | null }>(
      `SELECT user_id, device_id, display_name FROM devices WHERE user_id IN (${marks(userIds.length)})`,
      [...userIds],
    );
    return new Map(rows.map((r) => [`${r.user_id}\u0000${r.device_id}`, r.display_name]));
  }

  // One-time keys

  async existingOneTimeKeys(tx: SqlExecutor, userId: string, deviceId: string): Promise<Map<string, string>> {
    const rows = await tx.all<{ algorithm: string; key_id: string; json: string }>(
      `SELECT algorithm, key_id, json FROM e2e_one_time_keys WHERE user_id = ? AND device_id = ?`,
      [userId, deviceId],
    );
    return new Map(rows.map((r) => [`${r.algorithm}:${r.key_id}`, r.json]));
  }

  async insertOneTimeKey(tx: SqlExecutor, userId: string, deviceId: string, algorithm: string, keyId: string, json: string, seq: number): Promise<void> {
    await tx.run(`INSERT INTO e2e_one_time_keys (user_id, device_id, algorithm, key_id, json, seq) VALUES (?, ?, ?, ?, ?, ?)`, [userId, deviceId, algorithm, keyId, json, seq]);
    this.keysTouched(tx, userId, [deviceId]);
  }

  // Every /sync of a device reports its one-time key counts and unused fallback key types: both are
  // cached per device, dropped by every write of this store to those tables (after the statement and
  // again when its transaction settles); a read that raced a write is not kept.
  private readonly keySummaries: LruCache<string, KeySummary>;
  private keyWrites = 0;

  private keysTouched(tx: SqlExecutor, userId: string, deviceIds: readonly string[]): void {
    this.forgetKeySummaries(userId, deviceIds);
    tx.onSettled?.((committed) => {
      this.forgetKeySummaries(userId, deviceIds);
      if (committed) this.onKeysChanged?.(userId, deviceIds);
    });
  }

  /** Several processes: told when a write of these devices' keys committed (cluster/replication.ts relays it). */
  onKeysChanged: ((userId: string, deviceIds: readonly string[]) => void) | undefined = undefined;

  /** Drops the devices' cached key counts (a write here, or another process's). */
  forgetKeySummaries(userId: string, deviceIds: readonly string[]): void {
    this.keyWrites++;
    for (const d of deviceIds) this.keySummaries.delete(`${userId}\u0000${d}`);
  }

  private async keySummary<K extends "otk" | "fallback">(userId: string, deviceId: string, field: K, read: () => Promise<NonNullable<{ otk?: Record<string, number>; fallback?: string[] }[K]>>) {
    const key = `${userId}\u0000${deviceId}`;
    const hit = this.keySummaries.get(key)?.[field];
    if (hit !== undefined) return hit;
    const writes = this.keyWrites;
    const value = await read();
    if (writes === this.keyWrites) this.keySummaries.set(key, { ...this.keySummaries.get(key), [field]: value });
    return value;
  }

  async oneTimeKeyCounts(userId: string, deviceId: string, ex: SqlExecutor = this.sql): Promise<Record<string, number>> {
    const read = async () => {
      const rows = await ex.all<{ algorithm: string; c: number }>(
        `SELECT algorithm, COUNT(*) AS c FROM e2e_one_time_keys WHERE user_id = ? AND device_id = ? GROUP BY algorithm`,
        [userId, deviceId],
      );
      return Object.fromEntries(rows.map((r) => [r.algorithm, n(r.c)]));
    };
    // Inside a transaction: its own view, never cached. Callers get a copy (they may add fields).
    return ex === this.sql ? { ...(await this.keySummary(userId, deviceId, "otk", read)) } : read();
  }

  /** Takes the oldest one-time key of the algorithm (deleting it), or undefined when none is left. */
  async takeOneTimeKey(tx: SqlExecutor, userId: string, deviceId: string, algorithm: string): Promise<{ keyId: string; json: string } | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await tx.get<{ key_id: string; json: string }>(
        `SELECT key_id, json FROM e2e_one_time_keys WHERE user_id = ? AND device_id = ? AND algorithm = ? ORDER BY seq, key_id LIMIT 1`,
        [userId, deviceId, algorithm],
      );
      if (!row) return undefined;
      // A concurrent claim (PostgreSQL) may have taken it first: then try the next one.
      const gone = await tx.run(`DELETE FROM e2e_one_time_keys WHERE user_id = ? AND device_id = ? AND algorithm = ? AND key_id = ?`, [userId, deviceId, algorithm, row.key_id]);
      this.keysTouched(tx, userId, [deviceId]);
      if (gone === 1) return { keyId: row.key_id, json: row.json };
    }
    return undefined;
  }

  // Fallback keys

  async fallbackKey(tx: SqlExecutor, userId: string, deviceId: string, algorithm: string): Promise<{ keyId: string; json: string; used: boolean } | undefined> {
    const r = await tx.get<{ key_id: string; json: string; used: number | boolean }>(
      `SELECT key_id, json, used FROM e2e_fallback_keys WHERE user_id = ? AND device_id = ? AND algorithm = ?`,
      [userId, deviceId, algorithm],
    );
    return r && { keyId: r.key_id, json: r.json, used: Boolean(r.used) };
  }

  async setFallbackKey(tx: SqlExecutor, userId: string, deviceId: string, algorithm: string, keyId: string, json: string): Promise<void> {
    const changed = await tx.run(`UPDATE e2e_fallback_keys SET key_id = ?, json = ?, used = ? WHERE user_id = ? AND device_id = ? AND algorithm = ?`, [keyId, json, false, userId, deviceId, algorithm]);
    if (changed === 0)
      await tx.run(`INSERT INTO e2e_fallback_keys (user_id, device_id, algorithm, key_id, json, used) VALUES (?, ?, ?, ?, ?, ?)`, [userId, deviceId, algorithm, keyId, json, false]);
    this.keysTouched(tx, userId, [deviceId]);
  }

  async markFallbackUsed(tx: SqlExecutor, userId: string, deviceId: string, algorithm: string): Promise<void> {
    await tx.run(`UPDATE e2e_fallback_keys SET used = ? WHERE user_id = ? AND device_id = ? AND algorithm = ?`, [true, userId, deviceId, algorithm]);
    this.keysTouched(tx, userId, [deviceId]);
  }

  async unusedFallbackAlgorithms(userId: string, deviceId: string): Promise<string[]> {
    const read = async () => {
      const rows = await this.sql.all<{ algorithm: string }>(
        `SELECT algorithm FROM e2e_fallback_keys WHERE user_id = ? AND device_id = ? AND used = ? ORDER BY algorithm`,
        [userId, deviceId, false],
      );
      return rows.map((r) => r.algorithm);
    };
    return [...(await this.keySummary(userId, deviceId, "fallback", read))];
  }

  // Cross-signing keys and signatures

  async crossSigningKeysOf(userIds: readonly string[], ex: SqlExecutor = this.sql): Promise<Map<string, Map<string, string>>> {
    const out = new Map<string, Map<string, string>>();
    if (userIds.length === 0) return out;
    const rows = await ex.all<{ user_id: string; key_type: string; json: string }>(
      `SELECT user_id, key_type, json FROM e2e_cross_signing_keys WHERE user_id IN (${marks(userIds.length)})`,
      [...userIds],
    );
    for (const r of rows) {
      let m = out.get(r.user_id);
      if (!m) out.set(r.user_id, (m = new Map()));
      m.set(r.key_type, r.json);
    }
    return out;
  }

  /** Stores a key; a new key is not replaceable without UIA until the admin API says so again. */
  async setCrossSigningKey(tx: SqlExecutor, userId: string, keyType: string, json: string, now: number): Promise<void> {
    const changed = await tx.run(
      `UPDATE e2e_cross_signing_keys SET json = ?, ts = ?, updatable_without_uia_before_ms = NULL WHERE user_id = ? AND key_type = ?`,
      [json, now, userId, keyType],
    );
    if (changed === 0) await tx.run(`INSERT INTO e2e_cross_signing_keys (user_id, key_type, json, ts) VALUES (?, ?, ?, ?)`, [userId, keyType, json, now]);
  }

  /** Until when the user's master key may be replaced without UIA (null: it may not, or there is none). */
  async masterReplaceableUntil(userId: string): Promise<number | null> {
    const row = await this.sql.get<{ until: number | bigint | string | null }>(
      `SELECT updatable_without_uia_before_ms AS until FROM e2e_cross_signing_keys WHERE user_id = ? AND key_type = 'master'`,
      [userId],
    );
    return row?.until === null || row?.until === undefined ? null : Number(row.until);
  }

  /** Lets the user's master key be replaced without UIA until `until`; false when there is no master key. */
  async allowMasterReplacement(userId: string, until: number): Promise<boolean> {
    const changed = await this.sql.run(
      `UPDATE e2e_cross_signing_keys SET updatable_without_uia_before_ms = ? WHERE user_id = ? AND key_type = 'master'`,
      [until, userId],
    );
    return changed > 0;
  }

  /** Stored signatures on keys of `targetUserIds`, made by the target user themselves or by `viewer`. */
  async signaturesOn(targetUserIds: readonly string[], viewer: string): Promise<SignatureRow[]> {
    if (targetUserIds.length === 0) return [];
    const rows = await this.sql.all<{ signer_user_id: string; signing_key_id: string; target_user_id: string; target_key_id: string; signature: string }>(
      `SELECT signer_user_id, signing_key_id, target_user_id, target_key_id, signature FROM e2e_cross_signing_signatures
       WHERE target_user_id IN (${marks(targetUserIds.length)}) AND (signer_user_id = target_user_id OR signer_user_id = ?)`,
      [...targetUserIds, viewer],
    );
    return rows.map((r) => ({ signerUserId: r.signer_user_id, signingKeyId: r.signing_key_id, targetUserId: r.target_user_id, targetKeyId: r.target_key_id, signature: r.signature }));
  }

  async putSignature(tx: SqlExecutor, r: SignatureRow): Promise<void> {
    await tx.run(
      `DELETE FROM e2e_cross_signing_signatures WHERE target_user_id = ? AND target_key_id = ? AND signer_user_id = ? AND signing_key_id = ?`,
      [r.targetUserId, r.targetKeyId, r.signerUserId, r.signingKeyId],
    );
    await tx.run(
      `INSERT INTO e2e_cross_signing_signatures (signer_user_id, signing_key_id, target_user_id, target_key_id, signature) VALUES (?, ?, ?, ?, ?)`,
      [r.signerUserId, r.signingKeyId, r.targetUserId, r.targetKeyId, r.signature],
    );
  }

  /** Removes everything bound to the devices: keys, one-time and fallback keys, signatures on them, inbox. */
  async deleteDeviceData(tx: SqlExecutor, userId: string, deviceIds: readonly string[]): Promise<void> {
    if (deviceIds.length === 0) return;
    const p = [userId, ...deviceIds];
    const inList = marks(deviceIds.length);
    await tx.run(`DELETE FROM e2e_device_keys WHERE user_id = ? AND device_id IN (${inList})`, p);
    await tx.run(`DELETE FROM e2e_one_time_keys WHERE user_id = ? AND device_id IN (${inList})`, p);
    await tx.run(`DELETE FROM e2e_fallback_keys WHERE user_id = ? AND device_id IN (${inList})`, p);
    this.keysTouched(tx, userId, deviceIds);
    await tx.run(`DELETE FROM e2e_cross_signing_signatures WHERE target_user_id = ? AND target_key_id IN (${inList})`, p);
    await tx.run(`DELETE FROM to_device_inbox WHERE recipient_user_id = ? AND recipient_device_id IN (${inList})`, p);
  }

  // The device-list stream

  /** Appends rows (one position for the batch) and returns the position. */
  async appendDeviceListChanges(tx: SqlExecutor, userId: string, deviceIds: readonly string[], onlyFor: string | null = null): Promise<number> {
    await this.lock(tx, "device_lists");
    let pos = 0;
    for (const d of deviceIds) {
      pos = await this.deviceListIds.next(tx);
      await tx.run(`INSERT INTO device_list_stream (stream_id, user_id, device_id, only_for) VALUES (?, ?, ?, ?)`, [pos, userId, d, onlyFor]);
    }
    return pos;
  }

  /** Users whose devices changed in (from, to], as `viewer` may hear of it. */
  async deviceListChangedUsers(viewer: string, from: number, to: number): Promise<string[]> {
    const rows = await this.sql.all<{ user_id: string }>(
      `SELECT DISTINCT user_id FROM device_list_stream WHERE stream_id > ? AND stream_id <= ? AND (only_for IS NULL OR only_for = ?)`,
      [from, to, viewer],
    );
    return rows.map((r) => r.user_id);
  }

  /** The stream's persisted-up-to position (ids.ts). */
  currentDeviceListPosition(): number | Promise<number> {
    return this.deviceListIds.now();
  }

  /** Every user sharing a joined room with `userId` (themselves included when joined anywhere). */
  async usersSharingRoomsWith(userId: string): Promise<Set<string>> {
    const rows = await this.sql.all<{ user_id: string }>(
      `SELECT DISTINCT b.user_id AS user_id FROM room_memberships a JOIN room_memberships b ON a.room_id = b.room_id
       WHERE a.user_id = ? AND a.membership = 'join' AND b.membership = 'join'`,
      [userId],
    );
    return new Set(rows.map((r) => r.user_id));
  }

  async joinedRooms(userId: string): Promise<string[]> {
    const rows = await this.sql.all<{ room_id: string }>(`SELECT room_id FROM room_memberships WHERE user_id = ? AND membership = 'join'`, [userId]);
    return rows.map((r) => r.room_id);
  }

  async joinedMembersOf(roomIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (roomIds.length === 0) return out;
    const rows = await this.sql.all<{ room_id: string; user_id: string }>(
      `SELECT room_id, user_id FROM room_memberships WHERE membership = 'join' AND room_id IN (${marks(roomIds.length)})`,
      [...roomIds],
    );
    for (const r of rows) {
      const l = out.get(r.room_id);
      if (l) l.push(r.user_id);
      else out.set(r.room_id, [r.user_id]);
    }
    return out;
  }

  /** Membership events in (from, to] of the given rooms, or about `userId` in any room. */
  async membershipEventsBetween(roomIds: readonly string[], userId: string, from: number, to: number): Promise<{ roomId: string; stateKey: string; json: string }[]> {
    const roomCond = roomIds.length > 0 ? `room_id IN (${marks(roomIds.length)}) OR ` : "";
    const rows = await this.sql.all<{ room_id: string; state_key: string; json: string }>(
      `SELECT room_id, state_key, json FROM events WHERE type = 'm.room.member' AND stream_ordering > ? AND stream_ordering <= ?
       AND ${IN_TIMELINE_SQL} AND (${roomCond}state_key = ?) ORDER BY stream_ordering`,
      [from, to, ...roomIds, userId],
    );
    return rows.map((r) => ({ roomId: r.room_id, stateKey: r.state_key, json: r.json }));
  }

  async maxEventPosition(): Promise<number> {
    return n((await this.sql.get<{ m: number | null }>(`SELECT MAX(stream_ordering) AS m FROM events`))?.m);
  }

  // To-device

  async findToDeviceTxn(userId: string, deviceKey: string, txnId: string): Promise<boolean> {
    return (await this.sql.get(`SELECT 1 AS x FROM to_device_txns WHERE user_id = ? AND device_key = ? AND txn_id = ?`, [userId, deviceKey, txnId])) !== undefined;
  }

  async insertToDeviceTxn(tx: SqlExecutor, userId: string, deviceKey: string, txnId: string, now: number): Promise<boolean> {
    if (await tx.get(`SELECT 1 AS x FROM to_device_txns WHERE user_id = ? AND device_key = ? AND txn_id = ?`, [userId, deviceKey, txnId])) return false;
    await tx.run(`INSERT INTO to_device_txns (user_id, device_key, txn_id, ts) VALUES (?, ?, ?, ?)`, [userId, deviceKey, txnId, now]);
    return true;
  }

  async insertToDevice(tx: SqlExecutor, m: { recipientUserId: string; recipientDevice: string; sender: string; type: string; content: string; now: number }): Promise<number> {
    await this.lock(tx, "to_device");
    const pos = await this.toDeviceIds.next(tx);
    await tx.run(
      `INSERT INTO to_device_inbox (stream_id, recipient_user_id, recipient_device_id, sender, type, content, ts) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [pos, m.recipientUserId, m.recipientDevice, m.sender, m.type, m.content, m.now],
    );
    return pos;
  }

  async toDeviceFor(userId: string, deviceId: string, since: number, upTo: number | undefined, limit: number): Promise<ToDeviceRow[]> {
    const rows = await this.sql.all<{ stream_id: number; sender: string; type: string; content: string }>(
      `SELECT stream_id, sender, type, content FROM to_device_inbox WHERE recipient_user_id = ? AND recipient_device_id = ? AND stream_id > ?${upTo === undefined ? "" : " AND stream_id <= ?"}
       ORDER BY stream_id LIMIT ?`,
      upTo === undefined ? [userId, deviceId, since, limit] : [userId, deviceId, since, upTo, limit],
    );
    return rows.map((r) => ({ streamId: n(r.stream_id), sender: r.sender, type: r.type, content: r.content }));
  }

  /** The messages at these positions with their recipients (application services receive them, MSC2409). */
  async toDeviceAt(positions: readonly number[]): Promise<(ToDeviceRow & { recipientUserId: string; recipientDeviceId: string })[]> {
    if (positions.length === 0) return [];
    const rows = await this.sql.all<{ stream_id: number; recipient_user_id: string; recipient_device_id: string; sender: string; type: string; content: string }>(
      `SELECT stream_id, recipient_user_id, recipient_device_id, sender, type, content FROM to_device_inbox WHERE stream_id IN (${positions.map(() => "?").join(",")}) ORDER BY stream_id`,
      [...positions],
    );
    return rows.map((r) => ({ streamId: n(r.stream_id), recipientUserId: r.recipient_user_id, recipientDeviceId: r.recipient_device_id, sender: r.sender, type: r.type, content: r.content }));
  }

  /** Deletes the device's messages up to `upTo` and records the stream's high-water mark. */
  async deleteToDevice(userId: string, deviceId: string, upTo: number): Promise<number> {
    // Every /sync acknowledges: a read first, so that a sync with nothing to remove writes nothing.
    const q = `SELECT MAX(stream_id) AS m FROM to_device_inbox WHERE recipient_user_id = ? AND recipient_device_id = ? AND stream_id <= ?`;
    if (!(await this.sql.get<{ m: number | null }>(q, [userId, deviceId, upTo]))?.m) return 0;
    return this.sql.transaction(async (tx) => {
      // The mark is the highest position removed (never the caller's `upTo`, which may lie ahead).
      const top = n((await tx.get<{ m: number | null }>(q, [userId, deviceId, upTo]))?.m);
      const deleted = await tx.run(`DELETE FROM to_device_inbox WHERE recipient_user_id = ? AND recipient_device_id = ? AND stream_id <= ?`, [userId, deviceId, upTo]);
      if (deleted > 0) await this.raiseHighWater(tx, "to_device", top);
      return deleted;
    });
  }

  async raiseHighWater(tx: SqlExecutor, stream: string, position: number): Promise<void> {
    await this.lock(tx, `high_water:${stream}`);
    const changed = await tx.run(`UPDATE stream_high_water SET position = ? WHERE stream = ? AND position < ?`, [position, stream, position]);
    if (changed === 0 && !(await tx.get(`SELECT 1 AS x FROM stream_high_water WHERE stream = ?`, [stream])))
      await tx.run(`INSERT INTO stream_high_water (stream, position) VALUES (?, ?)`, [stream, position]);
  }

  /** The stream's persisted-up-to position (ids.ts). */
  currentToDevicePosition(): number | Promise<number> {
    return this.toDeviceIds.now();
  }

  // Key backup

  async backupVersion(userId: string, version: number | undefined, ex: SqlExecutor = this.sql): Promise<BackupVersionRow | undefined> {
    type R = { user_id: string; version: number; algorithm: string; auth_data: string; etag: number; deleted: number | boolean };
    const r =
      version === undefined
        ? await ex.get<R>(`SELECT * FROM e2e_room_keys_versions WHERE user_id = ? AND deleted = ? ORDER BY version DESC LIMIT 1`, [userId, false])
        : await ex.get<R>(`SELECT * FROM e2e_room_keys_versions WHERE user_id = ? AND version = ? AND deleted = ?`, [userId, version, false]);
    return r && { userId: r.user_id, version: n(r.version), algorithm: r.algorithm, authData: r.auth_data, etag: n(r.etag), deleted: Boolean(r.deleted) };
  }

  async createBackupVersion(tx: SqlExecutor, userId: string, algorithm: string, authData: string): Promise<number> {
    const r = await tx.get<{ m: number | null }>(`SELECT MAX(version) AS m FROM e2e_room_keys_versions WHERE user_id = ?`, [userId]);
    const version = n(r?.m) + 1;
    await tx.run(`INSERT INTO e2e_room_keys_versions (user_id, version, algorithm, auth_data, etag, deleted) VALUES (?, ?, ?, ?, ?, ?)`, [userId, version, algorithm, authData, 0, false]);
    return version;
  }

  async updateBackupAuthData(userId: string, version: number, authData: string): Promise<void> {
    await this.sql.run(`UPDATE e2e_room_keys_versions SET auth_data = ? WHERE user_id = ? AND version = ?`, [authData, userId, version]);
  }

  /** Marks the version deleted and drops its keys; false when no such version ever existed. */
  async deleteBackupVersion(userId: string, version: number): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      const exists = await tx.get(`SELECT 1 AS x FROM e2e_room_keys_versions WHERE user_id = ? AND version = ?`, [userId, version]);
      if (!exists) return false;
      await tx.run(`DELETE FROM e2e_room_keys WHERE user_id = ? AND version = ?`, [userId, version]);
      await tx.run(`UPDATE e2e_room_keys_versions SET deleted = ? WHERE user_id = ? AND version = ?`, [true, userId, version]);
      return true;
    });
  }

  /** A deactivated account's keys: cross-signing keys and the signatures it made, every key backup. */
  async deleteAccountKeys(tx: SqlExecutor, userId: string): Promise<void> {
    await tx.run(`DELETE FROM e2e_cross_signing_keys WHERE user_id = ?`, [userId]);
    await tx.run(`DELETE FROM e2e_cross_signing_signatures WHERE signer_user_id = ? OR target_user_id = ?`, [userId, userId]);
    await tx.run(`DELETE FROM e2e_room_keys WHERE user_id = ?`, [userId]);
    await tx.run(`UPDATE e2e_room_keys_versions SET deleted = ? WHERE user_id = ?`, [true, userId]);
  }

  async bumpBackupEtag(tx: SqlExecutor, userId: string, version: number): Promise<void> {
    await tx.run(`UPDATE e2e_room_keys_versions SET etag = etag + 1 WHERE user_id = ? AND version = ?`, [userId, version]);
  }

  async roomKeyCount(userId: string, version: number, ex: SqlExecutor = this.sql): Promise<number> {
    return n((await ex.get<{ c: number }>(`SELECT COUNT(*) AS c FROM e2e_room_keys WHERE user_id = ? AND version = ?`, [userId, version]))?.c);
  }

  async roomKeys(userId: string, version: number, roomId?: string, sessionId?: string, ex: SqlExecutor = this.sql): Promise<RoomKeyRow[]> {
    let where = `user_id = ? AND version = ?`;
    const p: Param[] = [userId, version];
    if (roomId !== undefined) {
      where += ` AND room_id = ?`;
      p.push(roomId);
    }
    if (sessionId !== undefined) {
      where += ` AND session_id = ?`;
      p.push(sessionId);
    }
    const rows = await ex.all<{ room_id: string; session_id: string; first_message_index: number; forwarded_count: number; is_verified: number | boolean; session_data: string }>(
      `SELECT room_id, session_id, first_message_index, forwarded_count, is_verified, session_data FROM e2e_room_keys WHERE ${where} ORDER BY room_id, session_id`,
      p,
    );
    return rows.map((r) => ({
      roomId: r.room_id,
      sessionId: r.session_id,
      firstMessageIndex: n(r.first_message_index),
      forwardedCount: n(r.forwarded_count),
      isVerified: Boolean(r.is_verified),
      sessionData: r.session_data,
    }));
  }

  async putRoomKey(tx: SqlExecutor, userId: string, version: number, k: RoomKeyRow, exists: boolean): Promise<void> {
    if (exists)
      await tx.run(
        `UPDATE e2e_room_keys SET first_message_index = ?, forwarded_count = ?, is_verified = ?, session_data = ? WHERE user_id = ? AND version = ? AND room_id = ? AND session_id = ?`,
        [k.firstMessageIndex, k.forwardedCount, k.isVerified, k.sessionData, userId, version, k.roomId, k.sessionId],
      );
    else
      await tx.run(
        `INSERT INTO e2e_room_keys (user_id, version, room_id, session_id, first_message_index, forwarded_count, is_verified, session_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [userId, version, k.roomId, k.sessionId, k.firstMessageIndex, k.forwardedCount, k.isVerified, k.sessionData],
      );
  }

  async deleteRoomKeys(tx: SqlExecutor, userId: string, version: number, roomId?: string, sessionId?: string): Promise<number> {
    let where = `user_id = ? AND version = ?`;
    const p: Param[] = [userId, version];
    if (roomId !== undefined) {
      where += ` AND room_id = ?`;
      p.push(roomId);
    }
    if (sessionId !== undefined) {
      where += ` AND session_id = ?`;
      p.push(sessionId);
    }
    return tx.run(`DELETE FROM e2e_room_keys WHERE ${where}`, p);
  }
}
