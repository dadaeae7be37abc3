// Account data (spec: Client-Server API "Client Config"): a user's global and per-room key/value events,
// readable and writable only by that user; `m.fully_read` (read markers) and `m.push_rules` (push rules
// API) are refused here with 405 M_BAD_JSON, as Synapse does. Each write moves the account-data stream
// and wakes the user's waiting syncs. Room tags (spec "Room Tagging") live in the `m.tag` room entry.
import { MatrixError } from "../errors.js";
import { isPlainObject } from "../events/types.js";
import { getRuleset } from "../push/rules-api.js";
import { checkStorableText } from "../text.js";
import { IGNORED_USER_LIST } from "./ignored-users.js";
const REFUSED = {
    "m.fully_read": "Cannot set m.fully_read through this API: use /rooms/{roomId}/read_markers",
    "m.push_rules": "Cannot set m.push_rules through this API: use /pushrules",
};
function requireSelf(r, userId) {
    if (r.userId !== userId)
        throw new MatrixError("M_FORBIDDEN", "Cannot access another user's account data", 403);
}
function checkRoomId(roomId) {
    if (roomId === undefined)
        return "";
    if (!/^![^:]+:.+$/.test(roomId))
        throw new MatrixError("M_INVALID_PARAM", `${roomId} is not a valid room ID`, 400);
    return roomId;
}
/** Writes an entry without the API's checks (tags, and capabilities that own their types), and notifies. */
export async function writeAccountData(s, userId, roomId, type, content) {
    const position = await s.accountData.put(userId, roomId, type, content);
    if (type === IGNORED_USER_LIST && roomId === "")
        s.invalidations.publish({ kind: "ignored_users", userId });
    s.rooms.notifier.notify({ stream: "account_data", position, userIds: [userId] });
}
export async function setAccountData(s, r, userId, roomId, type, content) {
    requireSelf(r, userId);
    const room = checkRoomId(roomId);
    if (REFUSED[type])
        throw new MatrixError("M_BAD_JSON", REFUSED[type], 405);
    if (type === "" || type.length > 255)
        throw new MatrixError("M_INVALID_PARAM", "Invalid account data type", 400);
    checkStorableText(type, "The account data type");
    if (!isPlainObject(content))
        throw new MatrixError("M_BAD_JSON", "Account data content must be a JSON object", 400);
    await writeAccountData(s, userId, room, type, content);
}
export async function getAccountData(s, r, userId, roomId, type) {
    requireSelf(r, userId);
    // m.push_rules is not stored here: it is the user's push ruleset (as Synapse answers).
    if (type === "m.push_rules" && roomId === undefined)
        return { global: await getRuleset(s, userId) };
    const content = await s.accountData.get(userId, checkRoomId(roomId), type);
    if (content === undefined)
        throw new MatrixError("M_NOT_FOUND", "Account data not found", 404);
    return content;
}
// Room tags: the `m.tag` room account data, `{ tags: { <tag>: { order? } } }`.
async function tagsOf(s, userId, roomId) {
    const content = await s.accountData.get(userId, roomId, "m.tag");
    return isPlainObject(content?.tags) ? content.tags : {};
}
export async function getTags(s, r, userId, roomId) {
    requireSelf(r, userId);
    return { tags: await tagsOf(s, userId, checkRoomId(roomId)) };
}
export async function setTag(s, r, userId, roomId, tag, body) {
    requireSelf(r, userId);
    checkRoomId(roomId);
    if (tag === "" || tag.length > 255)
        throw new MatrixError("M_INVALID_PARAM", "Invalid tag name", 400);
    checkStorableText(tag, "The tag name");
    const order = body.order;
    if (order !== undefined && (typeof order !== "number" || !Number.isFinite(order)))
        throw new MatrixError("M_BAD_JSON", "order must be a number", 400);
    if (typeof order === "number" && (order < 0 || order > 1))
        throw new MatrixError("M_INVALID_PARAM", "order must be between 0 and 1", 400);
    // Read-modify-write of the m.tag entry: one at a time per user, so concurrent tag writes are not lost.
    await s.rooms.lanes.run(`m.tag ${userId}`, async () => {
        const tags = { ...(await tagsOf(s, userId, roomId)), [tag]: body };
        await writeAccountData(s, userId, roomId, "m.tag", { tags });
    });
}
export async function deleteTag(s, r, userId, roomId, tag) {
    requireSelf(r, userId);
    checkRoomId(roomId);
    await s.rooms.lanes.run(`m.tag ${userId}`, async () => {
        const tags = { ...(await tagsOf(s, userId, roomId)) };
        delete tags[tag];
        await writeAccountData(s, userId, roomId, "m.tag", { tags });
    });
}
