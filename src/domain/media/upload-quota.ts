// Per-user upload quotas (Synapse's `media_upload_limits`: at most `max_size` bytes uploaded by one user
// within each `time_period`). An upload that would pass one is refused as Synapse does: 403 with spec
// v1.18's M_USER_LIMIT_EXCEEDED (MSC4335: a limit of the user's account), the limit's `info_uri` (or the
// server's own page about it, UPLOAD_LIMIT_PAGE) and `can_upgrade` when the limit says so. Checked on the
// size announced before the body is read, and on the size received once it is.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";

/** The page about upload limits this server serves (Synapse's path), for limits without an info_uri. */
export const UPLOAD_LIMIT_PAGE = "/_synapse/client/media_upload_limit_exceeded";

/** Throws M_USER_LIMIT_EXCEEDED when `bytes` more from `userId` would pass one of the quotas. */
export async function checkUploadQuota(s: Services, userId: string, bytes: number): Promise<void> {
  const limits = s.config.media_upload_limits;
  if (limits.length === 0) return;
  const now = s.clock.now();
  // Longest period first: its total bounds the shorter ones', so one read answers when it is well below.
  let uploaded: number | undefined;
  for (const limit of limits) {
    if (uploaded === undefined || uploaded + bytes > limit.max_bytes) uploaded = await s.media.store.uploadedSince(userId, now - limit.time_period_ms);
    if (uploaded + bytes > limit.max_bytes) {
      const info = limit.info_uri ?? s.config.public_baseurl + UPLOAD_LIMIT_PAGE.slice(1);
      throw new MatrixError("M_USER_LIMIT_EXCEEDED", "Media upload limit exceeded", 403, { info_uri: info, ...(limit.can_upgrade ? { can_upgrade: true } : {}) });
    }
  }
}
