// media_retention (Synapse's option): a job that deletes cached remote media not accessed within
// remote_media_lifetime and local media not accessed within local_media_lifetime (protected, quarantined
// and profile avatars are kept), and cleans up after the repository: mxc URIs from /create that expired
// unused, URL previews a day past their expiry with their images, temporary files a day old. It runs at
// start and then hourly, on a timer that stops on shutdown.
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { deleteMedia } from "./delete.js";
import { mxcUri } from "./ids.js";
import { unlinkQuietly } from "./files.js";
const INTERVAL_MS = 3_600_000;
const ONE_DAY = 86_400_000;
const BATCH = 500;
async function deleteAll(s, refs) {
    for (const ref of refs)
        await deleteMedia(s, ref);
    return refs.length;
}
/** Local media ids still named as a user's avatar. */
async function avatarsAmong(s, refs) {
    if (refs.length === 0)
        return new Set();
    const rows = await s.db.profile.findMany({ where: { avatarUrl: { in: refs.map(mxcUri) } }, select: { avatarUrl: true } });
    return new Set(rows.map((r) => r.avatarUrl));
}
/** One pass of the retention job. */
export async function runMediaRetention(s) {
    const now = s.clock.now();
    const { local_media_lifetime: localLife, remote_media_lifetime: remoteLife } = s.config.media_retention;
    const { store } = s.media;
    const out = { remote: 0, local: 0, pending: 0, previews: 0 };
    const origin = s.config.server_name;
    if (remoteLife !== undefined) {
        for (let batch; (batch = await store.listIdle({ localOrigin: origin, local: false, before: now - remoteLife, limit: BATCH })).length;) {
            out.remote += await deleteAll(s, batch);
            if (batch.length < BATCH)
                break;
        }
    }
    if (localLife !== undefined) {
        const idle = await store.listIdle({ localOrigin: origin, local: true, before: now - localLife, limit: 10_000 });
        const avatars = await avatarsAmong(s, idle);
        const rows = await Promise.all(idle.map((ref) => store.get(ref)));
        out.local = await deleteAll(s, idle.filter((ref, i) => !avatars.has(mxcUri(ref)) && rows[i] && rows[i].quarantinedBy === null));
    }
    out.pending = await deleteAll(s, await store.listExpiredPending(now, 10_000));
    const images = await store.dropExpiredUrlPreviews(now - ONE_DAY);
    out.previews = await deleteAll(s, images.map((mediaId) => ({ origin, mediaId })));
    await sweepTemp(s, now - ONE_DAY);
    return out;
}
async function sweepTemp(s, before) {
    const dir = path.join(s.media.files.root, "tmp");
    let names;
    try {
        names = await readdir(dir);
    }
    catch {
        return;
    }
    for (const name of names) {
        const file = path.join(dir, name);
        try {
            if ((await stat(file)).mtimeMs < before)
                await unlinkQuietly(file);
        }
        catch {
            // Gone meanwhile.
        }
    }
}
/** Starts the hourly job; returns its stop function (registered on Services.onClose by the caller). */
export function startMediaRetention(s) {
    let running = Promise.resolve();
    const tick = () => {
        running = runMediaRetention(s).catch((err) => s.log.error({ err }, "media retention failed"));
    };
    const timer = setInterval(tick, INTERVAL_MS);
    timer.unref();
    tick();
    return async () => {
        clearInterval(timer);
        await running;
    };
}
