// Account data (spec: Client-Server API "Client Config"): a user's global and per-room key/value events,
// readable and writable only by that user; `m.fully_read` (read markers) and `m.push_rules` (push rules
// API) are refused here with 405 M_BAD_JSON, as Synapse does. Each write moves the account-data stream
// and wakes the user's waiting syncs. Room tags (spec "Room Tagging") live in the `m.tag` room entry.
// MSC3391 (experimental_features.msc3391_enabled, as Synapse): an entry is deleted (DELETE, or a PUT of
// `{}`) by storing `{}`: incremental syncs show it with `{}` content, GET answers 404, initial syncs skip it.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { isPlainObject } from "../events/types.ts";
import { getRuleset } from "../push/rules-api.ts";
import { checkStorableText } from "../text.ts";
import { IGNORED_USER_LIST } from "./ignored-users.ts";
import { runOnWriter, writerElsewhere } from "../cluster/stream-ops.ts";

const REFUSED: Record<string, string> = {
  "m.fully_read": "Cannot set m.fully_read through this API: use /rooms/{roomId}/read_markers",
  "m.push_rules": "Cannot set m.push_rules through this API: use /pushrules",
};

function requireSelf(r: Requester, userId: string): void {
  if (r.userId !== userId) throw new MatrixError("M_FORBIDDEN", "Cannot access another user's account data", 403);
}

function checkRoomId(roomId: string | undefined): string {
  if (roomId === undefined) return "";
  if (!/^![^:]+:.+$/.test(roomId)) throw new MatrixError("M_INVALID_PARAM", `${roomId} is not a valid room ID`, 400);
  return roomId;
}

/** Writes an entry without the API's checks (tags, and capabilities that own their types), and notifies. */
export async function writeAccountData(s: Services, userId: string, roomId: string, type: string, content: Record<string, unknown>): Promise<void> {
  const position = await s.accountData.put(userId, roomId, type, content);
  if (type === IGNORED_USER_LIST && roomId === "") s.invalidations.publish({ kind: "ignored_users", userId });
  s.rooms.notifier.notify({ stream: "account_data", position, userIds: [userId] });
}

/** MSC3391: deletes an entry without the API's checks (capabilities that own their types), and notifies. */
export async function removeAccountData(s: Services, userId: string, roomId: string, type: string): Promise<void> {
  const position = await s.accountData.remove(userId, roomId, type);
  if (position === undefined) return;
  if (type === IGNORED_USER_LIST && roomId === "") s.invalidations.publish({ kind: "ignored_users", userId });
  s.rooms.notifier.notify({ stream: "account_data", position, userIds: [userId] });
}

/** Whether MSC3391's deletions are on: then `{}` content means "deleted". */
const deletionsOn = (s: Services) => s.config.experimental_features.msc3391_enabled;

/** The checks every write of the API makes (PUT and MSC3391's DELETE); returns the room ("" for global). */
function checkWrite(r: Requester, userId: string, roomId: string | undefined, type: string): string {
  requireSelf(r, userId);
  const room = checkRoomId(roomId);
  if (REFUSED[type]) throw new MatrixError("M_BAD_JSON", REFUSED[type]!, 405);
  if (type === "" || type.length > 255) throw new MatrixError("M_INVALID_PARAM", "Invalid account data type", 400);
  checkStorableText(type, "The account data type");
  return room;
}

export async function setAccountData(s: Services, r: Requester, userId: string, roomId: string | undefined, type: string, content: unknown): Promise<void> {
  const writer = writerElsewhere(s, "setAccountData"); // written by the stream's writer (cluster/stream-ops.ts)
  if (writer) return runOnWriter(s, writer, "setAccountData", r, [userId, roomId ?? null, type, content]);
  const room = checkWrite(r, userId, roomId, type);
  if (!isPlainObject(content)) throw new MatrixError("M_BAD_JSON", "Account data content must be a JSON object", 400);
  // MSC3391: a PUT of `{}` is a deletion.
  if (deletionsOn(s) && Object.keys(content).length === 0) return removeAccountData(s, userId, room, type);
  await writeAccountData(s, userId, room, type, content);
}

/** MSC3391's DELETE /unstable/org.matrix.msc3391/user/{userId}/[rooms/{roomId}/]account_data/{type}. */
export async function deleteAccountData(s: Services, r: Requester, userId: string, roomId: string | undefined, type: string): Promise<void> {
  if (!deletionsOn(s)) throw new MatrixError("M_UNRECOGNIZED", "Deleting account data is not enabled", 404);
  const room = checkWrite(r, userId, roomId, type);
  await removeAccountData(s, userId, room, type);
}

export async function getAccountData(s: Services, r: Requester, userId: string, roomId: string | undefined, type: string): Promise<Record<string, unknown>> {
  requireSelf(r, userId);
  // m.push_rules is not stored here: it is the user's push ruleset (as Synapse answers).
  if (type === "m.push_rules" && roomId === undefined) return { global: await getRuleset(s, userId) };
  const content = await s.accountData.get(userId, checkRoomId(roomId), type);
  // MSC3391: `{}` is a deleted entry.
  if (content === undefined || (deletionsOn(s) && Object.keys(content).length === 0)) throw new MatrixError("M_NOT_FOUND", "Account data not found", 404);
  return content;
}

// Room tags: the `m.tag` room account data, `{ tags: { <tag>: { order? } } }`.

async function tagsOf(s: Services, userId: string, roomId: string): Promise<Record<string, Record<string, unknown>>> {
  const content = await s.accountData.get(userId, roomId, "m.tag");
  return isPlainObject(content?.tags) ? (content.tags as Record<string, Record<string, unknown>>) : {};
}

export async function getTags(s: Services, r: Requester, userId: string, roomId: string): Promise<{ tags: Record<string, Record<string, unknown>> }> {
  requireSelf(r, userId);
  return { tags: await tagsOf(s, userId, checkRoomId(roomId)) };
}

export async function setTag(s: Services, r: Requester, userId: string, roomId: string, tag: string, body: Record<string, unknown>): Promise<void> {
  requireSelf(r, userId);
  checkRoomId(roomId);
  if (tag === "" || tag.length > 255) throw new MatrixError("M_INVALID_PARAM", "Invalid tag name", 400);
  checkStorableText(tag, "The tag name");
  const order = body.order;
  if (order !== undefined && (typeof order !== "number" || !Number.isFinite(order))) throw new MatrixError("M_BAD_JSON", "order must be a number", 400);
  if (typeof order === "number" && (order < 0 || order > 1)) throw new MatrixError("M_INVALID_PARAM", "order must be between 0 and 1", 400);
  // Read-modify-write of the m.tag entry: one at a time per user, so concurrent tag writes are not lost.
  await s.rooms.lanes.run(`m.tag ${userId}`, async () => {
    const tags = { ...(await tagsOf(s, userId, roomId)), [tag]: body };
    await writeAccountData(s, userId, roomId, "m.tag", { tags });
  });
}

export async function deleteTag(s: Services, r: Requester, userId: string, roomId: string, tag: string): Promise<void> {
  requireSelf(r, userId);
  checkRoomId(roomId);
  await s.rooms.lanes.run(`m.tag ${userId}`, async () => {
    const tags = { ...(await tagsOf(s, userId, roomId)) };
    delete tags[tag];
    await writeAccountData(s, userId, roomId, "m.tag", { tags });
  });
}
