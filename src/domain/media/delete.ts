// Removing media: its content and thumbnails in the buckets first (one that cannot be reached fails the
// delete, 502, and leaves the media as it was), then the row (it stops being served at once), then the
// files on local disk. Used by the admin API and by media_retention.
import type { Services } from "../services.ts";
import type { MediaRef } from "./ids.ts";

export async function deleteMedia(s: Services, ref: MediaRef): Promise<void> {
  const { storage } = s.media;
  if (storage.hasRemote) await storage.removeRemote(ref);
  await s.media.store.delete(ref);
  await storage.removeLocal(ref);
}
