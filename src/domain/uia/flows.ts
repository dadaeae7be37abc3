// Which UIA flows re-authenticate a signed-in user (Synapse's _get_available_ui_auth_types): their password
// when they have one and password login is on, single sign-on when a configured provider knows them, and,
// when Weft serves the OAuth 2.0 API itself, `m.oauth` (spec v1.17, MSC4312) for a session the OAuth
// server granted or a user without a password: the user approves the request on the account management
// page (its URL, with the MSC4191 action and the UIA session, in `params`), then the client retries
// (src/domain/uia/oauth-approval.ts completes the stage).
// Spec: Client-Server API "User-Interactive Authentication API", "SSO during User-Interactive
// Authentication", "OAuth authentication".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { UiaOptions } from "./uia.ts";
import { providerForUser } from "../sso/flow.ts";
import { oauthServerEnabled } from "../oauth/endpoints.ts";
import { accountUrl } from "../oauth/account.ts";

/** What the re-authentication is for: the user reads `description`; `action` and `deviceId` name it for the account page (MSC4191). */
export interface Reauth {
  description: string;
  action?: string;
  deviceId?: string;
}

async function hasPassword(s: Services, userId: string): Promise<boolean> {
  const pw = s.config.password_config;
  return pw.enabled && pw.localdb_enabled && Boolean((await s.users.get(userId))?.passwordHash);
}

/** Whether the requester is offered m.oauth: Weft's own OAuth server granted its session, or the user has no password. */
async function offersOAuth(s: Services, r: Requester): Promise<boolean> {
  if (!oauthServerEnabled(s)) return false;
  if (r.deviceId && (await s.oauth.getGrant(r.userId, r.deviceId))) return true;
  return !(await s.users.get(r.userId))?.passwordHash;
}

/** The UIA options that re-authenticate the requester before `what`. */
export async function reauthUia(s: Services, r: Requester, what: Reauth): Promise<UiaOptions> {
  const flows: string[][] = [];
  if (await hasPassword(s, r.userId)) flows.push(["m.login.password"]);
  if (s.sso.enabled && (await providerForUser(s, r.userId)) !== undefined) flows.push(["m.login.sso"]);
  if (await offersOAuth(s, r)) {
    return {
      flows: [["m.oauth"], ...flows],
      description: what.description,
      params: (session) => ({ "m.oauth": { url: accountUrl(s, what.action, what.deviceId, session) } }),
    };
  }
  // A user with none is offered the password stage, which they cannot pass (as before SSO existed).
  return { flows: flows.length ? flows : [["m.login.password"]], description: what.description };
}
