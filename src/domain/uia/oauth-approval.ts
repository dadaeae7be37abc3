// The `m.oauth` UIA stage's completion (spec v1.17 "OAuth authentication", MSC4312): the account
// management page, opened at the URL of the 401's params (uia/flows.ts), shows the signed-in user what
// their app asked for (the UIA session's description) and, once they approve — with their password again
// when they have one, as the m.login.password stage would ask — marks the stage completed on that session,
// so the client's retried request passes. Only the user who started the session may approve it.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { checkPasswordLogin } from "../accounts/password-login.ts";

/** A UIA session's lifetime (uia.ts refuses an older one too). */
const SESSION_LIFETIME_MS = 24 * 3_600_000;

export interface PendingApproval {
  sessionId: string;
  description: string;
  /** Whether the page asks for the password again (the user has one and password login is on). */
  needsPassword: boolean;
}

/** The UIA session `sessionId` as `userId` may approve it, or an error for the page. */
export async function pendingUiaApproval(s: Services, userId: string, sessionId: string): Promise<PendingApproval> {
  const session = await s.uia.get(sessionId);
  if (!session || s.clock.now() - session.createdTs > SESSION_LIFETIME_MS || session.serverData.request_user_id !== userId)
    throw new MatrixError("invalid_request", "This request has expired or is not yours: start again in your app", 400);
  const pw = s.config.password_config;
  const needsPassword = pw.enabled && pw.localdb_enabled && Boolean((await s.users.get(userId))?.passwordHash);
  return { sessionId, description: session.description, needsPassword };
}

/** Approves the session (the password checked when asked): the stage is completed for the client's retry. */
export async function approveUiaSession(s: Services, userId: string, pending: PendingApproval, password: string, clientIp: string): Promise<void> {
  if (pending.needsPassword) await checkPasswordLogin(s, userId, password, clientIp);
  await s.uia.markStageCompleted(pending.sessionId, "m.oauth", { user_id: userId, approved_ts: s.clock.now() });
}
