// Repository of content reports (content_reports): reports of events and of whole rooms sent by users,
// read by server admins. A cold path: Prisma.
import type { Db } from "../../storage/database.ts";

export interface ReportRow {
  id: number;
  receivedTs: number;
  roomId: string;
  eventId: string | null;
  userId: string;
  reason: string | null;
  score: number | null;
}

export interface ReportQuery {
  /** true: event reports only; false: room reports only. */
  events: boolean;
  roomId?: string;
  userId?: string;
  /** Newest first (b) or oldest first (f). */
  dir: "b" | "f";
  offset: number;
  limit: number;
}

export class ReportStore {
  constructor(private readonly db: Db) {}

  async add(r: Omit<ReportRow, "id">): Promise<number> {
    const row = await this.db.contentReport.create({
      data: { receivedTs: BigInt(r.receivedTs), roomId: r.roomId, eventId: r.eventId, userId: r.userId, reason: r.reason, score: r.score },
    });
    return row.id;
  }

  /** Records a report of a local user (MSC4260); returns its id. */
  async addUserReport(r: { receivedTs: number; targetUserId: string; userId: string; reason: string }): Promise<number> {
    const row = await this.db.userReport.create({ data: { receivedTs: BigInt(r.receivedTs), targetUserId: r.targetUserId, userId: r.userId, reason: r.reason } });
    return row.id;
  }

  async list(q: ReportQuery): Promise<{ reports: ReportRow[]; total: number }> {
    const where = {
      eventId: q.events ? { not: null } : null,
      ...(q.roomId !== undefined ? { roomId: q.roomId } : {}),
      ...(q.userId !== undefined ? { userId: q.userId } : {}),
    };
    const [rows, total] = await Promise.all([
      this.db.contentReport.findMany({ where, orderBy: [{ receivedTs: q.dir === "b" ? "desc" : "asc" }, { id: q.dir === "b" ? "desc" : "asc" }], skip: q.offset, take: q.limit }),
      this.db.contentReport.count({ where }),
    ]);
    return {
      total,
      reports: rows.map((x) => ({ id: x.id, receivedTs: Number(x.receivedTs), roomId: x.roomId, eventId: x.eventId, userId: x.userId, reason: x.reason, score: x.score })),
    };
  }
}
