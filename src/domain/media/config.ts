// GET /_matrix/client/v1/media/config (and the legacy /_matrix/media/v3/config): the content
// repository's public configuration. Spec: Client-Server API "Content repository", media config.
import type { Services } from "../services.ts";

export function mediaConfig(s: Services): { "m.upload.size": number } {
  return { "m.upload.size": s.config.max_upload_size };
}
