// From a provider's claims to a Matrix account (Synapse's JinjaOidcMappingProvider and SSO handler): the
// subject claim names the external id; an unknown subject gets a new account whose localpart comes from
// localpart_template (made a valid localpart; a taken one gets a number appended, as Synapse), or, with
// allow_existing_users, the existing account of that localpart. Spec: Client-Server API "Single Sign-On".
import { MatrixError } from "../errors.js";
import { renderTemplate } from "./templates.js";
import { checkUsername } from "../accounts/usernames.js";
import { createAccount } from "../accounts/register.js";
/** Synapse's map_username_to_mxid_localpart: lower case, and every other character escaped as =xx. */
export function toLocalpart(name) {
    let out = "";
    for (const byte of Buffer.from(name.toLowerCase(), "utf8")) {
        const c = String.fromCharCode(byte);
        out += /[a-z0-9._\-/+]/.test(c) ? c : `=${byte.toString(16).padStart(2, "0")}`;
    }
    return out.replace(/^_/, "=5f");
}
export function subjectOf(p, claims) {
    const sub = claims[p.user_mapping_provider.subject_claim];
    if (typeof sub === "string" && sub.length > 0)
        return sub;
    if (typeof sub === "number")
        return String(sub);
    throw new MatrixError("M_FORBIDDEN", `The identity provider gave no "${p.user_mapping_provider.subject_claim}" claim`, 403);
}
/** The account this subject signs in to, linking or creating it when the subject is new. */
export async function userForClaims(s, p, claims) {
    const subject = subjectOf(p, claims);
    const known = await s.sso.store.userForExternalId(p.idp_id, subject);
    if (known)
        return known;
    const rendered = renderTemplate(p.user_mapping_provider.localpart_template, claims).trim();
    if (rendered.length === 0)
        throw new MatrixError("M_FORBIDDEN", "The identity provider gave no claim to make a username from", 403);
    const base = toLocalpart(rendered);
    if (p.allow_existing_users) {
        const existing = `@${base}:${s.config.server_name}`;
        if (await s.users.exists(existing)) {
            await s.sso.store.linkExternalId(p.idp_id, subject, existing);
            return existing;
        }
    }
    const display = p.user_mapping_provider.display_name_template
        ? renderTemplate(p.user_mapping_provider.display_name_template, claims).trim() || undefined
        : undefined;
    for (let attempt = 0; attempt < 1000; attempt++) {
        const localpart = attempt === 0 ? base : `${base}${attempt}`;
        let userId;
        try {
            userId = await checkUsername(s, localpart);
        }
        catch (err) {
            if (err instanceof MatrixError && err.errcode === "M_USER_IN_USE")
                continue;
            throw new MatrixError("M_FORBIDDEN", `The username "${localpart}" made from the provider's claims is not valid: ${err instanceof Error ? err.message : String(err)}`, 403);
        }
        try {
            await createAccount(s, { inhibit_login: true }, { userId, passwordHash: null, displayname: display });
        }
        catch (err) {
            if (err instanceof MatrixError && err.errcode === "M_USER_IN_USE")
                continue; // taken meanwhile
            throw err;
        }
        await s.sso.store.linkExternalId(p.idp_id, subject, userId);
        s.log.info({ userId, idp: p.idp_id }, "registered a user through single sign-on");
        return userId;
    }
    throw new MatrixError("M_FORBIDDEN", "No free username could be made from the provider's claims", 403);
}
