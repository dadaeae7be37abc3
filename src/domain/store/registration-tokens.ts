// Repository of registration tokens (registration_tokens): validity, pending and completed uses.
import type { Db, Tx } from "../../storage/database.ts";

export interface RegistrationTokenRow {
  token: string;
  usesAllowed: number | null;
  pending: number;
  completed: number;
  expiryTime: number | null;
}

const toRow = (r: { token: string; usesAllowed: number | null; pending: number; completed: number; expiryTime: bigint | null }): RegistrationTokenRow => ({
  ...r,
  expiryTime: r.expiryTime === null ? null : Number(r.expiryTime),
});

export class RegistrationTokenStore {
  constructor(private readonly db: Db) {}

  async get(token: string): Promise<RegistrationTokenRow | null> {
    const r = await this.db.registrationToken.findFirst({ where: { token } });
    return r && toRow(r);
  }

  async list(): Promise<RegistrationTokenRow[]> {
    return (await this.db.registrationToken.findMany({ orderBy: { token: "asc" } })).map(toRow);
  }

  async create(t: { token: string; usesAllowed: number | null; expiryTime: number | null }): Promise<RegistrationTokenRow> {
    return toRow(
      await this.db.registrationToken.create({
        data: { token: t.token, usesAllowed: t.usesAllowed, expiryTime: t.expiryTime === null ? null : BigInt(t.expiryTime) },
      }),
    );
  }

  async update(token: string, patch: { usesAllowed?: number | null; expiryTime?: number | null }): Promise<RegistrationTokenRow | null> {
    const data: { usesAllowed?: number | null; expiryTime?: bigint | null } = {};
    if (patch.usesAllowed !== undefined) data.usesAllowed = patch.usesAllowed;
    if (patch.expiryTime !== undefined) data.expiryTime = patch.expiryTime === null ? null : BigInt(patch.expiryTime);
    const r = await this.db.registrationToken.updateMany({ where: { token }, data });
    return r.count ? this.get(token) : null;
  }

  async delete(token: string): Promise<boolean> {
    return (await this.db.registrationToken.deleteMany({ where: { token } })).count > 0;
  }

  /** A token is usable while unexpired and its pending plus completed uses are below uses_allowed. */
  static isValid(t: RegistrationTokenRow | null, now: number): boolean {
    if (!t) return false;
    if (t.expiryTime !== null && t.expiryTime <= now) return false;
    if (t.usesAllowed !== null && t.pending + t.completed >= t.usesAllowed) return false;
    return true;
  }

  async addPending(token: string): Promise<void> {
    await this.db.registrationToken.update({ where: { token }, data: { pending: { increment: 1 } } });
  }

  /** A registration that passed the token stage finished: its pending use becomes a completed one. */
  async completeUse(tx: Db | Tx, token: string): Promise<void> {
    await tx.registrationToken.updateMany({ where: { token }, data: { pending: { decrement: 1 }, completed: { increment: 1 } } });
  }
}
