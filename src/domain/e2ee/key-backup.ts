// Server-side key backups: backup versions (create, read the current or a given one, update its
// auth_data, delete) and the encrypted megolm session keys stored in them. Keys are written only to the
// current version (M_WRONG_ROOM_KEYS_VERSION with `current_version` otherwise); a stored session is
// replaced only by a better one: verified beats unverified, then a lower first_message_index, then a
// lower forwarded_count. The etag moves whenever the keys change. Spec: Client-Server API "Server-side
// key backups"; where it is silent, as Synapse (versions are integers, deleted versions stay deleted,
// auth_data and session_data are any JSON, stored as sent).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import type { BackupVersionRow, RoomKeyRow } from "../store/e2ee.ts";
import { canonicalJson } from "../canonical-json.ts";
import { isPlainObject, parseJson, type Json } from "./json.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { checkStorableText } from "../text.ts";

export interface BackupVersionInfo {
  algorithm: string;
  auth_data: Json;
  count: number;
  etag: string;
  version: string;
}

export interface KeyBackupData {
  first_message_index: number;
  forwarded_count: number;
  is_verified: boolean;
  /** Any JSON value (an object for m.megolm_backup.v1.curve25519-aes-sha2). */
  session_data: unknown;
}

const noBackup = () => new MatrixError("M_NOT_FOUND", "No backup found", 404);
const unknownVersion = () => new MatrixError("M_NOT_FOUND", "Unknown backup version", 404);

/** Versions are the integers we hand out; anything else names no backup. */
function versionNumber(v: string): number | undefined {
  return /^\d{1,15}$/.test(v) ? Number(v) : undefined;
}

/** A backup version's algorithm and auth_data, as both faces parse them (`version`: the one a PUT names in its body). */
export interface BackupVersionInput {
  algorithm: string;
  /** Any JSON (the algorithm's business). */
  authData: unknown;
  version?: string;
}

