// Repository of single sign-on data: the external ids linking a provider's subject to a user
// (user_external_ids) and the attempts waiting for their callback (sso_sessions, keyed by hashed state).
import type { Db } from "../../storage/database.ts";

export interface SsoSessionRow {
  stateHash: string;
  idpId: string;
  nonce: string;
  codeVerifier: string | null;
  clientRedirectUrl: string | null;
  uiaSessionId: string | null;
  createdTs: number;
}

export class SsoStore {
  constructor(private readonly db: Db) {}

  async userForExternalId(authProvider: string, externalId: string): Promise<string | null> {
    const r = await this.db.userExternalId.findUnique({ where: { authProvider_externalId: { authProvider, externalId } } });
    return r?.userId ?? null;
  }

  async providersOfUser(userId: string): Promise<string[]> {
    return (await this.db.userExternalId.findMany({ where: { userId }, select: { authProvider: true } })).map((r) => r.authProvider);
  }

  async externalIdsOfUser(userId: string): Promise<{ authProvider: string; externalId: string }[]> {
    return this.db.userExternalId.findMany({ where: { userId }, select: { authProvider: true, externalId: true }, orderBy: [{ authProvider: "asc" }, { externalId: "asc" }] });
  }

  async unlinkExternalId(authProvider: string, externalId: string, userId: string): Promise<void> {
    await this.db.userExternalId.deleteMany({ where: { authProvider, externalId, userId } });
  }

  async linkExternalId(authProvider: string, externalId: string, userId: string): Promise<void> {
    await this.db.userExternalId.create({ data: { authProvider, externalId, userId } });
  }

  async createSession(row: SsoSessionRow): Promise<void> {
    await this.db.ssoSession.create({ data: { ...row, createdTs: BigInt(row.createdTs) } });
  }

  /** Deletes and returns the attempt: a state serves one callback. */
  async takeSession(stateHash: string): Promise<SsoSessionRow | null> {
    const r = await this.db.ssoSession.findUnique({ where: { stateHash } });
    if (!r) return null;
    const { count } = await this.db.ssoSession.deleteMany({ where: { stateHash } });
    if (count === 0) return null; // a concurrent callback took it first
    return { ...r, createdTs: Number(r.createdTs) };
  }

  async deleteSessionsBefore(ts: number): Promise<void> {
    await this.db.ssoSession.deleteMany({ where: { createdTs: { lt: BigInt(ts) } } });
  }
}
