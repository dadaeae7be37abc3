// Repository of user-interactive auth sessions and their completed stages (uia_sessions, uia_credentials).
import type { Db } from "../../storage/database.ts";

export interface UiaSessionRow {
  sessionId: string;
  createdTs: number;
  uri: string;
  method: string;
  clientDict: Record<string, unknown>;
  serverData: Record<string, unknown>;
  description: string;
}

export class UiaStore {
  constructor(private readonly db: Db) {}

  async create(s: UiaSessionRow): Promise<void> {
    await this.db.uiaSession.create({
      data: {
        sessionId: s.sessionId,
        createdTs: BigInt(s.createdTs),
        uri: s.uri,
        method: s.method,
        clientDict: JSON.stringify(s.clientDict),
        serverData: JSON.stringify(s.serverData),
        description: s.description,
      },
    });
  }

  async get(sessionId: string): Promise<UiaSessionRow | null> {
    const r = await this.db.uiaSession.findFirst({ where: { sessionId } });
    if (!r) return null;
    return { ...r, createdTs: Number(r.createdTs), clientDict: JSON.parse(r.clientDict), serverData: JSON.parse(r.serverData) };
  }

  async setServerData(sessionId: string, serverData: Record<string, unknown>): Promise<void> {
    await this.db.uiaSession.update({ where: { sessionId }, data: { serverData: JSON.stringify(serverData) } });
  }

  async completedStages(sessionId: string): Promise<Map<string, unknown>> {
    const rows = await this.db.uiaCredential.findMany({ where: { sessionId } });
    return new Map(rows.map((r) => [r.stageType, JSON.parse(r.result)]));
  }

  async markStageCompleted(sessionId: string, stageType: string, result: unknown): Promise<void> {
    const data = JSON.stringify(result);
    await this.db.uiaCredential.upsert({
      where: { sessionId_stageType: { sessionId, stageType } },
      create: { sessionId, stageType, result: data },
      update: { result: data },
    });
  }

  async delete(sessionId: string): Promise<void> {
    await this.db.$transaction([
      this.db.uiaCredential.deleteMany({ where: { sessionId } }),
      this.db.uiaSession.deleteMany({ where: { sessionId } }),
    ]);
  }

  async deleteOlderThan(ts: number): Promise<void> {
    const old = await this.db.uiaSession.findMany({ where: { createdTs: { lt: BigInt(ts) } }, select: { sessionId: true } });
    const ids = old.map((o) => o.sessionId);
    if (ids.length === 0) return;
    await this.db.$transaction([
      this.db.uiaCredential.deleteMany({ where: { sessionId: { in: ids } } }),
      this.db.uiaSession.deleteMany({ where: { sessionId: { in: ids } } }),
    ]);
  }
}
