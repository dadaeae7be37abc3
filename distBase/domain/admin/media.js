// Server administration of media (Synapse admin API "Media"): the media of a room, quarantine and its
// undoing (one item, a room's, a user's), protection from quarantine, deleting one item, listing and
// deleting a user's uploads, and purging the remote media cache. Server admins only.
import { MatrixError, notFound } from "../errors.js";
import { checkMediaRef, mxcUri, parseMxc } from "../media/ids.js";
import { deleteMedia } from "../media/delete.js";
import { parseUserId } from "../ids.js";
import { requireAdmin } from "./require-admin.js";
/** mxc URIs named by a room's events (content.url, content.info.thumbnail_url), split local/remote. */
async function mediaOfRoom(s, roomId) {
    if (!(await s.rooms.store.getRoom(roomId)))
        throw notFound("Room not found");
    const rows = await s.db.event.findMany({ where: { roomId, containsUrl: true }, select: { json: true } });
    const seen = new Map();
    for (const r of rows) {
        const content = JSON.parse(r.json).content;
        for (const uri of [content?.url, content?.info?.thumbnail_url]) {
            const ref = parseMxc(uri);
            if (ref)
                seen.set(mxcUri(ref), ref);
        }
    }
    const all = [...seen.values()];
    return { local: all.filter((x) => x.origin === s.config.server_name), remote: all.filter((x) => x.origin !== s.config.server_name) };
}
export async function listRoomMedia(s, r, roomId) {
    requireAdmin(r);
    const { local, remote } = await mediaOfRoom(s, roomId);
    return { local: local.map(mxcUri), remote: remote.map(mxcUri) };
}
export async function quarantineMedia(s, r, serverName, mediaId, on) {
    requireAdmin(r);
    const ref = checkMediaRef(serverName, mediaId);
    await s.media.store.setQuarantine([ref], on ? r.userId : null);
    return {};
}
export async function quarantineRoomMedia(s, r, roomId) {
    requireAdmin(r);
    const { local, remote } = await mediaOfRoom(s, roomId);
    return { num_quarantined: await s.media.store.setQuarantine([...local, ...remote], r.userId) };
}
export async function quarantineUserMedia(s, r, userId) {
    requireAdmin(r);
    return { num_quarantined: await s.media.store.setQuarantine(await s.media.store.listRefsByUser(userId), r.userId) };
}
export async function protectMedia(s, r, mediaId, on) {
    requireAdmin(r);
    const ref = checkMediaRef(s.config.server_name, mediaId);
    if (!(await s.media.store.setProtected(ref, on)))
        throw notFound("Unknown media");
    return {};
}
export async function deleteOneMedia(s, r, serverName, mediaId) {
    requireAdmin(r);
    const ref = checkMediaRef(serverName, mediaId);
    if (ref.origin !== s.config.server_name)
        throw new MatrixError("M_INVALID_PARAM", "Can only delete local media", 400);
    if (!(await s.media.store.get(ref)))
        throw notFound("Unknown media");
    await deleteMedia(s, ref);
    return { deleted_media: [mediaId], total: 1 };
}
function checkUserMediaQuery(s, userId, q) {
    let parsed;
    try {
        parsed = parseUserId(userId);
    }
    catch {
        throw new MatrixError("M_INVALID_PARAM", "Invalid user id", 400);
    }
    if (parsed.serverName !== s.config.server_name)
        throw new MatrixError("M_INVALID_PARAM", "Can only look up local users", 400);
    const from = q.from ?? 0;
    const limit = q.limit ?? 100;
    if (from < 0)
        throw new MatrixError("M_INVALID_PARAM", "Query parameter from must be a string representing a positive integer.", 400);
    if (limit < 0)
        throw new MatrixError("M_INVALID_PARAM", "Query parameter limit must be a string representing a positive integer.", 400);
    const dir = q.dir ?? "f";
    if (dir !== "f" && dir !== "b")
        throw new MatrixError("M_INVALID_PARAM", "Unknown direction: " + dir, 400);
    return { from, limit, dir: dir };
}
function describe(m) {
    return {
        media_id: m.mediaId,
        media_type: m.mediaType,
        media_length: m.mediaLength,
        upload_name: m.uploadName,
        created_ts: m.createdTs,
        last_access_ts: m.lastAccessTs,
        quarantined_by: m.quarantinedBy,
        safe_from_quarantine: m.protected,
    };
}
export async function listUserMedia(s, r, userId, q) {
    requireAdmin(r);
    const page = checkUserMediaQuery(s, userId, q);
    if (!(await s.users.get(userId)))
        throw notFound("Unknown user");
    const { rows, total } = await s.media.store.listByUser(userId, page);
    return { media: rows.map(describe), total, ...(page.from + rows.length < total ? { next_token: page.from + rows.length } : {}) };
}
export async function deleteUserMedia(s, r, userId, q) {
    requireAdmin(r);
    const page = checkUserMediaQuery(s, userId, q);
    if (!(await s.users.get(userId)))
        throw notFound("Unknown user");
    const { rows } = await s.media.store.listByUser(userId, page);
    for (const m of rows)
        await deleteMedia(s, m);
    return { deleted_media: rows.map((m) => m.mediaId), total: rows.length };
}
/** POST /purge_media_cache?before_ts=: drops cached remote media not accessed since before_ts. */
export async function purgeRemoteMediaCache(s, r, beforeTs) {
    requireAdmin(r);
    if (beforeTs === undefined)
        throw new MatrixError("M_MISSING_PARAM", "Missing integer query parameter 'before_ts'", 400);
    let deleted = 0;
    for (let batch; (batch = await s.media.store.listIdle({ localOrigin: s.config.server_name, local: false, before: beforeTs, limit: 500 })).length;) {
        for (const ref of batch)
            await deleteMedia(s, ref);
        deleted += batch.length;
        if (batch.length < 500)
            break;
    }
    return { deleted };
}
