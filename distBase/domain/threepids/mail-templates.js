const escapeHtml = (v) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
function subject(template, s) {
    return template.replace("%(server_name)s", s.config.server_name).replace("%(app)s", s.config.email.app_name);
}
export function validationMail(s, purpose, to, link) {
    const subjects = s.config.email.subjects;
    const what = purpose === "password"
        ? `A password reset was requested for your account on ${s.config.server_name}. To reset your password, follow this link:`
        : purpose === "register"
            ? `You asked to register an account on ${s.config.server_name} with this e-mail address. To confirm it is yours, follow this link:`
            : `You asked to add this e-mail address to your account on ${s.config.server_name}. To confirm it is yours, follow this link:`;
    const ignore = "If you did not ask for this, you can ignore this e-mail: nothing changes.";
    return {
        to,
        subject: subject(purpose === "password" ? subjects.password_reset : subjects.email_validation, s),
        text: `${what}\n\n${link}\n\n${ignore}\n`,
        html: `<p>${escapeHtml(what)}</p><p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>${escapeHtml(ignore)}</p>`,
    };
}
/** The account renewal mail (account_validity.renew_email_subject; Synapse's template variables). */
export function renewalMail(s, to, displayName, expirationTs, link) {
    const when = new Date(expirationTs).toUTCString();
    const what = `Hi ${displayName}, your account on ${s.config.server_name} expires on ${when}. To keep using it, renew it by following this link:`;
    const ignore = "If your account expires, you can still renew it with this link.";
    return {
        to,
        subject: subject(s.config.account_validity.renew_email_subject, s),
        text: `${what}\n\n${link}\n\n${ignore}\n`,
        html: `<p>${escapeHtml(what)}</p><p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>${escapeHtml(ignore)}</p>`,
    };
}
