export class AccountValidityStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async expirationOf(userId) {
        const r = await this.sql.get(`SELECT expiration_ts FROM account_validity WHERE user_id = ?`, [userId]);
        return r ? Number(r.expiration_ts) : null;
    }
    /** Sets the expiry (a renewal clears the mail-sent flag and any pending token). */
    async setExpiration(userId, expirationTs, emailSent = false) {
        const n = await this.sql.run(`UPDATE account_validity SET expiration_ts = ?, email_sent = ?, renewal_token_hash = NULL WHERE user_id = ?`, [expirationTs, emailSent, userId]);
        if (n === 0)
            await this.sql.run(`INSERT INTO account_validity (user_id, expiration_ts, email_sent) VALUES (?, ?, ?)`, [userId, expirationTs, emailSent]);
    }
    /** Accounts expiring before now + window (or expired) and not yet mailed this period (Synapse's query). */
    async expiringWithin(now, window) {
        const rows = await this.sql.all(`SELECT user_id, expiration_ts FROM account_validity WHERE email_sent = ? AND expiration_ts <= ? ORDER BY expiration_ts`, [false, now + window]);
        return rows.map((r) => ({ userId: r.user_id, expirationTs: Number(r.expiration_ts) }));
    }
    async setRenewalToken(userId, tokenHash) {
        await this.sql.run(`UPDATE account_validity SET renewal_token_hash = ?, token_used_ts = NULL WHERE user_id = ?`, [tokenHash, userId]);
    }
    async markEmailSent(userId) {
        await this.sql.run(`UPDATE account_validity SET email_sent = ? WHERE user_id = ?`, [true, userId]);
    }
    async byRenewalToken(tokenHash) {
        const r = await this.sql.get(`SELECT user_id, token_used_ts FROM account_validity WHERE renewal_token_hash = ?`, [tokenHash]);
        return r && { userId: r.user_id, tokenUsedTs: r.token_used_ts === null ? null : Number(r.token_used_ts) };
    }
    /** Renews through a token: new expiry, the token marked used (kept, so a second click says "already"). */
    async renewWithToken(tokenHash, expirationTs, now) {
        await this.sql.run(`UPDATE account_validity SET expiration_ts = ?, email_sent = ?, token_used_ts = ? WHERE renewal_token_hash = ?`, [expirationTs, false, now, tokenHash]);
    }
}
