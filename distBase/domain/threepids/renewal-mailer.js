import { renewalMail } from "./mail-templates.js";
export const emailRenewalMailer = async (s, userId, expirationTs, link) => {
    if (!s.mailer)
        return false;
    const addresses = (await s.threepids.ofUser(userId)).filter((t) => t.medium === "email").map((t) => t.address);
    if (addresses.length === 0)
        return false;
    const displayName = (await s.users.getProfile(userId))?.displayname ?? userId;
    const url = await link();
    for (const to of addresses)
        await s.mailer.send(renewalMail(s, to, displayName, expirationTs, url));
    return true;
};
