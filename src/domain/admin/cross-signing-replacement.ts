// POST /_synapse/admin/v1/users/{userId}/_allow_cross_signing_replacement_without_uia (Synapse's admin
// API, meant for the authorization server of delegated authentication, MSC3861): for ten minutes the
// user may replace their master cross-signing key without user-interactive authentication, which a
// delegating server cannot run (src/domain/e2ee/cross-signing.ts asks for it).
import { notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { requireAdmin } from "./require-admin.ts";

/** Synapse's REPLACEMENT_PERIOD_MS. */
export const REPLACEMENT_PERIOD_MS = 10 * 60_000;

export async function allowCrossSigningReplacement(s: Services, r: Requester, userId: string): Promise<{ updatable_without_uia_before_ms: number }> {
  requireAdmin(r);
  const until = s.clock.now() + REPLACEMENT_PERIOD_MS;
  if (!(await s.e2ee.allowMasterReplacement(userId, until))) throw notFound("User has no master cross-signing key");
  return { updatable_without_uia_before_ms: until };
}
