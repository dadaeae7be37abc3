// Repository of the media repository's rows (media, media_thumbnails, url_previews): local uploads and
// cached remote media, their generated thumbnails, and URL preview results. A cold path: Prisma, but for
// the retention job's sweeps (raw SQL), which run at start-up and hourly in a server that may be idle.
import type { Db } from "../../storage/database.ts";
import type { Sql } from "../../storage/sql.ts";
import type { MediaRef } from "../media/ids.ts";
import type { ThumbnailKey } from "../media/files.ts";

export interface MediaRow {
  origin: string;
  mediaId: string;
  mediaType: string | null;
  uploadName: string | null;
  mediaLength: number | null;
  userId: string | null;
  createdTs: number;
  uploadedTs: number | null;
  unusedExpiresTs: number | null;
  lastAccessTs: number | null;
  quarantinedBy: string | null;
  protected: boolean;
  authenticated: boolean;
}

export interface ThumbnailRow extends ThumbnailKey {
  mediaLength: number;
}

export interface UrlPreviewRow {
  url: string;
  responseCode: number;
  og: string;
  mediaId: string | null;
  downloadTs: number;
  expiresTs: number;
}

type Raw = NonNullable<Awaited<ReturnType<Db["media"]["findUnique"]>>>;
const n = (v: bigint | null): number | null => (v === null ? null : Number(v));
const big = (v: number | null | undefined): bigint | null => (v === null || v === undefined ? null : BigInt(v));

function toRow(r: Raw): MediaRow {
  return {
    origin: r.origin,
    mediaId: r.mediaId,
    mediaType: r.mediaType,
    uploadName: r.uploadName,
    mediaLength: n(r.mediaLength),
    userId: r.userId,
    createdTs: Number(r.createdTs),
    uploadedTs: n(r.uploadedTs),
    unusedExpiresTs: n(r.unusedExpiresTs),
    lastAccessTs: n(r.lastAccessTs),
    quarantinedBy: r.quarantinedBy,
    protected: r.protected,
    authenticated: r.authenticated,
  };
}

const key = (ref: MediaRef) => ({ origin_mediaId: { origin: ref.origin, mediaId: ref.mediaId } });

export class MediaStore {
  constructor(private readonly db: Db, private readonly sql: Sql) {}

  async get(ref: MediaRef): Promise<MediaRow | null> {
    const r = await this.db.media.findFirst({ where: { origin: ref.origin, mediaId: ref.mediaId } });
    return r ? toRow(r) : null;
  }

