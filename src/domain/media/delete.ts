// Removing media: the row first (it stops being served at once), then its content and thumbnails on
// disk. Used by the admin API and by media_retention.
import type { Services } from "../services.ts";
import type { MediaRef } from "./ids.ts";

export async function deleteMedia(s: Services, ref: MediaRef): Promise<void> {
  await s.media.store.delete(ref);
  await s.media.files.remove(ref);
}
