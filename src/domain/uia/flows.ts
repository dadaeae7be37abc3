// Which UIA flows re-authenticate a signed-in user (Synapse's _get_available_ui_auth_types): their password
// when they have one and password login is on, single sign-on when a configured provider knows them.
// Spec: Client-Server API "User-Interactive Authentication API", "SSO during User-Interactive Authentication".
import type { Services } from "../services.ts";
import { providerForUser } from "../sso/flow.ts";

export async function reauthFlows(s: Services, userId: string): Promise<string[][]> {
  const flows: string[][] = [];
  const pw = s.config.password_config;
  if (pw.enabled && pw.localdb_enabled && (await s.users.get(userId))?.passwordHash) flows.push(["m.login.password"]);
  if (s.sso.enabled && (await providerForUser(s, userId)) !== undefined) flows.push(["m.login.sso"]);
  // A user with neither is offered the password stage, which they cannot pass (as before SSO existed).
  return flows.length ? flows : [["m.login.password"]];
}
