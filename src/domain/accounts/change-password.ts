// POST /account/password: re-authenticate (UIA m.login.password), apply the password policy, store the
// new hash and, unless logout_devices is false, end every other session. Spec: "Password management".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { checkPasswordPolicy, hashPassword } from "./passwords.ts";
import { deleteDevices } from "../devices/delete-devices.ts";
import { invalidateUserTokens } from "./authenticate.ts";
import { reauthUia } from "../uia/flows.ts";
import { storeNewPassword } from "./set-password.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

/** The body of a password change or reset: `new_password` checked against the policy and hashed, `logout_devices`. */
export async function newPasswordOf(s: Services, body: Record<string, unknown>): Promise<{ hash: string; logoutDevices: boolean | undefined }> {
  if (!s.config.password_config.enabled) throw new MatrixError("M_FORBIDDEN", "Password changes are disabled", 403);
  const { new_password: pw, logout_devices: logoutDevices } = body;
  if (pw === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing new_password", 400);
  if (typeof pw !== "string") throw new MatrixError("M_BAD_JSON", "new_password must be a string");
  if (logoutDevices !== undefined && typeof logoutDevices !== "boolean") throw new MatrixError("M_BAD_JSON", "logout_devices must be a boolean");
  checkPasswordPolicy(pw, s.config.password_config.policy);
  return { hash: await hashPassword(pw, s.config.password_config.scrypt_log_n), logoutDevices };
}

export async function changePassword(s: Services, r: Requester, req: UiaRequest): Promise<void> {
  refuseWhenDelegated(s);
  if (r.isGuest) throw new MatrixError("M_GUEST_ACCESS_FORBIDDEN", "Guests cannot change a password", 403);
  // Hashed before the (slow) re-authentication finishes: the clear password is held no longer than needed.
  const { hash, logoutDevices } = await newPasswordOf(s, req.body);

  const uia = await checkUia(s, { ...req, requester: r }, await reauthUia(s, r, { description: "change your password" }));
  await storeNewPassword(s, r.userId, hash);
  if (logoutDevices !== false) {
    const others = (await s.sessions.deviceIds(r.userId)).filter((d) => d !== r.deviceId);
    await deleteDevices(s, r.userId, others);
    await s.db.$transaction(async (tx) => {
      await s.sessions.deleteAccessTokensOfUser(tx, r.userId, r.accessTokenId ?? undefined);
      await s.sessions.deleteRefreshTokensOfUser(tx, r.userId, r.deviceId ?? undefined);
    });
    await invalidateUserTokens(s, r.userId);
  }
  await finishUia(s, uia);
}
