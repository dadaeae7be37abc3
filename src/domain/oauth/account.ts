// Account management in the browser (spec v1.18 "Account management", the account_management_uri of the
// server metadata): the signed-in user's profile and devices, signing a device out (as DELETE /devices
// does, without UIA: the user has just signed in on the page), deactivating the account (the password
// asked again), and approving a cross-signing reset — the
// `m.oauth` UIA type (spec v1.17, MSC4312): once approved, for oauth_server.cross_signing_reset_window,
// POST /keys/device_signing/upload replaces the keys without asking (as Synapse's
// `_allow_cross_signing_replacement_without_uia`, which the Matrix Authentication Service calls).
import { MatrixError, notFound } from "../errors.ts";
import { newPasswordOf } from "../accounts/change-password.ts";
import { storeNewPassword } from "../accounts/set-password.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { listDevices, type ClientDevice } from "../devices/device-info.ts";
import { getProfileField } from "../profile/profile.ts";
import { deleteDevices } from "../devices/delete-devices.ts";
import { checkPasswordLogin } from "../accounts/password-login.ts";
import { deactivateAccount } from "../accounts/deactivate.ts";
import { oauthServerEnabled, oauthUrl } from "./endpoints.ts";

export const ACCOUNT_ACTIONS = ["org.matrix.profile", "org.matrix.devices_list", "org.matrix.device_view", "org.matrix.device_delete", "org.matrix.account_deactivate", "org.matrix.cross_signing_reset"] as const;

const pageRequester = (userId: string): Requester => ({ userId, deviceId: null, isGuest: false, isAdmin: false, accessTokenId: null });

export interface AccountOverview {
  userId: string;
  displayName: string | undefined;
  devices: ClientDevice[];
}

export async function accountOverview(s: Services, userId: string): Promise<AccountOverview> {
  const r = pageRequester(userId);
  const displayName = await getProfileField(s, r, userId, "displayname").catch(() => undefined);
  return { userId, displayName: typeof displayName === "string" ? displayName : undefined, devices: await listDevices(s, r) };
}

/** Signs one of the user's devices out (its tokens, keys and OAuth grant go with it). */
export async function signOutDevice(s: Services, userId: string, deviceId: string): Promise<void> {
  if (!(await s.sessions.getDevice(userId, deviceId))) throw notFound("No such device");
  await deleteDevices(s, userId, [deviceId]);
}

/** Deactivates the account (as POST /account/deactivate), after the password is given again. */
export async function deactivateFromAccountPage(s: Services, userId: string, password: string, clientIp: string): Promise<void> {
  await checkPasswordLogin(s, userId, password, clientIp);
  await deactivateAccount(s, userId, false);
}

/**
 * Changes the password on the account page: the current one asked again, the new one twice and by the
 * password policy. The user's other page sign-ins end (storeNewPassword); this one and the devices stay.
 */
export async function changePasswordFromAccountPage(s: Services, userId: string, form: { current: string; next: string; confirm: string }, sessionSecret: string, clientIp: string): Promise<void> {
  await checkPasswordLogin(s, userId, form.current, clientIp);
  if (form.next !== form.confirm) throw new MatrixError("M_INVALID_PARAM", "The new passwords differ", 400);
  const { hash } = await newPasswordOf(s, { new_password: form.next });
  await storeNewPassword(s, userId, hash, sessionSecret);
}

export async function approveCrossSigningReset(s: Services, userId: string): Promise<void> {
  await s.oauth.approveCrossSigningReset(userId, s.clock.now() + s.config.oauth_server.cross_signing_reset_window);
}

/** Whether the user approved a cross-signing reset that is still open. */
export async function crossSigningResetApproved(s: Services, userId: string): Promise<boolean> {
  if (!oauthServerEnabled(s)) return false;
  const until = await s.oauth.crossSigningResetApprovedUntil(userId);
  return until !== undefined && until > s.clock.now();
}

/** The account management URL, with an action (and its device), and the UIA session the page is to approve (m.oauth). */
export function accountUrl(s: Services, action?: string, deviceId?: string, uiaSession?: string): string {
  const u = new URL(oauthUrl(s, "account"));
  if (action) u.searchParams.set("action", action);
  if (deviceId) u.searchParams.set("device_id", deviceId);
  if (uiaSession) u.searchParams.set("uia_session", uiaSession);
  return u.href;
}
