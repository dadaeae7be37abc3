// The UIA stages Weft offers: m.login.dummy, m.login.password (re-authentication of the requester),
// m.login.registration_token, m.login.email.identity, m.login.sso (completed only through its fallback page and the provider:
// sso/flow.ts) and m.oauth (completed only on the account management page: oauth-approval.ts). Each returns what it proved, stored with the session.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { UiaSessionRow } from "../store/uia.ts";
import { RegistrationTokenStore } from "../store/registration-tokens.ts";
import { resolveLoginUser } from "../accounts/identifiers.ts";
import { checkPasswordLogin } from "../accounts/password-login.ts";
import { provenThreepid } from "../threepids/email-validation.ts";

export interface StageContext {
  s: Services;
  requester?: Requester;
  session: UiaSessionRow;
  clientIp: string;
}

/** A stage's answer that ends the request with 403 instead of a 401 asking to try again. */
export class UiaRefused extends MatrixError {
  constructor(message: string) {
    super("M_FORBIDDEN", message, 403);
  }
}

export type Stage = (ctx: StageContext, auth: Record<string, unknown>) => Promise<unknown>;

export const STAGES: Record<string, Stage> = {
  "m.login.dummy": async () => true,

  "m.login.password": async ({ s, requester, clientIp }, auth) => {
    if (typeof auth.password !== "string") throw new MatrixError("M_MISSING_PARAM", "Missing password", 400);
    const userId = resolveLoginUser(s, auth);
    await checkPasswordLogin(s, userId, auth.password, clientIp);
    // Another user's valid credentials: not a stage to retry but a refusal (403, as Synapse).
    if (requester && userId !== requester.userId) throw new UiaRefused("Requested user ID does not match the authenticated user");
    return userId;
  },

  // Completed by the SSO callback, never by the auth dict itself: asking for it here means "not yet".
  "m.login.sso": async () => {
    throw new MatrixError("M_UNAUTHORIZED", "Complete single sign-on through the fallback page first", 401);
  },

  // Completed on the account management page (uia/oauth-approval.ts), never by the auth dict itself.
  "m.oauth": async () => {
    throw new MatrixError("M_UNAUTHORIZED", "Approve this request on your account page first", 401);
  },

  // A validated e-mail session (threepids/email-validation.ts): registration with an address, password reset.
  "m.login.email.identity": async ({ s }, auth) => {
    const creds = auth.threepid_creds ?? auth.threepidCreds;
    const proven = await provenThreepid(s, creds);
    return { medium: proven.medium, address: proven.address, validated_at: proven.validatedAt, sid: proven.sessionId };
  },

  "m.login.registration_token": async ({ s }, auth) => {
    if (typeof auth.token !== "string") throw new MatrixError("M_MISSING_PARAM", "Missing registration token", 400);
    const token = await s.registrationTokens.get(auth.token);
    if (!RegistrationTokenStore.isValid(token, s.clock.now()))
      throw new MatrixError("M_UNAUTHORIZED", "Invalid registration token", 401);
    await s.registrationTokens.addPending(auth.token);
    return auth.token;
  },
};
