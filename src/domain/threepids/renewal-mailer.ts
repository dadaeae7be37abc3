// The account renewal link by e-mail (Synapse's account_validity renewal mails): sent to every e-mail
// address bound to the account, through the `email` section's SMTP server. Declared in src/main.ts
// (`renewalMailers`); an account without an address gets none (an admin renews it).
import type { RenewalMailer } from "../accounts/account-validity.ts";
import { renewalMail } from "./mail-templates.ts";

export const emailRenewalMailer: RenewalMailer = async (s, userId, expirationTs, link) => {
  if (!s.mailer) return false;
  const addresses = (await s.threepids.ofUser(userId)).filter((t) => t.medium === "email").map((t) => t.address);
  if (addresses.length === 0) return false;
  const displayName = (await s.users.getProfile(userId))?.displayname ?? userId;
  const url = await link();
  for (const to of addresses) await s.mailer.send(renewalMail(s, to, displayName, expirationTs, url));
  return true;
};
