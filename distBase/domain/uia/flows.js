import { providerForUser } from "../sso/flow.js";
export async function reauthFlows(s, userId) {
    const flows = [];
    const pw = s.config.password_config;
    if (pw.enabled && pw.localdb_enabled && (await s.users.get(userId))?.passwordHash)
        flows.push(["m.login.password"]);
    if (s.sso.enabled && (await providerForUser(s, userId)) !== undefined)
        flows.push(["m.login.sso"]);
    // A user with neither is offered the password stage, which they cannot pass (as before SSO existed).
    return flows.length ? flows : [["m.login.password"]];
}