  /** Inserts a row for content stored on disk (or reserved by /create). False if the id is taken. */
  async insert(row: Omit<MediaRow, "lastAccessTs" | "quarantinedBy" | "protected"> & { lastAccessTs?: number }): Promise<boolean> {
    try {
      await this.db.media.create({
        data: {
          origin: row.origin, mediaId: row.mediaId, mediaType: row.mediaType, uploadName: row.uploadName,
          mediaLength: big(row.mediaLength), userId: row.userId, createdTs: BigInt(row.createdTs),
          uploadedTs: big(row.uploadedTs), unusedExpiresTs: big(row.unusedExpiresTs), lastAccessTs: big(row.lastAccessTs ?? row.createdTs),
          authenticated: row.authenticated,
        },
      });
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === "P2002") return false;
      throw err;
    }
  }

  /** Fills in a /create-reserved row once its content is on disk; false if it was filled already. */
  async completePending(ref: MediaRef, f: { mediaType: string; uploadName: string | null; mediaLength: number; uploadedTs: number; authenticated: boolean }): Promise<boolean> {
    const { count } = await this.db.media.updateMany({
      where: { origin: ref.origin, mediaId: ref.mediaId, uploadedTs: null },
      data: { mediaType: f.mediaType, uploadName: f.uploadName, mediaLength: BigInt(f.mediaLength), uploadedTs: BigInt(f.uploadedTs), unusedExpiresTs: null, authenticated: f.authenticated },
    });
    return count === 1;
  }

  /** Pending (created, not uploaded, not expired) mxc URIs of a user. */
  countPending(userId: string, now: number): Promise<number> {
    return this.db.media.count({ where: { userId, uploadedTs: null, unusedExpiresTs: { gt: BigInt(now) } } });
  }

  async touch(ref: MediaRef, ts: number): Promise<void> {
    await this.db.media.updateMany({ where: { origin: ref.origin, mediaId: ref.mediaId }, data: { lastAccessTs: BigInt(ts) } });
  }

  async delete(ref: MediaRef): Promise<void> {
    await this.db.$transaction([
      this.db.mediaThumbnail.deleteMany({ where: { origin: ref.origin, mediaId: ref.mediaId } }),
      this.db.media.deleteMany({ where: { origin: ref.origin, mediaId: ref.mediaId } }),
    ]);
  }

  /** Sets or clears quarantine on the given items; protected ones are left alone. Returns how many changed. */
  async setQuarantine(refs: MediaRef[], by: string | null): Promise<number> {
    if (refs.length === 0) return 0;
    const { count } = await this.db.media.updateMany({
      where: { OR: refs.map((r) => ({ origin: r.origin, mediaId: r.mediaId })), ...(by ? { protected: false } : {}) },
      data: { quarantinedBy: by },
    });
    return count;
  }

  async setProtected(ref: MediaRef, value: boolean): Promise<boolean> {
    const { count } = await this.db.media.updateMany({ where: { origin: ref.origin, mediaId: ref.mediaId }, data: { protected: value } });
    return count === 1;
  }

  /** A local user's uploads, newest first by default (Synapse's admin API order_by created_ts). */
  async listByUser(userId: string, q: { from: number; limit: number; dir: "f" | "b" }): Promise<{ rows: MediaRow[]; total: number }> {
    const where = { userId };
    const [rows, total] = await Promise.all([
      this.db.media.findMany({ where, orderBy: [{ createdTs: q.dir === "b" ? "desc" : "asc" }, { mediaId: "asc" }], skip: q.from, take: q.limit }),
      this.db.media.count({ where }),
    ]);
    return { rows: rows.map(toRow), total };
  }

  /** Bytes a local user uploaded since `since` (ms), by the time each upload was created (as Synapse counts). */
  async uploadedSince(userId: string, since: number): Promise<number> {
    const row = await this.sql.get<{ total: number | string | bigint | null }>(
      `SELECT SUM(media_length) AS total FROM media WHERE user_id = ? AND created_ts >= ?`,
      [userId, since],
    );
    return Number(row?.total ?? 0);
  }

  async listRefsByUser(userId: string): Promise<MediaRef[]> {
    const rows = await this.db.media.findMany({ where: { userId }, select: { origin: true, mediaId: true } });
    return rows;
  }

  /** Items (of `local` media or of remote caches) not accessed since `before`, unprotected, up to `limit`. */
  async listIdle(opts: { localOrigin: string; local: boolean; before: number; limit: number }): Promise<MediaRef[]> {
    return this.refs(
      `SELECT origin, media_id FROM media WHERE origin ${opts.local ? "=" : "<>"} ? AND last_access_ts < ? AND protected = ? AND uploaded_ts IS NOT NULL LIMIT ?`,
      [opts.localOrigin, opts.before, false, opts.limit],
    );
  }

  /** /create reservations whose time ran out. */
  listExpiredPending(now: number, limit: number): Promise<MediaRef[]> {
    return this.refs(`SELECT origin, media_id FROM media WHERE uploaded_ts IS NULL AND unused_expires_ts < ? LIMIT ?`, [now, limit]);
  }

  private async refs(sql: string, params: (string | number | boolean)[]): Promise<MediaRef[]> {
    const rows = await this.sql.all<{ origin: string; media_id: string }>(sql, params);
    return rows.map((r) => ({ origin: r.origin, mediaId: r.media_id }));
  }

  // Thumbnails

  async thumbnails(ref: MediaRef): Promise<ThumbnailRow[]> {
    const rows = await this.db.mediaThumbnail.findMany({ where: { origin: ref.origin, mediaId: ref.mediaId } });
    return rows.map((t) => ({ width: t.width, height: t.height, method: t.method, mediaType: t.mediaType, animated: t.animated, mediaLength: Number(t.mediaLength) }));
  }

  async addThumbnail(ref: MediaRef, t: ThumbnailRow): Promise<void> {
    const id = { origin: ref.origin, mediaId: ref.mediaId, width: t.width, height: t.height, method: t.method, mediaType: t.mediaType, animated: t.animated };
    await this.db.mediaThumbnail.upsert({
      where: { origin_mediaId_width_height_method_mediaType_animated: id },
      create: { ...id, mediaLength: BigInt(t.mediaLength) },
      update: { mediaLength: BigInt(t.mediaLength) },
    });
  }

  // URL previews

  /** The newest preview of `url` fetched at or before `ts`, else the oldest one after it (Synapse). */
  async urlPreview(url: string, ts: number): Promise<UrlPreviewRow | null> {
    const r =
      (await this.db.urlPreview.findFirst({ where: { url, downloadTs: { lte: BigInt(ts) } }, orderBy: { downloadTs: "desc" } })) ??
      (await this.db.urlPreview.findFirst({ where: { url }, orderBy: { downloadTs: "asc" } }));
    return r ? { url: r.url, responseCode: r.responseCode, og: r.og, mediaId: r.mediaId, downloadTs: Number(r.downloadTs), expiresTs: Number(r.expiresTs) } : null;
  }

  async addUrlPreview(p: UrlPreviewRow): Promise<void> {
    await this.db.urlPreview.create({ data: { ...p, downloadTs: BigInt(p.downloadTs), expiresTs: BigInt(p.expiresTs) } });
  }

  /** Drops previews that expired before `before`; returns the og:image media ids they held. */
  async dropExpiredUrlPreviews(before: number): Promise<string[]> {
    const rows = await this.sql.all<{ id: number | string; media_id: string | null }>(`SELECT id, media_id FROM url_previews WHERE expires_ts < ?`, [before]);
    if (rows.length === 0) return [];
    const ids = rows.map((r) => Number(r.id));
    await this.sql.run(`DELETE FROM url_previews WHERE id IN (${ids.map(() => "?").join(", ")})`, ids);
    return rows.flatMap((r) => (r.media_id ? [r.media_id] : []));
  }
}
