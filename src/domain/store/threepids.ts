// Repository of third-party identifiers: the addresses of accounts (user_threepids), the identity servers
// they were bound on (user_threepid_id_server) and e-mail validation sessions (threepid_validation_sessions).
import type { Db } from "../../storage/database.ts";
import type { Tx } from "../../storage/database.ts";

type Client = Db | Tx;

export interface ThreepidRow {
  medium: string;
  address: string;
  userId: string;
  validatedAt: number;
  addedAt: number;
}

export interface ValidationSessionRow {
  sessionId: string;
  medium: string;
  address: string;
  clientSecretHash: string;
  purpose: string;
  lastSendAttempt: number;
  tokenHash: string | null;
  tokenExpiryTs: number;
  nextLink: string | null;
  validatedAt: number | null;
  createdTs: number;
}

type BigRow = Omit<ValidationSessionRow, "tokenExpiryTs" | "validatedAt" | "createdTs"> & { tokenExpiryTs: bigint; validatedAt: bigint | null; createdTs: bigint };
const toSession = (r: BigRow): ValidationSessionRow => ({
  ...r,
  tokenExpiryTs: Number(r.tokenExpiryTs),
  validatedAt: r.validatedAt === null ? null : Number(r.validatedAt),
  createdTs: Number(r.createdTs),
});

export class ThreepidStore {
  constructor(private readonly db: Db) {}

  async ofUser(userId: string): Promise<ThreepidRow[]> {
    const rows = await this.db.userThreepid.findMany({ where: { userId }, orderBy: [{ medium: "asc" }, { address: "asc" }] });
    return rows.map((r) => ({ ...r, validatedAt: Number(r.validatedAt), addedAt: Number(r.addedAt) }));
  }

  async owner(medium: string, address: string): Promise<string | null> {
    return (await this.db.userThreepid.findUnique({ where: { medium_address: { medium, address } } }))?.userId ?? null;
  }

  async add(tx: Client, row: ThreepidRow): Promise<void> {
    await tx.userThreepid.create({ data: { ...row, validatedAt: BigInt(row.validatedAt), addedAt: BigInt(row.addedAt) } });
  }

  async remove(userId: string, medium: string, address: string): Promise<boolean> {
    return (await this.db.userThreepid.deleteMany({ where: { userId, medium, address } })).count > 0;
  }

  async idServers(userId: string, medium: string, address: string): Promise<string[]> {
    return (await this.db.userThreepidIdServer.findMany({ where: { userId, medium, address } })).map((r) => r.idServer);
  }

  async recordIdServer(userId: string, medium: string, address: string, idServer: string): Promise<void> {
    const key = { userId, medium, address, idServer };
    await this.db.userThreepidIdServer.upsert({ where: { userId_medium_address_idServer: key }, create: key, update: {} });
  }

  async forgetIdServer(userId: string, medium: string, address: string, idServer: string): Promise<void> {
    await this.db.userThreepidIdServer.deleteMany({ where: { userId, medium, address, idServer } });
  }

  // Validation sessions

  async sessionFor(clientSecretHash: string, medium: string, address: string, purpose: string): Promise<ValidationSessionRow | null> {
    const r = await this.db.threepidValidationSession.findFirst({ where: { clientSecretHash, medium, address, purpose } });
    return r && toSession(r);
  }

  async session(sessionId: string): Promise<ValidationSessionRow | null> {
    const r = await this.db.threepidValidationSession.findUnique({ where: { sessionId } });
    return r && toSession(r);
  }

  async sessionByToken(tokenHash: string): Promise<ValidationSessionRow | null> {
    const r = await this.db.threepidValidationSession.findUnique({ where: { tokenHash } });
    return r && toSession(r);
  }

  async createSession(row: ValidationSessionRow): Promise<void> {
    await this.db.threepidValidationSession.create({
      data: { ...row, tokenExpiryTs: BigInt(row.tokenExpiryTs), validatedAt: row.validatedAt === null ? null : BigInt(row.validatedAt), createdTs: BigInt(row.createdTs) },
    });
  }

  async newToken(sessionId: string, tokenHash: string | null, tokenExpiryTs: number, sendAttempt: number, nextLink: string | null): Promise<void> {
    await this.db.threepidValidationSession.update({
      where: { sessionId },
      data: { tokenHash, tokenExpiryTs: BigInt(tokenExpiryTs), lastSendAttempt: sendAttempt, nextLink },
    });
  }

  /** Marks the session validated and spends its token. */
  async markValidated(sessionId: string, now: number): Promise<void> {
    await this.db.threepidValidationSession.update({ where: { sessionId }, data: { validatedAt: BigInt(now), tokenHash: null } });
  }

  /** A validated session serves one use (adding the address, one registration, one password reset). */
  async deleteSession(sessionId: string): Promise<void> {
    await this.db.threepidValidationSession.deleteMany({ where: { sessionId } });
  }

  async deleteSessionsBefore(ts: number): Promise<void> {
    await this.db.threepidValidationSession.deleteMany({ where: { createdTs: { lt: BigInt(ts) } } });
  }
}