/** The REST body of POST and PUT /room_keys/version. */
export function backupVersionFromBody(body: Json): BackupVersionInput {
  if (body.algorithm === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing algorithm", 400);
  if (typeof body.algorithm !== "string") throw new MatrixError("M_BAD_JSON", "algorithm must be a string", 400);
  if (body.auth_data === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing auth_data", 400);
  if (body.version !== undefined && typeof body.version !== "string") throw new MatrixError("M_INVALID_PARAM", "The version in the body does not match the version in the path", 400);
  return { algorithm: body.algorithm, authData: body.auth_data, version: body.version as string | undefined };
}

function readAlgorithmAndAuthData(input: BackupVersionInput): { algorithm: string; authData: unknown } {
  if (input.algorithm === "") throw new MatrixError("M_BAD_JSON", "algorithm must be a string", 400);
  // auth_data is the algorithm's business: clients verify it, the server stores whatever JSON it is
  // (as Synapse does; test tools upload opaque placeholders).
  canonicalJson(input.authData);
  return { algorithm: checkStorableText(input.algorithm, "algorithm"), authData: input.authData };
}

export async function createBackupVersion(s: Services, r: Requester, input: BackupVersionInput): Promise<{ version: string }> {
  requireNotGuest(r, "keyBackup");
  const { algorithm, authData } = readAlgorithmAndAuthData(input);
  const version = await s.storage.sql.transaction((tx) => s.e2ee.createBackupVersion(tx, r.userId, algorithm, JSON.stringify(authData)));
  return { version: String(version) };
}

/** The current version (no `version`) or the given one; M_NOT_FOUND when there is none. */
export async function getBackupVersion(s: Services, r: Requester, version?: string): Promise<BackupVersionInfo> {
  requireNotGuest(r, "keyBackup");
  const n = version === undefined ? undefined : versionNumber(version);
  if (version !== undefined && n === undefined) throw noBackup();
  const row = await s.e2ee.backupVersion(r.userId, n);
  if (!row) throw noBackup();
  return { algorithm: row.algorithm, auth_data: parseJson(row.authData), count: await s.e2ee.roomKeyCount(r.userId, row.version), etag: String(row.etag), version: String(row.version) };
}

/** PUT /room_keys/version/{version}: only auth_data may change; a `version` in the body must match. */
export async function updateBackupVersion(s: Services, r: Requester, version: string, input: BackupVersionInput): Promise<Record<string, never>> {
  requireNotGuest(r, "keyBackup");
  if (input.version !== undefined && input.version !== version) throw new MatrixError("M_INVALID_PARAM", "The version in the body does not match the version in the path", 400);
  const { algorithm, authData } = readAlgorithmAndAuthData(input);
  const n = versionNumber(version);
  const row = n === undefined ? undefined : await s.e2ee.backupVersion(r.userId, n);
  if (!row) throw unknownVersion();
  if (row.algorithm !== algorithm) throw new MatrixError("M_INVALID_PARAM", "The algorithm of a backup cannot change", 400);
  await s.e2ee.updateBackupAuthData(r.userId, row.version, JSON.stringify(authData));
  return {};
}

/** DELETE /room_keys/version/{version}: the version and its keys; deleting it again succeeds. */
export async function deleteBackupVersion(s: Services, r: Requester, version: string): Promise<Record<string, never>> {
  requireNotGuest(r, "keyBackup");
  const n = versionNumber(version);
  if (n === undefined || !(await s.e2ee.deleteBackupVersion(r.userId, n))) throw unknownVersion();
  return {};
}

function readKeyData(v: unknown, where: string): KeyBackupData {
  if (!isPlainObject(v)) throw new MatrixError("M_BAD_JSON", `${where} must be an object`, 400);
  const int = (name: string) => {
    const x = v[name];
    if (x === undefined) throw new MatrixError("M_MISSING_PARAM", `${where}.${name} is required`, 400);
    if (typeof x !== "number" || !Number.isSafeInteger(x) || x < 0) throw new MatrixError("M_BAD_JSON", `${where}.${name} must be a non-negative integer`, 400);
    return x;
  };
  const first_message_index = int("first_message_index");
  const forwarded_count = int("forwarded_count");
  if (v.is_verified === undefined) throw new MatrixError("M_MISSING_PARAM", `${where}.is_verified is required`, 400);
  if (typeof v.is_verified !== "boolean") throw new MatrixError("M_BAD_JSON", `${where}.is_verified must be a boolean`, 400);
  if (v.session_data === undefined) throw new MatrixError("M_MISSING_PARAM", `${where}.session_data is required`, 400);
  // session_data is the algorithm's business, like auth_data: the spec's algorithm makes it an object,
  // but clients and test tools in the field send other JSON (opaque strings), which Synapse stores as is.
  canonicalJson(v.session_data);
  return { first_message_index, forwarded_count, is_verified: v.is_verified, session_data: v.session_data };
}

/** Reads `{rooms: {roomId: {sessions: {sessionId: KeyBackupData}}}}`. */
export function readRoomsBody(body: Json): Map<string, Map<string, KeyBackupData>> {
  if (body.rooms === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing rooms", 400);
  if (!isPlainObject(body.rooms)) throw new MatrixError("M_BAD_JSON", "rooms must be an object", 400);
  const out = new Map<string, Map<string, KeyBackupData>>();
  for (const [roomId, room] of Object.entries(body.rooms)) out.set(roomId, readSessionsBody(room, `rooms.${roomId}`));
  return out;
}

export function readSessionsBody(room: unknown, where = "body"): Map<string, KeyBackupData> {
  if (!isPlainObject(room)) throw new MatrixError("M_BAD_JSON", `${where} must be an object`, 400);
  if (room.sessions === undefined) throw new MatrixError("M_MISSING_PARAM", `${where}.sessions is required`, 400);
  if (!isPlainObject(room.sessions)) throw new MatrixError("M_BAD_JSON", `${where}.sessions must be an object`, 400);
  return new Map(Object.entries(room.sessions).map(([sid, k]) => [sid, readKeyData(k, `${where}.sessions.${sid}`)]));
}

export { readKeyData };

/** Whether `candidate` should replace `current` (Spec: "Server-side key backups", storing keys). */
export function isBetterKey(candidate: KeyBackupData, current: RoomKeyRow): boolean {
  if (candidate.is_verified !== current.isVerified) return candidate.is_verified;
  if (candidate.first_message_index !== current.firstMessageIndex) return candidate.first_message_index < current.firstMessageIndex;
  return candidate.forwarded_count < current.forwardedCount;
}

/** The version a write goes to: it must be the current one. */
async function writableVersion(s: Services, tx: SqlExecutor, userId: string, version: string): Promise<BackupVersionRow> {
  const current = await s.e2ee.backupVersion(userId, undefined, tx);
  const n = versionNumber(version);
  if (current && n === current.version) return current;
  const named = n === undefined ? undefined : await s.e2ee.backupVersion(userId, n, tx);
  if (named && current) throw new MatrixError("M_WRONG_ROOM_KEYS_VERSION", "Wrong backup version.", 403, { current_version: String(current.version) });
  throw unknownVersion();
}

/** Stores keys in the current backup version; returns the etag and count after. */
export async function putRoomKeys(s: Services, r: Requester, version: string, rooms: Map<string, Map<string, KeyBackupData>>): Promise<{ etag: string; count: number }> {
  requireNotGuest(r, "keyBackup");
  const userId = r.userId;
  // Typed input from either face: the counts are non-negative integers, the session data storable JSON.
  for (const [roomId, sessions] of rooms)
    for (const [sessionId, k] of sessions) {
      for (const n of ["first_message_index", "forwarded_count"] as const)
        if (!Number.isSafeInteger(k[n]) || k[n] < 0) throw new MatrixError("M_BAD_JSON", `${roomId}/${sessionId}: ${n} must be a non-negative integer`, 400);
      canonicalJson(k.session_data);
    }
  return s.storage.sql.transaction(async (tx) => {
    const v = await writableVersion(s, tx, userId, version);
    let changed = false;
    for (const [roomId, sessions] of rooms) {
      if (sessions.size === 0) continue;
      const existing = new Map((await s.e2ee.roomKeys(userId, v.version, roomId, undefined, tx)).map((k) => [k.sessionId, k]));
      for (const [sessionId, k] of sessions) {
        const current = existing.get(sessionId);
        if (current && !isBetterKey(k, current)) continue;
        await s.e2ee.putRoomKey(
          tx,
          userId,
          v.version,
          { roomId, sessionId, firstMessageIndex: k.first_message_index, forwardedCount: k.forwarded_count, isVerified: k.is_verified, sessionData: JSON.stringify(k.session_data) },
          current !== undefined,
        );
        changed = true;
      }
    }
    if (changed) await s.e2ee.bumpBackupEtag(tx, userId, v.version);
    return { etag: String(v.etag + (changed ? 1 : 0)), count: await s.e2ee.roomKeyCount(userId, v.version, tx) };
  });
}

const toData = (k: RoomKeyRow): KeyBackupData => ({ first_message_index: k.firstMessageIndex, forwarded_count: k.forwardedCount, is_verified: k.isVerified, session_data: parseJson(k.sessionData) });

async function readableVersion(s: Services, userId: string, version: string): Promise<BackupVersionRow> {
  const n = versionNumber(version);
  const row = n === undefined ? undefined : await s.e2ee.backupVersion(userId, n);
  if (!row) throw unknownVersion();
  return row;
}

/** GET /room_keys/keys: every room's sessions (`{rooms: {}}` when none). */
export async function getAllRoomKeys(s: Services, r: Requester, version: string): Promise<{ rooms: Record<string, { sessions: Record<string, KeyBackupData> }> }> {
  requireNotGuest(r, "keyBackup");
  const v = await readableVersion(s, r.userId, version);
  // Maps first: room and session ids are any strings a client chose ("__proto__" too), never object keys
  // looked up on a plain object.
  const rooms = new Map<string, Map<string, KeyBackupData>>();
  for (const k of await s.e2ee.roomKeys(r.userId, v.version)) {
    let sessions = rooms.get(k.roomId);
    if (!sessions) rooms.set(k.roomId, (sessions = new Map()));
    sessions.set(k.sessionId, toData(k));
  }
  return { rooms: Object.fromEntries([...rooms].map(([roomId, sessions]) => [roomId, { sessions: Object.fromEntries(sessions) }])) };
}

/** GET /room_keys/keys/{roomId}: the room's sessions (`{sessions: {}}` when none, as the spec says). */
export async function getRoomRoomKeys(s: Services, r: Requester, version: string, roomId: string): Promise<{ sessions: Record<string, KeyBackupData> }> {
  requireNotGuest(r, "keyBackup");
  const v = await readableVersion(s, r.userId, version);
  const sessions = new Map<string, KeyBackupData>();
  for (const k of await s.e2ee.roomKeys(r.userId, v.version, roomId)) sessions.set(k.sessionId, toData(k));
  return { sessions: Object.fromEntries(sessions) };
}

/** GET /room_keys/keys/{roomId}/{sessionId}: one session; M_NOT_FOUND when it was not backed up. */
export async function getSessionRoomKey(s: Services, r: Requester, version: string, roomId: string, sessionId: string): Promise<KeyBackupData> {
  requireNotGuest(r, "keyBackup");
  const v = await readableVersion(s, r.userId, version);
  const [k] = await s.e2ee.roomKeys(r.userId, v.version, roomId, sessionId);
  if (!k) throw new MatrixError("M_NOT_FOUND", "No room_keys found", 404);
  return toData(k);
}

/** DELETE /room_keys/keys[/{roomId}[/{sessionId}]]: removes keys of any existing version; etag moves. */
export async function deleteRoomKeys(s: Services, r: Requester, version: string, roomId?: string, sessionId?: string): Promise<{ etag: string; count: number }> {
  requireNotGuest(r, "keyBackup");
  const userId = r.userId;
  const n = versionNumber(version);
  return s.storage.sql.transaction(async (tx) => {
    const v = n === undefined ? undefined : await s.e2ee.backupVersion(userId, n, tx);
    if (!v) throw unknownVersion();
    await s.e2ee.deleteRoomKeys(tx, userId, v.version, roomId, sessionId);
    await s.e2ee.bumpBackupEtag(tx, userId, v.version);
    return { etag: String(v.etag + 1), count: await s.e2ee.roomKeyCount(userId, v.version, tx) };
  });
}
