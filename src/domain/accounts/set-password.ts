// Storing a user's new password hash, wherever it is changed (POST /account/password, the e-mail reset,
// the admin API, the account management page): the hash is written and the user's sign-ins on the OAuth
// pages (their browser sessions) end — as Synapse ends sessions and MAS its browser sessions on a password
// change — except the page sign-in that made the change, which stays.
import type { Services } from "../services.ts";
import { hashToken } from "./tokens.ts";

export async function storeNewPassword(s: Services, userId: string, hash: string, keepBrowserSession?: string): Promise<void> {
  await s.db.$transaction((tx) => s.users.setPasswordHash(tx, userId, hash));
  await s.oauth.deleteBrowserSessionsOfUser(userId, keepBrowserSession === undefined ? undefined : hashToken(keepBrowserSession));
}
