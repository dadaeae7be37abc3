// The check of `worker_replication_secret` on an internal request: the bearer it carries against the
// configured secret, compared in constant time (both hashed first, so neither length shows either).
// Spec: none (process architecture; Synapse's replication listener checks the same bearer).
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** Whether an Authorization header value is `Bearer <secret>` (false when no secret is configured). */
export function carriesSecret(secret: string | undefined, authorization: string | string[] | undefined): boolean {
  if (!secret || typeof authorization !== "string") return false;
  const m = /^Bearer (.+)$/i.exec(authorization);
  return m !== null && timingSafeEqual(digest(m[1]!), digest(secret));
}
