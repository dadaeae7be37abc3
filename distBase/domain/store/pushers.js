const toRow = (r) => ({
    userId: r.user_id,
    appId: r.app_id,
    pushkey: r.pushkey,
    kind: r.kind,
    appDisplayName: r.app_display_name,
    deviceDisplayName: r.device_display_name,
    profileTag: r.profile_tag,
    lang: r.lang,
    data: JSON.parse(r.data),
    deviceId: r.device_id,
    pushkeyTs: Number(r.pushkey_ts),
    lastStreamOrdering: Number(r.last_stream_ordering),
    failingSince: r.failing_since === null ? null : Number(r.failing_since),
});
export class PusherStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async ofUser(userId) {
        return (await this.sql.all(`SELECT * FROM pushers WHERE user_id = ? ORDER BY app_id, pushkey`, [userId])).map(toRow);
    }
    async all() {
        return (await this.sql.all(`SELECT * FROM pushers`)).map(toRow);
    }
    async get(userId, appId, pushkey) {
        const r = await this.sql.get(`SELECT * FROM pushers WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [userId, appId, pushkey]);
        return r ? toRow(r) : undefined;
    }
    /**
     * Creates or replaces the pusher (keeping the queue position of an existing one) and, unless `append`,
     * deletes the pushers of other users with the same app_id and pushkey; returns those deleted.
     */
    async set(p, append) {
        return this.sql.transaction(async (tx) => {
            const removed = append ? [] : (await tx.all(`SELECT * FROM pushers WHERE app_id = ? AND pushkey = ? AND user_id <> ?`, [p.appId, p.pushkey, p.userId])).map(toRow);
            if (!append)
                await tx.run(`DELETE FROM pushers WHERE app_id = ? AND pushkey = ? AND user_id <> ?`, [p.appId, p.pushkey, p.userId]);
            const fields = [p.kind, p.appDisplayName, p.deviceDisplayName, p.profileTag, p.lang, JSON.stringify(p.data), p.deviceId, p.pushkeyTs];
            const n = await tx.run(`UPDATE pushers SET kind = ?, app_display_name = ?, device_display_name = ?, profile_tag = ?, lang = ?, data = ?, device_id = ?, pushkey_ts = ?
         WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [...fields, p.userId, p.appId, p.pushkey]);
            if (n === 0)
                await tx.run(`INSERT INTO pushers (kind, app_display_name, device_display_name, profile_tag, lang, data, device_id, pushkey_ts, user_id, app_id, pushkey, last_stream_ordering, failing_since)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`, [...fields, p.userId, p.appId, p.pushkey, p.lastStreamOrdering]);
            return removed;
        });
    }
    async delete(userId, appId, pushkey) {
        return (await this.sql.run(`DELETE FROM pushers WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [userId, appId, pushkey])) > 0;
    }
    /** Deletes the pushers set up from these devices (or every pusher of the user); returns them. */
    async deleteOf(userId, deviceIds) {
        const all = await this.ofUser(userId);
        const gone = deviceIds ? all.filter((p) => p.deviceId !== null && deviceIds.includes(p.deviceId)) : all;
        for (const p of gone)
            await this.delete(p.userId, p.appId, p.pushkey);
        return gone;
    }
    /** Moves the queue position (and clears failing_since); false when the pusher is gone. */
    async advance(p, position) {
        return (await this.sql.run(`UPDATE pushers SET last_stream_ordering = ?, failing_since = NULL WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [position, p.userId, p.appId, p.pushkey])) > 0;
    }
    async setFailingSince(p, since) {
        await this.sql.run(`UPDATE pushers SET failing_since = ? WHERE user_id = ? AND app_id = ? AND pushkey = ?`, [since, p.userId, p.appId, p.pushkey]);
    }
}
