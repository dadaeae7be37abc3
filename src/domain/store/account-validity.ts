// Repository of account validity (account_validity): each account's expiry and its pending renewal token
// (hashed). Read once per access token (cached with it), written at registration, renewal and by admins.
import type { Sql } from "../../storage/sql.ts";

export class AccountValidityStore {
  constructor(private readonly sql: Sql) {}

  async expirationOf(userId: string): Promise<number | null> {
    const r = await this.sql.get<{ expiration_ts: number | string }>(`SELECT expiration_ts FROM account_validity WHERE user_id = ?`, [userId]);
    return r ? Number(r.expiration_ts) : null;
  }

  /** Sets the expiry (a renewal clears the mail-sent flag and any pending token). */
  async setExpiration(userId: string, expirationTs: number, emailSent = false): Promise<void> {
    const n = await this.sql.run(`UPDATE account_validity SET expiration_ts = ?, email_sent = ?, renewal_token_hash = NULL WHERE user_id = ?`, [expirationTs, emailSent, userId]);
    if (n === 0) await this.sql.run(`INSERT INTO account_validity (user_id, expiration_ts, email_sent) VALUES (?, ?, ?)`, [userId, expirationTs, emailSent]);
  }

  /** Accounts expiring before now + window (or expired) and not yet mailed this period (Synapse's query). */
  async expiringWithin(now: number, window: number): Promise<{ userId: string; expirationTs: number }[]> {
    const rows = await this.sql.all<{ user_id: string; expiration_ts: number | string }>(
      `SELECT user_id, expiration_ts FROM account_validity WHERE email_sent = ? AND expiration_ts <= ? ORDER BY expiration_ts`, [false, now + window]);
    return rows.map((r) => ({ userId: r.user_id, expirationTs: Number(r.expiration_ts) }));
  }

  async setRenewalToken(userId: string, tokenHash: string): Promise<void> {
    await this.sql.run(`UPDATE account_validity SET renewal_token_hash = ?, token_used_ts = NULL WHERE user_id = ?`, [tokenHash, userId]);
  }

  async markEmailSent(userId: string): Promise<void> {
    await this.sql.run(`UPDATE account_validity SET email_sent = ? WHERE user_id = ?`, [true, userId]);
  }

  async byRenewalToken(tokenHash: string): Promise<{ userId: string; tokenUsedTs: number | null } | undefined> {
    const r = await this.sql.get<{ user_id: string; token_used_ts: number | string | null }>(`SELECT user_id, token_used_ts FROM account_validity WHERE renewal_token_hash = ?`, [tokenHash]);
    return r && { userId: r.user_id, tokenUsedTs: r.token_used_ts === null ? null : Number(r.token_used_ts) };
  }

  /** Renews through a token: new expiry, the token marked used (kept, so a second click says "already"). */
  async renewWithToken(tokenHash: string, expirationTs: number, now: number): Promise<void> {
    await this.sql.run(`UPDATE account_validity SET expiration_ts = ?, email_sent = ?, token_used_ts = ? WHERE renewal_token_hash = ?`, [expirationTs, false, now, tokenHash]);
  }
}
